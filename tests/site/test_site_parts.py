"""The site's parts without a build: one scale for evidence, devlog <-> entry links,
the navigation marks, the API pages, the view / edit links."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from kbopt.model import EvidenceRow
from kbopt.site.apidoc import docstring_lines, render_api_rst, signature
from kbopt.site.devlog_links import (
    prepare_devlog,
    render_source_links,
    scan_devlog,
    source_links,
)
from kbopt.site.evidence import Bar, distinct_labels, render_bars_svg
from kbopt.site.navigation import mark_current
from kbopt.site.reference import CLI_COLUMNS, api_modules, render_cli_reference, wrap_help
from kbopt.site.speedup import Speedup, row_speedup


def _row(before: str, after: str, change: str) -> EvidenceRow:
    return EvidenceRow(config="c", before=before, after=after, change=change)


@pytest.mark.parametrize(
    ("before", "after", "change", "factor", "basis"),
    [
        ("522.7 us", "316.4 us", "-39.5% time", 1 / 0.605, "time"),
        ("2300.6 us", "64.4 us", "35.7x", 35.7, "reported speed-up"),
        ("152.5 us", "173.1 us", "+13.5%", 1 / 1.135, "time"),  # bare %, both times
        ("host 90 us", "host 32 us", "-64.8% host time", 1 / 0.352, "host time"),
        ("old", "new", "10% to 15% faster (as reported)", 1.10, "reported speed-up"),
        ("~3.0 TB/s", "~2.0 TB/s", "0.67x", 0.67, "reported speed-up"),
        ("PTX", "TileIR", "1.5x to 3.0x (expected, as stated)", 1.5, "reported speed-up"),
    ],
)
def test_every_speed_lands_on_one_scale(
    before: str, after: str, change: str, factor: float, basis: str
) -> None:
    s = row_speedup(_row(before, after, change))
    assert s is not None
    assert s.factor == pytest.approx(factor, rel=1e-3)
    assert s.basis == basis


def test_speedups_point_the_same_way() -> None:
    # The example: a 35.7x speed-up and a -39.5% time are both faster.
    a = row_speedup(_row("2300.6 us", "64.4 us", "35.7x"))
    b = row_speedup(_row("522.7 us", "316.4 us", "-39.5% time"))
    assert a and b and a.factor > 1 and b.factor > 1
    slower = row_speedup(_row("152.6 us", "276.8 us", "+81.4% time"))
    assert slower and slower.factor < 1


@pytest.mark.parametrize(
    "change",
    [
        "1.19x occupancy",
        "2.6x lower error",
        "2x efficiency",
        "32x shared bandwidth (vendor rule)",
        "qualitative (as stated)",
        "n/a",
        "no gain",
        "eight times the KV traffic (from grid)",
        "+20%",  # a bare percentage between two non-times is not a speed
    ],
)
def test_rows_that_are_not_speeds_are_not_plotted(change: str) -> None:
    assert row_speedup(_row("75% occupancy", "63% occupancy", change)) is None


def test_bar_labels_stay_distinct_and_bars_point_both_ways() -> None:
    assert distinct_labels(["a", "b", "a"]) == ["a (1)", "b", "a (2)"]
    svg = render_bars_svg(
        [
            Bar("faster", Speedup(2.0, "time"), "t1"),
            Bar("slower", Speedup(0.5, "time"), "t2"),
        ],
        "title",
    )
    assert svg.count('class="kbopt-bar-faster"') == 1
    assert svg.count('class="kbopt-bar-slower"') == 1
    assert "2×" in svg and "0.5×" in svg


DEVLOG = """# k devlog

## Profiles

<!-- GEN:profiles -->
## Profile: k v1 | b=1
### Metrics
| a | b |
|---|---|
| 1 | 2 |
<!-- /GEN:profiles -->

## Devlog

### triton_v1 — naive

text

### triton_v2 — better

text

