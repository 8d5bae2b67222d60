"""Evidence tables and plots, drawn from `Entry.evidence_frame()`.

Plots are SVG files written with matplotlib's object API (no pyplot state, Agg
backend) with a fixed hash salt and no date, so the same evidence gives the same
bytes and an incremental build does not see a change that is not there.
"""

from __future__ import annotations

import io
import textwrap
from collections.abc import Callable, Sequence
from html import escape
from typing import Any

from kbopt.model import Entry
from kbopt.vocab import Kind, SourceType

# One colour per kind, no good/bad colouring: a Change cell is a duration change
# (negative = faster) in some rows and a speed-up ("2x" = +100%) in others.
KIND_COLORS = {Kind.OPTIMIZATION: "#3b6ea5", Kind.ANTI_PATTERN: "#b03a2e"}
OVERVIEW_LIMIT = 40  # entries shown in the overview plot (largest effects first)


def _svg(fig: Any) -> str:
    import matplotlib

    buf = io.StringIO()
    with matplotlib.rc_context({"svg.hashsalt": "kbopt", "svg.fonttype": "none"}):
        fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    return buf.getvalue()


def _figure(width: float, height: float) -> Any:
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def _label(text: str, width: int = 38) -> str:
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder="…")


MIN_PLOTTED_ROWS = 2  # one bar says nothing the table does not; drawing is the slow part


def entry_plot_svg(entry: Entry) -> str | None:
    """Bar chart of each evidence row's Change (%), or None with fewer than two rows
    that have one."""
    frame = entry.evidence_frame()
    frame = frame[frame["change_pct"].notna()]
    if len(frame) < MIN_PLOTTED_ROWS:
        return None
    labels = [_label(c) for c in frame["config"]]
    values = [float(v) for v in frame["change_pct"]]
    fig = _figure(6.4, 0.5 + 0.38 * len(values))
    ax = fig.subplots()
    ax.barh(range(len(values)), values, color=KIND_COLORS[entry.kind])
    ax.set_yticks(range(len(values)), labels)
    ax.invert_yaxis()
    ax.axvline(0, color="#555", linewidth=0.8)
    if max(abs(v) for v in values) > 300:
        ax.set_xscale("symlog", linthresh=10)  # a "100x" row would flatten the rest
    ax.set_xlabel("Change column (%)")
    ax.set_title(f"{entry.name}: evidence rows", fontsize=10)
    return _svg(fig)


def overview_plot_svg(entries: Sequence[Entry]) -> str | None:
    """Median Change (%) per entry, the largest effects first, coloured by kind."""
    points = []
    for e in entries:
        values = [r.change_pct for b in e.evidence for r in b.rows if r.change_pct is not None]
        if values:
            values.sort()
            points.append((e, values[len(values) // 2], len(values)))
    if not points:
        return None
    points.sort(key=lambda p: (-abs(p[1]), p[0].name))
    points = points[:OVERVIEW_LIMIT]
    fig = _figure(7.2, 0.6 + 0.3 * len(points))
    ax = fig.subplots()
    colors = [KIND_COLORS[e.kind] for e, _, _ in points]
    ax.barh(range(len(points)), [v for _, v, _ in points], color=colors)
    ax.set_yticks(range(len(points)), [f"{e.name} (n={n})" for e, _, n in points])
    ax.invert_yaxis()
    ax.axvline(0, color="#555", linewidth=0.8)
    # Reported changes span -99% to several 1000% (a "1000x" row): symlog keeps both
    # ends readable where a linear axis would flatten everything but the outlier.
    ax.set_xscale("symlog", linthresh=10)
    ax.set_xlabel("median Change column (%) over the entry's evidence rows (symlog)")
    ax.set_title("Evidence by entry (blue: optimization, red: anti-pattern)", fontsize=10)
    return _svg(fig)


def render_evidence_fragment(
    entries: Sequence[Entry], overview_path: str | None, href: Callable[[str], str]
) -> str:
    """MyST for the evidence page: the overview plot, then every evidence row.

    The table is raw HTML: with thousands of rows, a docutils table of paragraphs and
    cross-references is what made the incremental rebuild slow (the same rows are
    searchable on the entry pages).
    """
    ordered = sorted(entries, key=lambda e: e.name)
    blocks = [(e, b) for e in ordered for b in e.evidence]
    rows = sum(len(b.rows) for _, b in blocks)
    local = sum(len(b.rows) for _, b in blocks if b.source_type is SourceType.LOCAL_EXPERIMENT)
    lines = [
        f"{rows} evidence rows from {len({e.name for e, _ in blocks})} entries "
        f"({local} from local experiments, {rows - local} from external reports).",
        "",
    ]
    if overview_path:
        lines += [
            f"```{{image}} {overview_path}",
            ":alt: median change per entry",
            ":class: kbopt-evidence-plot",
            "```",
            "",
        ]
    html = [
        '<table class="kbopt-evidence-table docutils" id="kbopt-evidence-table"><thead><tr>'
        "<th>Entry</th><th>Source</th><th>Config</th><th>Before → After</th><th>Change</th>"
        "</tr></thead><tbody>"
    ]
    for entry, block in blocks:
        source = f"{block.source_type.value}: {_label(block.source, 90)}"
        if block.device:
            source += f" ({block.device})"
        for row in block.rows:
            html.append(
                f'<tr class="kbopt-evidence-row"><td><a href="{escape(href(entry.name))}">'
                f"{escape(entry.name)}</a></td><td>{escape(source)}</td>"
                f"<td>{escape(row.config)}</td><td>{escape(row.before)} → {escape(row.after)}</td>"
                f"<td>{escape(row.change)}</td></tr>"
            )
    html.append("</tbody></table>")
    lines += ["```{raw} html", "\n".join(html), "```"]
    return "\n".join(lines) + "\n"
