"""The interaction graph as an inline SVG, drawn without graphviz.

Entries sit on a circle, ordered by kind, language and name so that related families
sit together; each typed interaction is a curved arrow bent toward the centre and
coloured by its relation.  Every node links to its entry page.  Hovering a node
highlights its edges (`static/kbopt-catalog.js`).  The layout is deterministic, so
the SVG only changes when the catalog does.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from html import escape

from kbopt.model import Entry
from kbopt.vocab import Kind, Relation

RELATION_COLORS: dict[Relation, str] = {
    Relation.REQUIRES: "#1f77b4",
    Relation.ENABLES: "#2ca02c",
    Relation.CONFLICTS: "#d62728",
    Relation.COMPOSES: "#9467bd",
    Relation.SUPERSEDES: "#ff7f0e",
}
KIND_COLORS = {Kind.OPTIMIZATION: "#3b6ea5", Kind.ANTI_PATTERN: "#b03a2e"}
CHAR_WIDTH = 6.6  # px per character of an 11px sans-serif label, generously
NODE_SPACING = 20  # px of circumference per node


def layout(names: Sequence[str]) -> tuple[float, dict[str, tuple[float, float, float]]]:
    """Radius and, per name, (x, y, angle in degrees) around the centre (0, 0)."""
    n = max(len(names), 1)
    radius = max(150.0, n * NODE_SPACING / (2 * math.pi))
    places = {}
    for i, name in enumerate(names):
        angle = 2 * math.pi * i / n - math.pi / 2
        places[name] = (radius * math.cos(angle), radius * math.sin(angle), math.degrees(angle))
    return radius, places


def render_graph_svg(entries: Sequence[Entry], href: Callable[[str], str]) -> str:
    ordered = sorted(
        entries, key=lambda e: (e.kind.value, e.language.value if e.language else "", e.name)
    )
    names = [e.name for e in ordered]
    radius, places = layout(names)
    half = radius + 24 + CHAR_WIDTH * max((len(n) for n in names), default=10)
    size = 2 * half
    out = [
        f'<svg class="kbopt-graph" id="kbopt-graph" xmlns="http://www.w3.org/2000/svg" '
        f'width="{size:.0f}" height="{size:.0f}" viewBox="{-half:.0f} {-half:.0f} {size:.0f} {size:.0f}" '
        f'role="img" aria-label="interaction graph of {len(names)} entries">',
        "<defs>",
    ]
    for rel, color in RELATION_COLORS.items():
        out.append(
            f'<marker id="arrow-{rel.value}" viewBox="0 0 10 10" refX="10" refY="5" '
            f'markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
            f'<path d="M0,0 L10,5 L0,10 z" fill="{color}"/></marker>'
        )
    out.append("</defs>")
    edge_count = 0
    for e in ordered:
        for inter in e.interactions:
            if inter.target not in places or inter.target == e.name:
                continue
            x1, y1, _ = places[e.name]
            x2, y2, _ = places[inter.target]
            # Shorten both ends so the arrow stops at the node's rim.
            dx, dy = x2 - x1, y2 - y1
            dist = math.hypot(dx, dy) or 1.0
            sx, sy = x1 + dx / dist * 6, y1 + dy / dist * 6
            tx, ty = x2 - dx / dist * 7, y2 - dy / dist * 7
            cx, cy = (x1 + x2) * 0.25, (y1 + y2) * 0.25  # bend toward the centre
            color = RELATION_COLORS[inter.relation]
            note = f": {inter.note}" if inter.note else ""
            out.append(
                f'<path class="kbopt-edge" data-edge="{inter.relation.value}" '
                f'data-source="{escape(e.name)}" data-target="{escape(inter.target)}" '
                f'd="M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {tx:.1f},{ty:.1f}" '
                f'stroke="{color}" marker-end="url(#arrow-{inter.relation.value})">'
                f"<title>{escape(e.name)} {inter.relation.value} {escape(inter.target)}"
                f"{escape(note)}</title></path>"
            )
            edge_count += 1
    for e in ordered:
        x, y, deg = places[e.name]
        flip = 90 < (deg % 360) < 270
        anchor = "end" if flip else "start"
        rot = deg + 180 if flip else deg
        lx, ly = x * (1 + 10 / radius), y * (1 + 10 / radius)
        out.append(
            f'<g class="kbopt-node" data-name="{escape(e.name)}" data-kind="{e.kind.value}">'
            f'<a href="{escape(href(e.name))}"><title>{escape(e.title)} ({e.kind.value}, '
            f"{escape(e.language.value if e.language else 'shared')})</title>"
            f'<circle cx="{x:.1f}" cy="{y:.1f}" r="5" fill="{KIND_COLORS[e.kind]}"/>'
            f'<text x="{lx:.1f}" y="{ly:.1f}" text-anchor="{anchor}" dominant-baseline="middle" '
            f'transform="rotate({rot:.2f} {lx:.1f} {ly:.1f})">{escape(e.name)}</text></a></g>'
        )
    out.append("</svg>")
    legend = " ".join(
        f'<span style="color:{color}">&#9632; {rel.value}</span>'
        for rel, color in RELATION_COLORS.items()
    )
    kinds = " ".join(
        f'<span style="color:{color}">&#9679; {kind.value}</span>'
        for kind, color in KIND_COLORS.items()
    )
    return (
        f'<p class="kbopt-graph-legend">Nodes: {kinds}. Edges (source &#8594; target): {legend}. '
        f'<span id="kbopt-graph-stats" data-nodes="{len(names)}" data-edges="{edge_count}">'
        f"{len(names)} entries, {edge_count} interactions.</span></p>\n"
        f'<div class="kbopt-graph-wrap">{"".join(out)}</div>'
    )
