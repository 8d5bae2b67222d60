"""The site build: every entry everywhere, typed headers, references, evolution."""

from __future__ import annotations

import datetime as dt
import json
import re
from html import unescape
from html.parser import HTMLParser
from pathlib import Path

import pytest
from site_support import BuiltSite, copy_project

from kbopt.cli import build_parser, main
from kbopt.model import Entry, EvidenceBlock, EvidenceRow, Interaction, MetricEffect, Trigger
from kbopt.site.apidoc import rst_problems
from kbopt.site.build import build_site, doctrees_dir
from kbopt.site.evidence import speedup_rows
from kbopt.site.facets import render_facet_table
from kbopt.site.generate import generate_sources
from kbopt.site.graph import render_graph_svg
from kbopt.site.reference import api_modules, walk_commands
from kbopt.store import Store
from kbopt.vocab import Kind, Relation, SourceType

# myst-parser 5 still calls APIs that Sphinx 9 deprecates; not ours to fix.
pytestmark = pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "a":
            self.hrefs += [v for k, v in attrs if k == "href" and v]


def links(html: str) -> list[str]:
    parser = _Links()
    parser.feed(html)
    return parser.hrefs


def text_of(html: str) -> str:
    """The visible text of an HTML fragment, whitespace collapsed."""
    return " ".join(unescape(re.sub(r"<[^>]+>", " ", html)).split())


def entry_page(name: str) -> str:
    return f"generated/entries/{name}.html"


def test_every_entry_appears_everywhere(built_site: BuiltSite) -> None:
    entries = Store(built_site.root).entries()
    assert entries, "the bundled catalog is empty"
    catalog = built_site.html("catalog.html")
    index = built_site.html("generated/entries/index.html")
    graph = built_site.html("catalog-graph.html")
    search = built_site.html("searchindex.js")
    for e in entries:
        assert (built_site.out / entry_page(e.name)).is_file(), e.name
        assert f'id="row-{e.name}"' in catalog, e.name
        assert f"{e.name}.html" in "".join(links(index)), e.name
        assert f'data-name="{e.name}"' in graph, e.name
        assert f'"generated/entries/{e.name}"' in search, e.name
    rows = re.findall(r'<tr class="kbopt-entry-row"', catalog)
    assert len(rows) == len(entries)


def test_entry_page_has_typed_header_and_interaction_links(built_site: BuiltSite) -> None:
    entries = Store(built_site.root).entries()
    by_name = {e.name: e for e in entries}
    entry = next(e for e in entries if any(i.target in by_name for i in e.interactions))
    page = built_site.html(entry_page(entry.name))
    header = page.split('class="kbopt-entry-header', 1)[1].split("</table>", 1)[0]
    for label, value in [
        ("Kind", entry.kind.value),
        ("Scope", entry.scope.value),
        ("Impact", entry.impact.value),
        ("Status", entry.status.value),
    ]:
        assert re.search(rf"<p>{label}</p>.*?<p>{re.escape(value)}", header, re.S), label
    for trigger in entry.triggers:
        assert trigger.expression in text_of(header)
    hrefs = links(page.split('id="interactions"', 1)[1])
    for inter in entry.interactions:
        if inter.target in by_name:
            assert f"{inter.target}.html" in hrefs, inter.target
    target = next(i.target for i in entry.interactions if i.target in by_name)
    back = built_site.html(entry_page(target)).split('id="interactions"', 1)[1]
    assert f"{entry.name}.html" in links(back), "the target page does not link back"


def test_evidence_plots_and_table(built_site: BuiltSite) -> None:
    entries = Store(built_site.root).entries()
    plotted = [e for e in entries if len(speedup_rows(e)) >= 2]
    assert plotted
    for e in entries:
        page = built_site.html(entry_page(e.name))
        bars = re.findall(r'<g class="kbopt-bar-row">', page)
        assert len(bars) == (len(speedup_rows(e)) if e in plotted else 0), e.name
        # One scale: every speed row shows its factor next to the raw cells.
        for _, row, s in speedup_rows(e):
            assert s.text in page, (e.name, row.change)
    evidence = built_site.html("catalog-evidence.html")
    assert 'class="kbopt-bars"' in evidence
    n_rows = sum(len(b.rows) for e in entries for b in e.evidence)
    assert len(re.findall(r'<tr class="kbopt-evidence-row"', evidence)) == n_rows
    n_speeds = sum(len(speedup_rows(e)) for e in entries)
    assert evidence.count("data-speedup=") == n_speeds


