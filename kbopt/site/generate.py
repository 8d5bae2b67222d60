"""Write the site's generated sources from the store into ``<srcdir>/generated/``.

Everything a page shows about the catalog comes from here, so adding an entry
through the store and rebuilding shows it in the catalog table, the catalog index,
the graph, the evidence page and the search index without editing any other file.

A file is written only when its text differs from what is on disk, and files that
no longer correspond to anything (a deleted entry) are removed: Sphinx then re-reads
exactly the documents whose sources changed.  Evidence plots are cached by a hash
of the evidence they draw, because drawing is the slow part.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from kbopt.model import Entry
from kbopt.site.evidence import entry_plot_svg, overview_plot_svg, render_evidence_fragment
from kbopt.site.facets import render_facet_table
from kbopt.site.graph import render_graph_svg
from kbopt.site.pages import ENTRIES_DIR, code, md_inline, render_entry_page
from kbopt.site.ablation import render_ablation_fragment
from kbopt.site.reference import api_modules, render_api_page, render_cli_reference
from kbopt.store import Store

GENERATED_DIR = "generated"
PLOTS_DIR = "plots"


@dataclass
class GenerateReport:
    written: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    unchanged: int = 0
    plots_drawn: int = 0
    entries: int = 0
    problems: list[str] = field(default_factory=list)


def entry_href(name: str) -> str:
    """Link from a page at the source root (catalog.md, catalog-graph.md) to an entry."""
    return f"{GENERATED_DIR}/{ENTRIES_DIR}/{name}.html"


def _raw_html(fragment: str) -> str:
    return "```{raw} html\n" + fragment.rstrip() + "\n```\n"


def _evidence_key(entry: Entry) -> str:
    payload = json.dumps(
        [entry.name, entry.kind.value, [b.model_dump(mode="json") for b in entry.evidence]],
        sort_keys=True,
    )
    return hashlib.sha256(payload.encode()).hexdigest()[:16]


class _Plots:
    """SVG plots cached on disk by the hash of what they draw."""

    def __init__(self, folder: Path, report: GenerateReport):
        self.folder = folder
        self.report = report

    def get(self, stem: str, key: str, draw: Callable[[], str | None]) -> str | None:
        svg_path = self.folder / f"{stem}.svg"
        key_path = self.folder / f"{stem}.key"
        if key_path.is_file() and key_path.read_text() == key:
            return svg_path.read_text(encoding="utf-8") if svg_path.is_file() else None
        self.report.plots_drawn += 1
        return draw()


def render_entries_index(entries: list[Entry]) -> str:
    """The catalog index (KB6) with links: one table per kind, plus the toctree."""
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
    lines += ["```{toctree}", ":hidden:", ":glob:", "", "*", "```", ""]
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
    plots = _Plots(gen / PLOTS_DIR, report)
    for e in entries:
        key = _evidence_key(e)
        svg = plots.get(e.name, key, partial(entry_plot_svg, e))
        plot_path = None
        if svg is not None:
            files[f"{PLOTS_DIR}/{e.name}.svg"] = svg
            files[f"{PLOTS_DIR}/{e.name}.key"] = key
            plot_path = f"/{GENERATED_DIR}/{PLOTS_DIR}/{e.name}.svg"
        elif e.evidence:
            files[f"{PLOTS_DIR}/{e.name}.key"] = key  # remember "nothing to draw"
        source = store.public_path(result.paths[e.name])
        files[f"{ENTRIES_DIR}/{e.name}.md"] = render_entry_page(
            e,
            source_path=source,
            known=known,
            incoming=sorted(incoming.get(e.name, [])),
            plot_path=plot_path,
        )
    files[f"{ENTRIES_DIR}/index.md"] = render_entries_index(entries)
    files["catalog-table.inc"] = _raw_html(render_facet_table(entries, entry_href))
    files["graph.inc"] = _raw_html(render_graph_svg(entries, entry_href))

    overview_key = hashlib.sha256("".join(_evidence_key(e) for e in entries).encode()).hexdigest()
    overview = plots.get("overview", overview_key[:16], lambda: overview_plot_svg(entries))
    overview_path = None
    if overview is not None:
        files[f"{PLOTS_DIR}/overview.svg"] = overview
        overview_path = f"/{GENERATED_DIR}/{PLOTS_DIR}/overview.svg"
    files[f"{PLOTS_DIR}/overview.key"] = overview_key[:16]
    files["evidence.inc"] = render_evidence_fragment(entries, overview_path, entry_href)

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
