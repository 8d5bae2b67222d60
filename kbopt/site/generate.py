"""Write the site's generated sources from the store into ``<srcdir>/generated/``.

Everything a page shows about the catalog comes from here, so adding an entry
through the store and rebuilding shows it in the catalog table, the catalog index,
the graph, the evidence page and the search index without editing any other file.

A file is written only when its text differs from what is on disk, and files that
no longer correspond to anything (a deleted entry) are removed: Sphinx then re-reads
exactly the documents whose sources changed.  Evidence plots are inline SVG drawn
by hand (`kbopt.site.evidence`), cheap enough to redraw on every build.

Besides the pages, generation writes ``_extra/_entry-sources/``: a copy of each
entry's Markdown file, published with the site so that an entry page's "view source"
button shows the file a contributor edits (not the generated page).
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from kbopt.model import Entry, EvidenceBlock
from kbopt.site.ablation import render_ablation_fragment
from kbopt.site.devlog_links import devlog_anchors, render_source_links, source_links
from kbopt.site.evidence import entry_plot_html, overview_plot_html, render_evidence_fragment
from kbopt.site.facets import render_facet_table
from kbopt.site.graph import render_graph_svg
from kbopt.site.pages import ENTRIES_DIR, code, md_inline, render_entry_page
from kbopt.site.reference import api_modules, render_api_page, render_cli_reference
from kbopt.store import Store
from kbopt.workflow.move_record import entry_move_rows, record_for

GENERATED_DIR = "generated"
EXTRA_DIR = "_extra"  # under the generated folder: copied as-is into the site's root
ENTRY_SOURCES = "_entry-sources"  # under the site's root: each entry's Markdown file
SEARCH_ENTRIES = "_kbopt/search-entries.js"  # under the site's root: what the scorer reads


@dataclass
class GenerateReport:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    plots_drawn: int = 0
    entry_sources: dict[str, str] = field(default_factory=dict)  # name -> public path
    entries: int = 0
    problems: list[str] = field(default_factory=list)


def entry_href(name: str) -> str:
    """Link from a page at the source root (catalog.md, catalog-graph.md) to an entry."""
    return f"{GENERATED_DIR}/{ENTRIES_DIR}/{name}.html"


def _raw_html(fragment: str) -> str:
    return "```{raw} html\n" + fragment.rstrip() + "\n```\n"


def entry_source_href(name: str) -> str:
    """Where the copy of an entry's Markdown file lives in the built site."""
    return f"{ENTRY_SOURCES}/{name}.md.txt"


def render_search_entries(entries: list[Entry]) -> str:
    """The words the site search's scorer (static/kbopt-search.js) matches a query
    against for each entry: its id, its title, its triggers' metrics."""
    table = {
        e.name: {
            "title": e.title,
            "triggers": " ".join(t.expression for t in e.triggers),
        }
        for e in entries
    }
    return "window.KBOPT_ENTRIES = " + json.dumps(table, sort_keys=True, indent=0) + ";\n"


def render_entries_index(entries: list[Entry]) -> str:
    """The catalog index with links: one table per kind."""
    lines = [
        "# Catalog index",
        "",
        "Every entry of the knowledge base, by kind; generated from `docs/knowledge/`.",
        "The same rows, machine-readable, are in `catalog/catalog.json`.",
        "",
    ]
    for kind, heading in (("optimization", "Optimizations"), ("anti-pattern", "Anti-patterns")):
        rows = [e for e in entries if e.kind.value == kind]
        lines += [f"## {heading} ({len(rows)})", ""]
        if not rows:
            lines += ["None yet.", ""]
            continue
        lines += ["| Name | Scope / Language | When to Apply | Impact |", "|---|---|---|---|"]
        for e in rows:
            scope = e.language.value if e.language else "shared"
            lines.append(
                f"| [{code(e.name)}](./{e.name}.md) | {scope} | "
                f"{md_inline(e.when_to_apply_summary) or '—'} | "
                f"{e.impact.value} (~{e.expected_gain_pct:g}%) |"
            )
        lines.append("")
    return "\n".join(lines)