def test_published_folder_has_no_doctrees(built_site: BuiltSite) -> None:
    assert not (built_site.out / ".doctrees").exists()
    assert doctrees_dir(built_site.out).is_dir()
    assert not list(built_site.out.rglob("*.doctree"))


def test_entry_pages_link_their_source_file(built_site: BuiltSite) -> None:
    store = Store(built_site.root)
    result = store.load_all()
    for e in result.entries:
        page = built_site.html(entry_page(e.name))
        view = page.split('class="view-this-page"', 1)[1].split("</a>", 1)[0]
        href = links(view + "</a>")[0]
        copy = (built_site.out / "generated" / "entries" / href).resolve()
        assert copy.read_text(encoding="utf-8") == result.paths[e.name].read_text(encoding="utf-8")
    # No hosted repository is configured here: no "edit" button leads nowhere.
    assert 'class="edit-this-page"' not in built_site.html(entry_page(result.entries[0].name))


def test_theme_conveniences(built_site: BuiltSite) -> None:
    import kbopt

    page = built_site.html("guides/agents.html")
    assert 'class="toc-tree"' in page or "toc-drawer" in page  # on-page table of contents
    assert "theme-toggle" in page  # dark mode
    assert 'id="__navigation"' in page  # the mobile drawer's toggle
    assert kbopt.__version__ in page.split("<title>", 1)[1].split("</title>", 1)[0]
    assert "favicon.svg" in page
    assert "copybutton.js" in page
    # The navigation marks the page and its ancestors (resolved once per folder).
    api = built_site.html("generated/api/kbopt.store.html")
    assert re.search(r'<li class="toctree-l2 current current-page[^"]*"><a class="current', api)
    assert re.search(r'<li class="toctree-l1 current[^"]*"><a[^>]*href="[^"]*api.html"', api)


def test_cli_reference_documents_every_command(built_site: BuiltSite) -> None:
    page = built_site.html("reference/cli.html")
    commands = [" ".join(("kbopt", *path)) for path, _, _ in walk_commands(build_parser())]
    assert "kbopt site build" in commands
    for name in commands:
        assert f'<span class="pre">{name.split()[-1]}</span>' in page or name in page, name
        assert f"usage: {name}" in page, name


def test_api_reference_has_every_module(built_site: BuiltSite) -> None:
    import importlib

    built = built_site.out / "generated" / "api"
    sources = built_site.root / "docs" / "generated" / "api"
    generated = {p.stem for p in sources.glob("*.md")}
    assert generated == {p.stem for p in built.glob("*.html")}
    for module in set(api_modules()) - generated:
        # Only a module created after the session's build may be missing.
        path = Path(importlib.import_module(module).__file__ or "")
        assert path.stat().st_mtime > built_site.built_at, f"{module} has no API page"
    store_page = built_site.html("generated/api/kbopt.store.html")
    assert 'id="kbopt.store.Store.append_evidence"' in store_page


def test_kernel_devlogs_are_linked(built_site: BuiltSite) -> None:
    devlogs = sorted((built_site.root / "docs" / "kernels").glob("*.md"))
    hub = built_site.html("generated/kernels.html")
    for path in devlogs:
        assert f"kernels/{path.stem}.html" in "".join(links(hub)), path.name


def _new_entry(target: str) -> Entry:
    today = dt.date(2026, 12, 2)
    return Entry(
        name="zz-site-evolution-probe",
        kind=Kind.OPTIMIZATION,
        title="Probe entry added by the site evolution test",
        applies_to=["attention-decode"],
        bottlenecks=["memory"],
        impact="medium",
        expected_gain_pct=12,
        risk="low",
        created=today,
        updated=today,
        contexts=["A context written for the evolution test."],
        triggers=[Trigger.parse("ctas_per_sm < 1")],
        mechanism="The quuxification of tiles keeps every SM streaming.",
        affected_metrics=[MetricEffect(metric="dram_throughput_pct", note="rises")],
        implementation="x = 1",
        evidence=[
            EvidenceBlock(
                source_type=SourceType.EXTERNAL_REPORT,
                source="A report named for the test",
                rows=[EvidenceRow(config="b=1", before="10 us", after="8 us", change="-20%")],
            )
        ],
        interactions=[Interaction(relation=Relation.COMPOSES, target=target, note="test")],
    )


