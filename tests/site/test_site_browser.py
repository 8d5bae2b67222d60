"""The built site in a real browser: Debian's headless Chromium driven by selenium.

The site is served by http.server on localhost; nothing leaves the machine.  The
catalog page's screenshot is saved to artifacts/site/catalog.png.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from site_support import REPO, BuiltSite

from kbopt.model import Entry
from kbopt.store import Store

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path("/usr/bin/chromedriver")
ARTIFACTS = REPO / "artifacts" / "site"
WAIT_S = 30

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(
        not (CHROMIUM.exists() and CHROMEDRIVER.exists()),
        reason="needs Debian's chromium and chromium-driver "
        "(apt-get install chromium chromium-driver; .ci/run installs them)",
    ),
    pytest.mark.filterwarnings("ignore::PendingDeprecationWarning"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="kbopt-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for flag in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-dev-shm-usage",
        "--window-size=1400,1100",
        f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def _wait(driver: Any, condition: Any) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S).until(condition)


def _click(driver: Any, element: Any) -> None:
    """Click as a reader would, after scrolling the element to the middle of the window
    (Furo's sticky header or back-to-top button may cover an element at the edge)."""
    driver.execute_script(
        "arguments[0].scrollIntoView({block: 'center', behavior: 'instant'});", element
    )
    element.click()


def _visible_rows(driver: Any) -> list[Any]:
    from selenium.webdriver.common.by import By

    rows = driver.find_elements(By.CSS_SELECTOR, "tr.kbopt-entry-row")
    return [r for r in rows if r.is_displayed()]


def test_catalog_filter_narrows_the_table(
    browser: Any, site_url: str, built_site: BuiltSite
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    entries = Store(built_site.root).entries()
    browser.get(f"{site_url}/catalog.html")
    _wait(browser, lambda d: d.find_element(By.ID, "kbopt-count").get_attribute("data-shown"))
    assert len(_visible_rows(browser)) == len(entries)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    assert browser.save_screenshot(str(ARTIFACTS / "catalog.png"))

    # The rarest kind present, so the filter must hide something.
    kinds = Counter(e.kind.value for e in entries)
    kind = min(kinds, key=lambda k: kinds[k])
    Select(browser.find_element(By.ID, "kbopt-facet-kind")).select_by_value(kind)
    rows = _visible_rows(browser)
    assert len(rows) == kinds[kind] < len(entries)
    assert {r.get_attribute("data-kind") for r in rows} == {kind}
    count = browser.find_element(By.ID, "kbopt-count").text
    assert count == f"{kinds[kind]} of {len(entries)} entries shown"
    assert browser.save_screenshot(str(ARTIFACTS / "catalog-filtered.png"))

    # A second facet narrows further: kind AND bottleneck.
    bottlenecks = Counter(b.value for e in entries if e.kind.value == kind for b in e.bottlenecks)
    bottleneck = min(bottlenecks, key=lambda b: bottlenecks[b])
    Select(browser.find_element(By.ID, "kbopt-facet-bottleneck")).select_by_value(bottleneck)
    rows = _visible_rows(browser)
    assert len(rows) == bottlenecks[bottleneck]
    assert all(bottleneck in r.get_attribute("data-bottleneck").split() for r in rows)

    _click(browser, browser.find_element(By.ID, "kbopt-facet-reset"))
    assert len(_visible_rows(browser)) == len(entries)

    # Query-string presets: the metric facet from the URL.
    metric = entries[0].triggers[0].metric if entries[0].triggers else None
    if metric:
        browser.get(f"{site_url}/catalog.html?metric={metric}")
        _wait(browser, lambda d: d.find_element(By.ID, "kbopt-count").get_attribute("data-shown"))
        want = [
            e
            for e in entries
            if metric in {t.metric for t in e.triggers} | {m.metric for m in e.affected_metrics}
        ]
        assert len(_visible_rows(browser)) == len(want)


def test_entry_page_links_to_its_interactions(
    browser: Any, site_url: str, built_site: BuiltSite
) -> None:
    from selenium.webdriver.common.by import By

    entries = Store(built_site.root).entries()
    by_name = {e.name: e for e in entries}
    entry = next(e for e in entries if any(i.target in by_name for i in e.interactions))
    browser.get(f"{site_url}/generated/entries/{entry.name}.html")
    section = browser.find_element(By.ID, "interactions")
    hrefs = [a.get_attribute("href") for a in section.find_elements(By.TAG_NAME, "a")]
    targets = [i.target for i in entry.interactions if i.target in by_name]
    for target in targets:
        assert any(h and h.endswith(f"/generated/entries/{target}.html") for h in hrefs), target
    link = next(
        a
        for a in section.find_elements(By.TAG_NAME, "a")
        if (a.get_attribute("href") or "").endswith(f"/{targets[0]}.html")
    )
    _click(browser, link)
    _wait(browser, lambda d: d.current_url.endswith(f"/{targets[0]}.html"))
    assert by_name[targets[0]].title in browser.find_element(By.TAG_NAME, "h1").text


def _rare_mechanism_word(entries: list[Entry]) -> tuple[str, Entry]:
    """A word of one entry's Mechanism that appears in as few entries as possible."""
    words = {e.name: set(re.findall(r"[a-z]{7,}", e.mechanism.lower())) for e in entries}
    everywhere = Counter(
        w for e in entries for w in set(re.findall(r"[a-z]{7,}", render_text(e).lower()))
    )
    best = min(
        ((everywhere[w], w, e) for e in entries for w in sorted(words[e.name])),
        key=lambda t: (t[0], t[1]),
    )
    return best[1], best[2]


def render_text(entry: Entry) -> str:
    from kbopt.template import render_entry

    return render_entry(entry)


def test_site_search_finds_an_entry_by_a_mechanism_word(
    browser: Any, site_url: str, built_site: BuiltSite
) -> None:
    from selenium.webdriver.common.by import By

    entries = Store(built_site.root).entries()
    word, entry = _rare_mechanism_word(entries)
    browser.get(f"{site_url}/index.html")
    box = browser.find_element(By.CSS_SELECTOR, "input[name='q']")
    box.send_keys(word)
    box.submit()
    _wait(
        browser,
        lambda d: d.find_elements(By.CSS_SELECTOR, "#search-results ul.search li"),
    )
    results = browser.find_elements(By.CSS_SELECTOR, "#search-results ul.search li a")
    hrefs = [a.get_attribute("href") or "" for a in results]
    assert any(f"/generated/entries/{entry.name}.html" in h for h in hrefs), (word, hrefs)


# ---------------------------------------------------------------- layout at two widths

WIDTHS = (1400, 400)
_SKIP_PAGES = ("_static/", "_sources/", "_downloads/", "_images/", "_entry-sources/")


def _pages(built_site: BuiltSite) -> list[str]:
    return sorted(
        p.relative_to(built_site.out).as_posix()
        for p in built_site.out.rglob("*.html")
        if not p.relative_to(built_site.out).as_posix().startswith(_SKIP_PAGES)
    )


def test_no_page_is_wider_than_the_window(
    browser: Any, site_url: str, built_site: BuiltSite
) -> None:
    """Every page at 1400 px and 400 px: nothing makes the page scroll sideways (wide
    tables, code, plots and the graph scroll inside their own box)."""
    pages = _pages(built_site)
    assert len(pages) > 100
    too_wide = []
    try:
        for width in WIDTHS:
            browser.set_window_size(width, 900)
            for page in pages:
                browser.get(f"{site_url}/{page}")
                widths = browser.execute_script(
                    "var d = document.documentElement;"
                    "return [d.scrollWidth, d.clientWidth, document.body.scrollWidth];"
                )
                if max(widths[0], widths[2]) > widths[1]:
                    too_wide.append(f"{page} at {width} px: {widths[0]} > {widths[1]}")
            if width == 1400:
                # The CLI reference is rendered at the content width: no block scrolls.
                browser.get(f"{site_url}/reference/cli.html")
                clipped = browser.execute_script(
                    "return Array.from(document.querySelectorAll('pre'))"
                    ".filter(p => p.scrollWidth > p.clientWidth).length;"
                )
                assert clipped == 0, f"{clipped} CLI help blocks scroll sideways at 1400 px"
            if width == 400:
                browser.get(f"{site_url}/kernels/mla_decode.html")
                assert browser.save_screenshot(str(ARTIFACTS / "devlog-400px.png"))
    finally:
        browser.set_window_size(1400, 1100)
    assert not too_wide, "\n".join(too_wide)


# ---------------------------------------------------------------- the catalog filter


def _shown_names(driver: Any) -> list[str]:
    return [r.get_attribute("data-name") for r in _visible_rows(driver)]


def _open_catalog(driver: Any, site_url: str, query: str = "") -> None:
    from selenium.webdriver.common.by import By

    driver.get(f"{site_url}/catalog.html{query}")
    _wait(driver, lambda d: d.find_element(By.ID, "kbopt-count").get_attribute("data-shown"))


def test_catalog_filter_state_lives_in_the_url(
    browser: Any, site_url: str, built_site: BuiltSite
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    entries = Store(built_site.root).entries()
    _open_catalog(browser, site_url)
    Select(browser.find_element(By.ID, "kbopt-facet-kind")).select_by_value("anti-pattern")
    box = browser.find_element(By.ID, "kbopt-facet-text")
    box.send_keys("split kv")
    url = browser.current_url
    assert "kind=anti-pattern" in url and "q=split+kv" in url
    shown = _shown_names(browser)
    assert shown

    # The shared link opens the same view.
    browser.get("about:blank")
    _open_catalog(browser, site_url, url[url.index("?") :])
    assert _shown_names(browser) == shown
    assert browser.find_element(By.ID, "kbopt-facet-text").get_attribute("value") == "split kv"

    # Words, not substrings: "split kv" finds split-kv-decode (the old box found nothing).
    _open_catalog(browser, site_url, "?q=split+kv")
    assert "split-kv-decode" in _shown_names(browser)
    _open_catalog(browser, site_url, "?q=plit")
    assert "split-kv-decode" not in _shown_names(browser)

    # A language keeps the shared entries, as `kbopt recommend --language` does.
    triton = [e.name for e in entries if e.language and e.language.value == "triton"]
    shared = [e.name for e in entries if e.language is None]
    _open_catalog(browser, site_url, "?language=triton")
    assert sorted(_shown_names(browser)) == sorted(triton + shared)
    _click(browser, browser.find_element(By.ID, "kbopt-facet-shared"))
    assert sorted(_shown_names(browser)) == sorted(triton)
    assert "shared=0" in browser.current_url

    # Facet counts follow the other filters.
    _open_catalog(browser, site_url, "?kind=anti-pattern&shared=0")
    option = browser.find_element(By.CSS_SELECTOR, '#kbopt-facet-language option[value="triton"]')
    want = sum(
        1
        for e in entries
        if e.kind.value == "anti-pattern" and e.language and e.language.value == "triton"
    )
    assert option.get_attribute("data-count") == str(want)
    assert option.text == f"triton ({want})"

    # Columns sort, and the order is part of the URL.
    _open_catalog(browser, site_url)
    _click(browser, browser.find_element(By.CSS_SELECTOR, 'th[data-sort="evidence"]'))
    counts = [int(r.get_attribute("data-evidence")) for r in _visible_rows(browser)]
    assert counts == sorted(counts, reverse=True)
    assert "sort=evidence-desc" in browser.current_url

    # Values the page does not know are reported, not silently dropped.
    _open_catalog(browser, site_url, "?kind=bogus&colour=red&language=triton")
    problems = browser.find_element(By.ID, "kbopt-url-problems")
    assert problems.is_displayed()
    assert "kind=bogus" in problems.text and "colour" in problems.text
    assert sorted(_shown_names(browser)) == sorted(triton + shared)


# ---------------------------------------------------------------- search


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("split kv", "split-kv-decode"),
        ("occupancy", "oversized-tiles-kill-occupancy"),
        ("bank conflict", "shared-memory-swizzle-or-padding"),
    ],
)
def test_search_puts_the_entry_in_the_top_three(
    browser: Any, site_url: str, built_site: BuiltSite, query: str, expected: str
) -> None:
    from selenium.webdriver.common.by import By

    assert expected in {e.name for e in Store(built_site.root).entries()}
    browser.get(f"{site_url}/search.html?q={query.replace(' ', '+')}")
    _wait(
        browser,
        lambda d: len(d.find_elements(By.CSS_SELECTOR, "#search-results ul.search li")) >= 3,
    )
    results = browser.find_elements(By.CSS_SELECTOR, "#search-results ul.search li > a")
    hrefs = [a.get_attribute("href") or "" for a in results]
    top = [h.rsplit("/", 1)[-1].split(".html")[0] for h in hrefs[:3]]
    assert expected in top, (query, top)
    # Entries rank above the API pages.
    kinds = [
        "api" if "/generated/api/" in h else "entry" if "/generated/entries/" in h else "other"
        for h in hrefs
    ]
    if "api" in kinds and "entry" in kinds:
        assert max(i for i, k in enumerate(kinds) if k == "entry") < kinds.index("api")


# ---------------------------------------------------------------- devlogs <-> entries


def test_devlog_and_entries_link_both_ways(browser: Any, site_url: str) -> None:
    from selenium.webdriver.common.by import By

    browser.get(f"{site_url}/generated/entries/split-kv-decode.html")
    link = next(
        a
        for a in browser.find_elements(By.CSS_SELECTOR, "#performance-evidence a")
        if "devlog: triton_v3" in a.text
    )
    _click(browser, link)
    _wait(
        browser, lambda d: "/kernels/mla_decode.html#devlog-mla-decode-triton-v3" in d.current_url
    )
    section = browser.find_element(By.ID, "devlog-mla-decode-triton-v3")
    back = [a.get_attribute("href") for a in section.find_elements(By.TAG_NAME, "a")]
    assert any(h and h.endswith("/generated/entries/split-kv-decode.html") for h in back), back
    # The results file the evidence came from is published with the site.
    browser.get(f"{site_url}/generated/entries/split-kv-decode.html")
    download = next(
        a
        for a in browser.find_elements(By.CSS_SELECTOR, "#performance-evidence a")
        if "results file" in a.text
    )
    assert download.get_attribute("href").endswith(".json")

    # The generated profiles are folded: the written story comes first.
    browser.get(f"{site_url}/kernels/mla_decode.html")
    fold = browser.find_element(By.CSS_SELECTOR, "details.kbopt-fold")
    assert fold.get_attribute("open") is None
    story = browser.find_element(By.ID, "devlog-mla-decode-triton-v1")
    assert story.location["y"] < 12000, "the story still starts after pages of generated tables"
    _click(browser, fold.find_element(By.TAG_NAME, "summary"))
    assert fold.get_attribute("open") is not None