def render_devlogs_page(srcdir: Path) -> str:
    """The kernel devlogs hub: a toctree of every ``docs/kernels/**/*.md`` found.

    Listing the files here (instead of a glob in index.md) keeps an empty folder, a
    normal early state, from being a build warning.
    """
    devlogs = sorted((srcdir / "kernels").rglob("*.md")) if (srcdir / "kernels").is_dir() else []
    lines = [
        "# Kernel devlogs",
        "",
        "One devlog per kernel (`docs/kernels/<kernel>.md`): overview, current best results,",
        "the performance section the profiler updates, and one entry per optimization cycle.",
        "",
    ]
    if not devlogs:
        return "\n".join([*lines, "No kernel devlog has been written yet.", ""])
    docnames = [p.relative_to(srcdir).with_suffix("").as_posix() for p in devlogs]
    lines += ["```{toctree}", ":maxdepth: 2", "", *[f"/{d}" for d in docnames], "```", ""]
    return "\n".join(lines)


def expected_sources(store: Store, gen: Path, report: GenerateReport) -> dict[str, bytes]:
    """Relative path under the generated folder -> the bytes it must hold."""
    result = store.load_all()
    report.problems = [str(p) for p in result.problems]
    entries = sorted(
        result.entries,
        key=lambda e: (e.kind.value, e.language.value if e.language else "", e.name),
    )
    report.entries = len(entries)
    known = {e.name: e for e in entries}
    incoming: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for e in entries:
        for inter in e.interactions:
            incoming[inter.target].append((e.name, inter.relation.value, inter.note))

    files: dict[str, str] = {".gitignore": "# generated by kbopt.site: never edit or commit\n*\n"}
    anchors = devlog_anchors(gen.parent)

    def links(block: EvidenceBlock) -> str:
        return render_source_links(source_links(block.source, store.root, anchors))

    record = record_for(store.root)  # what each move found in the project's ablations
    for e in entries:
        plot = entry_plot_html(e)
        report.plots_drawn += plot is not None
        path = result.paths[e.name]
        source = store.public_path(path)
        report.entry_sources[e.name] = source
        files[f"{EXTRA_DIR}/{entry_source_href(e.name)}"] = path.read_text(encoding="utf-8")
        files[f"{ENTRIES_DIR}/{e.name}.md"] = render_entry_page(
            e,
            source_path=source,
            known=known,
            incoming=sorted(incoming.get(e.name, [])),
            plot_html=plot,
            source_links=links,
            measured_moves=entry_move_rows(record, e),
        )
    files[f"{ENTRIES_DIR}/index.md"] = render_entries_index(entries)
    files[f"{EXTRA_DIR}/{SEARCH_ENTRIES}"] = render_search_entries(entries)
    files["catalog-table.inc"] = _raw_html(render_facet_table(entries, entry_href))
    files["graph.inc"] = _raw_html(render_graph_svg(entries, entry_href))
    overview = overview_plot_html(entries, entry_href)
    report.plots_drawn += overview is not None
    files["evidence.inc"] = render_evidence_fragment(entries, overview, entry_href)

    files["kernels.md"] = render_devlogs_page(gen.parent)
    files["ablation.inc"] = render_ablation_fragment(store.root)  # kbopt ablate results
    files["cli.inc"] = render_cli_reference()
    for module in api_modules():
        files[f"api/{module}.md"] = render_api_page(module)
    return {k: v.encode("utf-8") for k, v in files.items()}


def generate_sources(root: Path, srcdir: Path) -> GenerateReport:
    """Bring ``<srcdir>/generated/`` up to date with the store at `root`."""
    report = GenerateReport()
    gen = srcdir / GENERATED_DIR
    wanted = expected_sources(Store(root), gen, report)
    for rel, data in sorted(wanted.items()):
        path = gen / rel
        if path.is_file() and path.read_bytes() == data:
            report.unchanged += 1
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(path)
        report.written.append(rel)
    if gen.is_dir():
        for path in sorted(gen.rglob("*"), reverse=True):
            rel = path.relative_to(gen).as_posix()
            if path.is_file() and rel not in wanted:
                path.unlink()
                report.removed.append(rel)
            elif path.is_dir() and not any(path.iterdir()):
                path.rmdir()
    return report