def test_adding_an_entry_shows_it_everywhere_incrementally(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = copy_project(tmp_path / "project")
    out = tmp_path / "html"
    store = Store(root)
    entries = store.entries()
    target = entries[0].name
    bystander = next(
        e.name
        for e in entries
        if e.name != target
        and all(i.target != target for i in e.interactions)
        and all(i.target != e.name for x in entries for i in x.interactions if x.name == target)
    )
    full = build_site(root, out, warnings_as_errors=True)
    assert f"generated/entries/{bystander}" in full.docs_read

    new = _new_entry(target)
    store.add_optimization(new)
    inc = build_site(root, out, incremental=True, warnings_as_errors=True)

    read = set(inc.docs_read)
    assert f"generated/entries/{new.name}" in read
    assert f"generated/entries/{target}" in read  # it gains a "named by" link
    assert {"catalog", "catalog-graph", "catalog-evidence", "generated/entries/index"} <= read
    assert f"generated/entries/{bystander}" not in read, "an unrelated page was re-read"
    assert len(read) < len(full.docs_read) / 2

    html = (out / "catalog.html").read_text()
    assert f'id="row-{new.name}"' in html
    assert f'data-name="{new.name}"' in (out / "catalog-graph.html").read_text()
    assert f"{new.name}.html" in (out / "generated/entries/index.html").read_text()
    assert "quuxif" in (out / "searchindex.js").read_text()
    back = (out / entry_page(target)).read_text().split('id="interactions"', 1)[1]
    assert f"{new.name}.html" in links(back)

    # Removing it again, rebuilt through the CLI an agent would call.
    store.delete(new.name)
    argv = ["--root", str(root), "site", "build", "--out", str(out), "--incremental", "-W"]
    assert main([*argv, "--json"]) == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["incremental"] is True and summary["warnings"] == []
    assert summary["entries"] == len(entries)
    assert f'id="row-{new.name}"' not in (out / "catalog.html").read_text()
    assert not (root / "docs" / "generated" / "entries" / f"{new.name}.md").exists()


def test_broken_entry_is_reported_by_generation(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    bad = root / "docs" / "knowledge" / "optimizations" / "broken-probe.md"
    bad.write_text("---\nkind: optimization\n---\n# Broken\n")
    report = generate_sources(root, root / "docs")
    assert any("broken-probe.md" in p for p in report.problems)
    assert report.entries == len(Store(root).load_all().entries)


def test_generation_is_stable(tmp_path: Path) -> None:
    root = copy_project(tmp_path / "project")
    first = generate_sources(root, root / "docs")
    second = generate_sources(root, root / "docs")
    assert first.written and not second.written and not second.removed


def test_facet_table_and_graph_fragments() -> None:
    from kbopt.template import parse_entry
    from tests.core.sample import VALID

    a = parse_entry(VALID, name="sample-opt")
    b = a.model_copy(update={"name": "other-opt", "kind": Kind.ANTI_PATTERN})
    a.interactions = [Interaction(relation=Relation.CONFLICTS, target="other-opt")]
    table = render_facet_table([a, b], lambda n: f"e/{n}.html")
    assert 'data-kind="anti-pattern"' in table and 'data-kind="optimization"' in table
    assert 'data-metric="ctas_per_sm dram_throughput_pct"' in table
    assert '<option value="anti-pattern">anti-pattern (1)</option>' in table
    assert '<option value="cute-dsl" disabled>cute-dsl (0)</option>' in table
    svg = render_graph_svg([a, b], lambda n: f"e/{n}.html")
    assert svg.count('data-edge="conflicts"') == 1
    assert 'data-nodes="2" data-edges="1"' in svg


def test_docstrings_that_are_not_rst_are_detected() -> None:
    assert rst_problems("A plain docstring with `code`.\n\n- a list\n") == []
    assert rst_problems("| a | b |\n|---|---|\n| 1 | 2 |\n")


def test_site_build_without_sources_is_a_clean_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "docs" / "knowledge").mkdir(parents=True)
    code = main(["--root", str(tmp_path), "site", "build", "--out", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2
    assert "has no site sources" in err and "Traceback" not in err
