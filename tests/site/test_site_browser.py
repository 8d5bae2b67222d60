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

    browser.find_element(By.ID, "kbopt-facet-reset").click()
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
    link.click()
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
