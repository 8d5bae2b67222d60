"""The catalog's facet table: every entry in one HTML table, filtered in the browser.

Each row carries its facet values as `data-` attributes (space-separated where an
entry has several, e.g. bottlenecks).  `static/kbopt-catalog.js` reads the selects
above the table and hides the rows that do not match; no server is involved.  The
filter behaves like the command line: a language keeps the shared entries (as
`kbopt recommend --language` does; a checkbox leaves them out), the text box matches
whole words (every word of the query must start a word of the entry's id, title,
triggers, contexts or bottlenecks), and the state lives in the page's URL so a
filtered view can be shared.  The options come from the closed vocabularies in
`kbopt.vocab`; each shows how many entries it would leave with the other filters
as they are.
"""

from __future__ import annotations

import textwrap
from collections import Counter
from collections.abc import Callable, Sequence
from html import escape

from kbopt.model import Entry
from kbopt.vocab import METRICS, Bottleneck, Kind, Language, Scope, Status

SHARED = "shared"  # the language facet's value for entries of no particular language
IMPACT_RANK = {"low": 1, "medium": 2, "high": 3}  # sort order of the Impact column


def entry_metrics(entry: Entry) -> list[str]:
    """Metrics an entry is about: its triggers' and its Affected Metrics'."""
    seen = dict.fromkeys(
        [t.metric for t in entry.triggers] + [m.metric for m in entry.affected_metrics]
    )
    return list(seen)


def facet_values(entry: Entry) -> dict[str, list[str]]:
    return {
        "kind": [entry.kind.value],
        "scope": [entry.scope.value],
        "language": [entry.language.value if entry.language else SHARED],
        "bottleneck": [b.value for b in entry.bottlenecks],
        "metric": entry_metrics(entry),
        "status": [entry.status.value],
    }


FACETS: tuple[tuple[str, str, Callable[[], list[str]]], ...] = (
    ("kind", "Kind", lambda: [k.value for k in Kind]),
    ("scope", "Scope", lambda: [s.value for s in Scope]),
    ("language", "Language", lambda: [SHARED] + [lang.value for lang in Language]),
    ("bottleneck", "Bottleneck", lambda: [b.value for b in Bottleneck]),
    ("metric", "Metric", lambda: list(METRICS)),
    ("status", "Status", lambda: [s.value for s in Status]),
)


def _select(key: str, label: str, values: list[str], counts: Counter[str]) -> str:
    options = [f'<option value="">any {escape(label.lower())}</option>']
    for v in values:
        n = counts[v]
        disabled = " disabled" if n == 0 else ""
        options.append(f'<option value="{escape(v)}"{disabled}>{escape(v)} ({n})</option>')
    return (
        f'<label class="kbopt-facet">{escape(label)} '
        f'<select data-facet="{key}" id="kbopt-facet-{key}">'
        + "".join(options)
        + "</select></label>"
    )


def _when(entry: Entry, limit: int = 120) -> str:
    """First context (shortened) and the triggers, as a table cell."""
    first = textwrap.shorten(entry.contexts[0], limit, placeholder="…") if entry.contexts else ""
    triggers = " ".join(f"<code>{escape(t.expression)}</code>" for t in entry.triggers)
    sep = "<br>" if first and triggers else ""
    return f'{escape(first)}{sep}<span class="kbopt-triggers">{triggers}</span>'


def render_facet_table(entries: Sequence[Entry], href: Callable[[str], str]) -> str:
    """The filter controls and the table, as one HTML fragment."""
    ordered = sorted(
        entries, key=lambda e: (e.kind.value, e.language.value if e.language else "", e.name)
    )
    values = {e.name: facet_values(e) for e in ordered}
    controls = []
    for key, label, vocabulary in FACETS:
        counts: Counter[str] = Counter(v for fv in values.values() for v in fv[key])
        controls.append(_select(key, label, vocabulary(), counts))
    controls.append(
        '<label class="kbopt-facet" title="with a language, keep the entries of no '
        'particular language too (as kbopt recommend --language does)">'
        '<input type="checkbox" id="kbopt-facet-shared" checked> with shared entries</label>'
    )
    controls.append(
        '<label class="kbopt-facet">Words <input type="search" id="kbopt-facet-text" '
        'data-facet-text placeholder="e.g. split kv"></label>'
    )
    controls.append('<button type="button" id="kbopt-facet-reset">Reset</button>')
    total = len(ordered)
    columns = [
        ("Entry", "name"),
        ("Kind", "kind"),
        ("Language", "language"),
        ("Bottlenecks", None),
        ("When to apply", None),
        ("Impact", "impact"),
        ("Status", "status"),
        ("Evidence", "evidence"),
    ]
    head = (
        "<tr>"
        + "".join(
            f'<th data-sort="{key}" title="sort by {label.lower()}">{label}</th>'
            if key
            else f"<th>{label}</th>"
            for label, key in columns
        )
        + "</tr>"
    )
    rows = []
    for e in ordered:
        fv = values[e.name]
        attrs = " ".join(f'data-{k}="{escape(" ".join(v))}"' for k, v in fv.items())
        text = " ".join(
            [
                e.name,
                e.title,
                *(t.expression for t in e.triggers),
                *e.applies_to,
                *e.contexts,
                *fv["bottleneck"],
            ]
        )
        evidence_rows = sum(len(b.rows) for b in e.evidence)
        rows.append(
            f'<tr class="kbopt-entry-row" id="row-{escape(e.name)}" {attrs} '
            f'data-text="{escape(text.lower())}" data-name="{escape(e.name)}" '
            f'data-impact-rank="{IMPACT_RANK.get(e.impact.value, 0)}" '
            f'data-evidence="{evidence_rows}">'
            f'<td><a href="{escape(href(e.name))}"><code>{escape(e.name)}</code></a>'
            f'<br><span class="kbopt-title">{escape(e.title)}</span></td>'
            f"<td>{escape(e.kind.value)}</td>"
            f"<td>{escape(fv['language'][0])}</td>"
            f"<td>{escape(', '.join(fv['bottleneck']))}</td>"
            f"<td>{_when(e)}</td>"
            f"<td>{escape(e.impact.value)} (~{e.expected_gain_pct:g}%)</td>"
            f"<td>{escape(e.status.value)}</td>"
            f"<td>{evidence_rows}</td></tr>"
        )
    return (
        '<div class="kbopt-catalog" id="kbopt-catalog">\n'
        f'<form class="kbopt-facets" onsubmit="return false">{"".join(controls)}</form>\n'
        '<p class="kbopt-url-problems" id="kbopt-url-problems" hidden></p>\n'
        f'<p class="kbopt-count" id="kbopt-count" data-total="{total}">'
        f"{total} of {total} entries shown</p>\n"
        '<div class="kbopt-table-wrap">'
        '<table class="kbopt-catalog-table docutils" id="kbopt-catalog-table">'
        f"<thead>{head}</thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody></table></div>\n"
        '<p class="kbopt-empty" id="kbopt-empty" hidden>No entry matches these filters.</p>\n'
        "</div>"
    )