### triton_v2 -- 2026-12-02 -- applied (run r1, attempt 1)
Optimization: x
"""


def test_devlog_sections_get_labels_entry_links_and_folded_profiles() -> None:
    anchors = scan_devlog("k", "kernels/k", DEVLOG)
    assert anchors.versions == {
        "triton_v1": "devlog-k-triton-v1",
        "triton_v2": "devlog-k-triton-v2",
    }
    assert anchors.runs == {("r1", "1"): "devlog-k-run-r1-1"}
    text = prepare_devlog(
        DEVLOG, anchors, {"triton_v2": ["split-kv-decode"]}, {"split-kv-decode": "Split KV"}, "/e/"
    )
    assert "(devlog-k-triton-v2)=\n### triton_v2 — better" in text
    assert "*Catalog entries applied here:* {doc}`Split KV </e/split-kv-decode>`." in text
    assert "(devlog-k-run-r1-1)=\n### triton_v2 -- 2026" in text
    # The generated profiles: folded, their headings out of the table of contents.
    assert "::::::{kbopt-fold} Show the 1 generated profiles" in text
    assert "**Profile: k v1 | b=1**" in text and "## Profile:" not in text
    assert "| 1 | 2 |" in text


def test_evidence_sources_link_devlog_results_and_the_web(tmp_path: Path) -> None:
    results = tmp_path / "kernels" / "k" / "results"
    results.mkdir(parents=True)
    (results / "run.json").write_text("[]")
    anchors = {"k": scan_devlog("k", "kernels/k", DEVLOG)}
    local = source_links(
        "kernels/k/results/run.json (rows triton_v1, triton_v2); devlog docs/kernels/k.md",
        tmp_path,
        anchors,
    )
    assert [(link.kind, link.target) for link in local] == [
        ("download", "kernels/k/results/run.json"),
        ("ref", "devlog-k-triton-v2"),
    ]
    cycle = source_links("kbopt cycle run r1, attempt 1 (k, backend real)", tmp_path, anchors)
    assert [link.target for link in cycle] == ["devlog-k-run-r1-1"]
    missing = source_links("kernels/k/results/gone.json; devlog docs/kernels/k.md", tmp_path, {})
    assert missing == []  # no link to a file or devlog that is not there
    web = {
        "sgl-project/sglang, python/x/decode.py (grid)": (
            "https://github.com/sgl-project/sglang/blob/HEAD/python/x/decode.py"
        ),
        'NVIDIA, guide (docs.nvidia.com/cuda/x.html: hints) and "torch.compile"': (
            "https://docs.nvidia.com/cuda/x.html"
        ),
        "T. Dao, FlashAttention-2 (arXiv:2307.08691, 2023)": "https://arxiv.org/abs/2307.08691",
        "a blog at https://example.org/post.": "https://example.org/post",
    }
    for source, url in web.items():
        assert [link.target for link in source_links(source, tmp_path, {})] == [url], source
    assert source_links("NVIDIA, CUDA C++ Best Practices Guide, load/store", tmp_path, {}) == []
    shown = render_source_links(local)
    assert "{download}`results file run.json </../kernels/k/results/run.json>`" in shown
    assert "{ref}`devlog: triton_v2 <devlog-k-triton-v2>`" in shown


def test_navigation_marks_the_page_and_its_ancestors() -> None:
    tree = (
        '<ul><li class="toctree-l1 has-children"><a class="reference internal" href="api.html">'
        'API</a><input class="toctree-checkbox" id="c1" type="checkbox"/><label></label><ul>'
        '<li class="toctree-l2"><a class="reference internal" href="store.html">store</a></li>'
        '<li class="toctree-l2"><a class="reference internal" href="model.html">model</a></li>'
        '</ul></li><li class="toctree-l1"><a class="reference internal" href="guide.html">'
        "Guide</a></li></ul>"
    )
    html = mark_current(tree, "store.html", {"api.html"})
    assert (
        '<li class="toctree-l1 current has-children"><a class="reference internal" href="api.html">'
        in html
    )
    assert 'type="checkbox" checked=""/>' in html
    assert (
        '<li class="toctree-l2 current current-page"><a class="current reference internal" href="#">store'
        in html
    )
    assert '<li class="toctree-l2"><a class="reference internal" href="model.html">' in html
    assert '<li class="toctree-l1"><a class="reference internal" href="guide.html">' in html


def _sample(a: int, b: str = "x", *, flag: bool = False) -> list[str]:
    """A sample."""
    return []


def test_api_pages_are_written_from_the_module() -> None:
    assert signature(_sample) == "(a: int, b: str = 'x', *, flag: bool = False) -> list[str]"
    rst = render_api_rst("kbopt.store")
    assert ".. py:module:: kbopt.store" in rst
    assert ".. py:class:: Store(" in rst
    assert "   .. py:method:: append_evidence(" in rst
    assert "(self" not in rst
    # A docstring docutils cannot read is shown verbatim, not garbled.
    assert docstring_lines("| a | b |\n|---|---|\n| 1 | 2 |")[0] == "::"
    assert docstring_lines("Plain `code` text.") == ["Plain `code` text."]
    assert docstring_lines("See :class:`kbopt.store.Store`.") == ["See :class:`kbopt.store.Store`."]


def _links(pagename: str, repository: str, sources: dict[str, str]) -> dict[str, Any]:
    from kbopt.site.extension import _page_links

    app = SimpleNamespace(
        config=SimpleNamespace(kbopt_repository=repository, kbopt_branch="main"),
        kbopt_generate_report=SimpleNamespace(entry_sources=sources),
    )
    context: dict[str, Any] = {
        "pathto": lambda target, _resource=0: f"REL/{target}",
        "page_source_suffix": ".md",
        "sourcename": f"{pagename}.md.txt",
    }
    _page_links(app, pagename, "page.html", context, None)  # type: ignore[arg-type]
    return context


def test_view_and_edit_links() -> None:
    sources = {"split-kv-decode": "docs/knowledge/optimizations/split-kv-decode.md"}
    entry = _links("generated/entries/split-kv-decode", "https://git.example/o/kbopt", sources)
    assert entry["kbopt_view_url"] == "REL/_entry-sources/split-kv-decode.md.txt"
    assert entry["kbopt_edit_url"] == (
        "https://git.example/o/kbopt/edit/main/docs/knowledge/optimizations/split-kv-decode.md"
    )
    guide = _links("guides/agents", "https://git.example/o/kbopt", sources)
    assert guide["kbopt_edit_url"] == "https://git.example/o/kbopt/edit/main/docs/guides/agents.md"
    assert guide["kbopt_view_url"] == "REL/_sources/guides/agents.md.txt"
    local = _links("generated/entries/split-kv-decode", "", sources)
    assert local["kbopt_edit_url"] is None and local["kbopt_view_url"]
    generated = _links("generated/api/kbopt.store", "https://git.example/o/kbopt", sources)
    assert generated["kbopt_edit_url"] is None  # a generated page has no file to edit


# Requirement codes of the project's own specification (KB7, W5, A11, S2...) and
# references to the documents it was written from mean nothing to a reader.
_INTERNAL = re.compile(
    r"\b(?:KB|W|A|S|D|I|K)\d{1,2}(?:\.\d+)?\b(?! codec)|French source|Japanese source|"
    r"source documents?|seed document"
)


def test_public_reference_text_cites_no_internal_codes() -> None:
    problems = []
    for module in api_modules():
        rst = render_api_rst(module, members=module != "kbopt")
        problems += [
            f"{module}: {line.strip()}" for line in rst.splitlines() if _INTERNAL.search(line)
        ]
    problems += [
        f"CLI: {line.strip()}"
        for line in render_cli_reference().splitlines()
        if _INTERNAL.search(line)
    ]
    assert not problems, "\n".join(problems)


def test_the_guides_cite_no_internal_codes() -> None:
    """The hand-written pages a reader opens first: the guides and the architecture."""
    docs = Path(__file__).resolve().parents[2] / "docs"
    problems = [
        f"{page.relative_to(docs)}:{n}: {line.strip()}"
        for page in sorted([*docs.glob("*.md"), *docs.glob("guides/*.md")])
        for n, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if _INTERNAL.search(line)
    ]
    assert not problems, "\n".join(problems)


def test_cli_help_is_wrapped_to_the_content_width() -> None:
    text = (
        "usage: kbopt x --role\n"
        + " " * 24
        + "{"
        + ",".join(f"role-number-{i}" for i in range(12))
        + "}\n"
    )
    text += "A description written on one long line " * 4 + "\n"
    wrapped = wrap_help(text, 60)
    assert max(len(line) for line in wrapped.splitlines()) <= 60
    assert " ".join(wrapped.split()).replace(", ", ",") == " ".join(text.split())
    assert all(line.startswith(" " * 24) for line in wrapped.splitlines()[1:4])
    reference = render_cli_reference()
    blocks = re.findall(r"```text\n(.*?)```", reference, re.S)
    assert blocks and max(len(line) for b in blocks for line in b.splitlines()) <= CLI_COLUMNS + 1


def test_an_entry_page_shows_what_its_moves_found_in_the_project_s_ablations(
    tmp_path: Path,
) -> None:
    """The record the catalog search orders its moves by, on the page of the entry."""
    import json

    from kbopt.site.pages import render_entry_page
    from kbopt.store import Store
    from kbopt.workflow.move_record import MoveRecord, entry_move_rows, trial_outcomes

    entry = Store(Path(__file__).resolve().parents[2]).get("size-warps-to-the-row")
    start = {"n": 1, "status": "ok", "duration_us": 100.0, "move": ""}

    def step(n: int, us: float, move: str) -> dict[str, Any]:
        return {"n": n, "status": "ok", "duration_us": us, "move": move}

    halve = "#1 size-warps-to-the-row: num_warps 8 -> 4 (warps /2)"
    trajectory = [
        start,
        step(2, 80.0, halve),  # advanced
        step(3, 79.9, halve + " [preconditions not met: row_len <= 8192]"),  # not by 1%
    ]
    doc = {
        "kernel": "k",
        "config": {"name": "c"},
        "rows": [{"arm": "catalog", "trajectory": trajectory}],
    }
    rows = entry_move_rows(
        MoveRecord.from_rows(trial_outcomes([json.loads(json.dumps(doc))])), entry
    )
    assert [r["held"] for r in rows] == [(1, 1), (0, 0)]  # warps /2, then warps x2
    assert [r["passed_over"] for r in rows] == [(1, 0), (0, 0)]
    page = render_entry_page(
        entry, source_path="x.md", known={}, incoming=[], plot_html=None, measured_moves=rows
    )
    assert "## Moves, as measured" in page
    assert (
        "| `warps /2 when row_len <= 8192, registers_per_thread <= 64` | 1 of 1 | 0 of 1 |" in page
    )
    assert "| not measured | not measured |" in page


def test_devlog_results_of_other_gpus_are_folded() -> None:
    """The results block keeps the kernel's usual GPU in view and folds another GPU's
    tables (up to the software line), naming that GPU in the fold's summary."""
    devlog = (
        "# k\n\n## Results\n\n<!-- GEN:results -->\n### decode: b=1\n\n| a |\n|---|\n| 1 |\n\n"
        "### decode on NVIDIA H100: b=1\n\n| a |\n|---|\n| 2 |\n\n"
        "### large on NVIDIA H100: b=8\n\n| a |\n|---|\n| 3 |\n\n"
        "Software: NVIDIA H100; NVIDIA H200. Commands: `x`\n<!-- /GEN:results -->\n"
    )
    text = prepare_devlog(devlog, scan_devlog("k", "kernels/k", devlog), {}, {}, "/e/")
    usual, fold = text.index("### decode: b=1"), text.index("::::::{kbopt-fold}")
    assert usual < fold
    assert "::::::{kbopt-fold} Show the results measured on NVIDIA H100\n" in text
    assert "**decode on NVIDIA H100: b=1**" in text and "### decode on" not in text
    assert text.index("| 3 |") < text.index("::::::\n\nSoftware: ") < text.index("<!-- /GEN")
    single = devlog.split("### decode on")[0] + "Software: x\n<!-- /GEN:results -->\n"
    assert "kbopt-fold" not in prepare_devlog(single, scan_devlog("k", "k", single), {}, {}, "/e/")
