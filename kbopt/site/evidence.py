"""Evidence tables and plots on one scale: the speed-up factor of `kbopt.site.speedup`.

Plots are inline SVG written by hand (horizontal bars on a log2 axis centred on 1x,
no change): a few hundred bytes of markup per row, drawn in microseconds, coloured by
CSS so they follow the light / dark theme.  Only rows that are speeds (a time change
or a reported speed-up) are plotted; the others stay in the tables with their raw
Before / After / Change cells.  The markup is deterministic, so an incremental build
sees a change only when the evidence changes.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from kbopt.model import Entry, EvidenceRow
from kbopt.site.speedup import Speedup, row_speedup
from kbopt.vocab import SourceType

OVERVIEW_LIMIT = 40  # entries shown in the overview plot (largest effects first)
MIN_PLOTTED_ROWS = 2  # one bar says nothing the table does not
ROW_HEIGHT = 22  # px per bar, in the SVG's own units (the SVG scales to its box)
LABEL_WIDTH = 330  # px for the row labels
BAR_WIDTH = 380  # px for the bars
VALUE_WIDTH = 70  # px for the value printed after each bar


@dataclass(frozen=True)
class Bar:
    label: str
    speedup: Speedup
    tooltip: str
    href: str | None = None


def _label(text: str, width: int = 46) -> str:
    return textwrap.shorten(" ".join(text.split()), width=width, placeholder="…")


def distinct_labels(labels: Sequence[str]) -> list[str]:
    """The labels, with a counter appended to any that repeat (after shortening)."""
    seen: dict[str, int] = {}
    for label in labels:
        seen[label] = seen.get(label, 0) + 1
    counters: dict[str, int] = {}
    out = []
    for label in labels:
        if seen[label] > 1:
            counters[label] = counters.get(label, 0) + 1
            out.append(f"{label} ({counters[label]})")
        else:
            out.append(label)
    return out


def speedup_rows(entry: Entry) -> list[tuple[int, EvidenceRow, Speedup]]:
    """(evidence block number, row, speed-up) for every row that is a speed."""
    out = []
    for i, block in enumerate(entry.evidence, start=1):
        for row in block.rows:
            s = row_speedup(row)
            if s is not None:
                out.append((i, row, s))
    return out


def _axis_limits(factors: Sequence[float]) -> tuple[int, int]:
    logs = [math.log2(f) for f in factors]
    lo = min([*logs, -1.0])
    hi = max([*logs, 1.0])
    return math.floor(lo), math.ceil(hi)


def render_bars_svg(bars: Sequence[Bar], title: str) -> str:
    """A horizontal bar chart of speed-up factors on a log2 axis (1x in the middle of
    the bars' origin); >1 bars go right (faster), <1 bars go left (slower)."""
    lo, hi = _axis_limits([b.speedup.factor for b in bars])
    span = hi - lo
    top = 28
    height = top + ROW_HEIGHT * len(bars) + 30
    width = LABEL_WIDTH + BAR_WIDTH + VALUE_WIDTH

    def x(factor: float) -> float:
        return LABEL_WIDTH + (math.log2(factor) - lo) / span * BAR_WIDTH

    out = [
        f'<svg class="kbopt-bars" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} '
        f'{height}" width="{width}" height="{height}" role="img" '
        f'aria-label="{escape(title)}"><title>{escape(title)}</title>',
        f'<text class="kbopt-bars-title" x="{width / 2:.0f}" y="16" text-anchor="middle">'
        f"{escape(title)}</text>",
    ]
    # Grid: one line per power of two, labelled 1/4x, 1/2x, 1x, 2x, 4x...
    step = 1 if span <= 8 else 2 if span <= 16 else 4
    for p in range(lo, hi + 1):
        if (p - lo) % step:
            continue
        gx = x(2.0**p)
        cls = "kbopt-bars-one" if p == 0 else "kbopt-bars-grid"
        out.append(
            f'<line class="{cls}" x1="{gx:.1f}" y1="{top - 4}" x2="{gx:.1f}" '
            f'y2="{top + ROW_HEIGHT * len(bars)}"/>'
        )
        tick = f"{2**p:g}×" if p >= 0 else f"1/{2 ** (-p):g}×"
        out.append(
            f'<text class="kbopt-bars-tick" x="{gx:.1f}" y="{top + ROW_HEIGHT * len(bars) + 14}" '
            f'text-anchor="middle">{tick}</text>'
        )
    out.append(
        f'<text class="kbopt-bars-tick" x="{LABEL_WIDTH + BAR_WIDTH / 2:.0f}" '
        f'y="{height - 2}" text-anchor="middle">speed-up (log scale; right of 1× is faster)'
        "</text>"
    )
    origin = x(1.0)
    for i, bar in enumerate(bars):
        y = top + i * ROW_HEIGHT
        end = x(bar.speedup.factor)
        left, w = min(origin, end), max(abs(end - origin), 1.0)
        cls = "kbopt-bar-faster" if bar.speedup.factor >= 1 else "kbopt-bar-slower"
        label = escape(bar.label)
        if bar.href:
            label = f'<a href="{escape(bar.href)}">{label}</a>'
        out.append(
            f'<g class="kbopt-bar-row"><title>{escape(bar.tooltip)}</title>'
            f'<text class="kbopt-bars-label" x="{LABEL_WIDTH - 6}" y="{y + 15}" '
            f'text-anchor="end">{label}</text>'
            f'<rect class="{cls}" x="{left:.1f}" y="{y + 4}" width="{w:.1f}" '
            f'height="{ROW_HEIGHT - 8}"/>'
            f'<text class="kbopt-bars-value" x="{LABEL_WIDTH + BAR_WIDTH + 6}" y="{y + 15}">'
            f"{escape(bar.speedup.text)}</text></g>"
        )
    out.append("</svg>")
    return f'<div class="kbopt-plot-wrap">{"".join(out)}</div>'


def entry_bars(entry: Entry) -> list[Bar]:
    rows = speedup_rows(entry)
    labels = distinct_labels([_label(row.config) for _, row, _ in rows])
    return [
        Bar(
            label=label,
            speedup=s,
            tooltip=(
                f"Evidence {block}: {row.config} — before {row.before}, after {row.after}, "
                f"change {row.change} → {s.text} ({s.basis}{', ' + s.note if s.note else ''})"
            ),
        )
        for label, (block, row, s) in zip(labels, rows, strict=True)
    ]


def entry_plot_html(entry: Entry) -> str | None:
    """Bar chart of each evidence row's speed-up, or None with fewer than two rows that
    are speeds."""
    bars = entry_bars(entry)
    if len(bars) < MIN_PLOTTED_ROWS:
        return None
    return render_bars_svg(bars, f"{entry.name}: speed-up per evidence row")


def _median(values: Sequence[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return math.sqrt(ordered[mid - 1] * ordered[mid])  # geometric: factors multiply


def overview_plot_html(entries: Sequence[Entry], href: Callable[[str], str]) -> str | None:
    """Median speed-up per entry over its speed rows, the largest effects first."""
    points = []
    for e in entries:
        factors = [s.factor for _, _, s in speedup_rows(e)]
        if factors:
            points.append((e, _median(factors), len(factors)))
    if not points:
        return None
    points.sort(key=lambda p: (-abs(math.log2(p[1])), p[0].name))
    points = points[:OVERVIEW_LIMIT]
    bars = [
        Bar(
            label=f"{e.name} (n={n})",
            speedup=Speedup(m, "median"),
            tooltip=f"{e.title}: median speed-up {m:.3g}× over {n} rows",
            href=href(e.name),
        )
        for e, m, n in points
    ]
    return render_bars_svg(bars, "Median speed-up per entry (largest effects first)")


def render_evidence_fragment(
    entries: Sequence[Entry], overview_html: str | None, href: Callable[[str], str]
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
    speeds = sum(1 for e in ordered for _ in speedup_rows(e))
    lines = [
        f"{rows} evidence rows from {len({e.name for e, _ in blocks})} entries "
        f"({local} from local experiments, {rows - local} from external reports); "
        f"{speeds} of them are speeds and carry a speed-up factor.",
        "",
    ]
    if overview_html:
        lines += ["```{raw} html", overview_html, "```", ""]
    html = [
        '<div class="kbopt-table-wrap"><table class="kbopt-evidence-table docutils" '
        'id="kbopt-evidence-table"><thead><tr>'
        "<th>Entry</th><th>Source</th><th>Config</th><th>Before</th><th>After</th>"
        "<th>Change (as written)</th><th>Speed-up</th></tr></thead><tbody>"
    ]
    for entry, block in blocks:
        source = f"{block.source_type.value}: {_label(block.source, 90)}"
        if block.device:
            source += f" ({block.device})"
        for row in block.rows:
            s = row_speedup(row)
            shown = f"{s.text} <small>({escape(s.basis)})</small>" if s else "—"
            factor = f' data-speedup="{s.factor:.6g}"' if s else ""
            html.append(
                f'<tr class="kbopt-evidence-row"{factor}><td><a href="{escape(href(entry.name))}">'
                f"{escape(entry.name)}</a></td><td>{escape(source)}</td>"
                f"<td>{escape(row.config)}</td><td>{escape(row.before)}</td>"
                f"<td>{escape(row.after)}</td><td>{escape(row.change)}</td>"
                f"<td>{shown}</td></tr>"
            )
    html.append("</tbody></table></div>")
    lines += ["```{raw} html", "\n".join(html), "```"]
    return "\n".join(lines) + "\n"
