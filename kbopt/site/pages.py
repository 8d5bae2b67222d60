"""One MyST page per entry, rendered from the typed `Entry`.

The page follows the entry file's own sections, in the template's order, with two
additions a reader needs: a header table of the typed fields (kind, scope, language,
impact, risk, status, contexts, bottlenecks, triggers) right under the title, and the
interactions turned into links, in both directions (the entries this one names, and
the entries that name it).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from kbopt.model import Entry, EvidenceBlock, trigger_groups
from kbopt.site.speedup import row_speedup
from kbopt.vocab import CONTEXTS, METRICS

ENTRIES_DIR = "entries"  # under the generated folder


def entry_docname(name: str) -> str:
    """Docname of an entry page, relative to the generated folder."""
    return f"{ENTRIES_DIR}/{name}"


def md_inline(text: str) -> str:
    """One line of prose, safe inside a table cell or a bullet."""
    return " ".join(text.split()).replace("|", "\\|")


def code(text: str) -> str:
    """Inline code that survives backticks inside the text."""
    fence = "``" if "`" in text else "`"
    pad = " " if fence == "``" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def fenced(body: str, lang: str = "") -> str:
    """A fenced block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in body.split("\n") if set(run) == {"`"}), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}{lang}\n{body.rstrip()}\n{fence}"


def _list_table(rows: Sequence[tuple[str, str]], css_class: str) -> list[str]:
    lines = ["```{list-table}", f":class: {css_class}", ":widths: 20 80", ""]
    for key, value in rows:
        lines += [f"* - {key}", f"  - {value or '—'}"]
    lines.append("```")
    return lines


def header_rows(entry: Entry, source_path: str) -> list[tuple[str, str]]:
    """The typed fields shown under an entry's title."""
    triggers = " · ".join(
        " or ".join(code(t.expression) for t in group) for group in trigger_groups(entry.triggers)
    )
    return [
        ("Entry id", code(entry.name)),
        ("Kind", entry.kind.value),
        ("Scope", entry.scope.value),
        ("Language", entry.language.value if entry.language else "any (shared entry)"),
        ("Impact", f"{entry.impact.value} (expected gain ~{entry.expected_gain_pct:g}%)"),
        ("Risk", entry.risk.value),
        ("Status", entry.status.value),
        ("Applies to", ", ".join(entry.applies_to)),
        ("Bottlenecks", ", ".join(b.value for b in entry.bottlenecks)),
        ("Triggers", triggers),
        ("Evidence", f"{sum(len(b.rows) for b in entry.evidence)} rows"),
        ("Updated", entry.updated.isoformat()),
        ("Source file", code(source_path)),
    ]


def _evidence_block(block: EvidenceBlock, index: int, links: str) -> list[str]:
    lines = [f"**Evidence {index}** — {block.source_type.value}", ""]
    provenance = [
        ("Source", block.source),
        ("Device", block.device),
        ("Versions", block.versions),
        ("Date", block.date),
        ("Command", code(block.command) if block.command else None),
    ]
    for key, value in provenance:
        if value:
            lines.append(f"- {key}: {md_inline(value) if key != 'Command' else value}")
    if links:
        lines.append(f"- Links: {links}")
    lines += [
        "",
        "| Config | Before | After | Change (as written) | Speed-up |",
        "|---|---|---|---|---|",
    ]
    for row in block.rows:
        cells = [md_inline(c) for c in (row.config, row.before, row.after, row.change)]
        s = row_speedup(row)
        cells.append(f"{s.text} ({s.basis})" if s else "—")
        lines.append("| " + " | ".join(cells) + " |")
    lines.append("")
    return lines


def render_entry_page(
    entry: Entry,
    *,
    source_path: str,
    known: Mapping[str, Entry],
    incoming: Sequence[tuple[str, str, str]],
    plot_html: str | None,
    source_links: Callable[[EvidenceBlock], str] = lambda _b: "",
    measured_moves: Sequence[Mapping[str, Any]] = (),
) -> str:
    """The page text of one entry.

    `known` maps names to entries (for link titles); `incoming` is the list of
    (source name, relation, note) of the interactions that point at this entry;
    `plot_html` is its evidence plot (inline SVG), if it has one; `source_links`
    gives the MyST links of an evidence block's Source (devlog section, results file,
    web address); `measured_moves` is what each of its moves found in the project's
    measured ablations (`kbopt.workflow.move_record.entry_move_rows`).  Entry pages are orphans: the catalog pages list them, and leaving
    them out of the toctree keeps 1,000 entries out of every page's navigation.
    """
    lines = [
        "---",
        "orphan: true",
        "---",
        f"(entry-{entry.name})=",
        f"# {md_inline(entry.title)}",
        "",
        "```{index} single: " + entry.name + "; " + entry.kind.value,
        "```",
        "",
    ]
    lines += _list_table(header_rows(entry, source_path), "kbopt-entry-header")
    lines += ["", "## When to Apply", ""]
    lines += [f"- {md_inline(c)}" for c in entry.contexts]
    for group in trigger_groups(entry.triggers):
        note = f": {md_inline(group[0].note)}" if group[0].note else ""
        lines.append(f"- {' or '.join(code(t.expression) for t in group)}{note}")
    contexts = ", ".join(f"{c} ({CONTEXTS[c]})" for c in entry.applies_to)
    lines += ["", f"Kernel contexts: {md_inline(contexts)}.", ""]
    lines += ["## Mechanism", "", entry.mechanism.strip() or "*(not written yet)*", ""]
    lines += ["## Affected Metrics", ""]
    for m in entry.affected_metrics:
        meta = METRICS[m.metric]
        note = f": {md_inline(m.note)}" if m.note else ""
        lines.append(f"- {code(m.metric)} ({meta.unit}; {md_inline(meta.description)}){note}")
    if not entry.affected_metrics:
        lines.append("*(none recorded)*")
    lines += ["", "## Implementation", ""]
    lines += [fenced(entry.implementation, "python") if entry.implementation.strip() else "—"]
    lines += ["", "## Performance Evidence", ""]
    for i, block in enumerate(entry.evidence, start=1):
        lines += _evidence_block(block, i, source_links(block))
    if not entry.evidence:
        lines += ["*(no evidence yet: `kbopt lint` flags this entry)*", ""]
    if plot_html:
        lines += ["```{raw} html", plot_html, "```", ""]
    if entry.moves:
        lines += _measured_moves(measured_moves)
    lines += ["## Generalization", "", entry.generalization.strip() or "—", ""]
    lines += ["## Pitfalls", ""]
    lines += [f"- {md_inline(p)}" for p in entry.pitfalls] or ["—"]
    lines += ["", "## Interactions", ""]
    for inter in entry.interactions:
        note = f": {md_inline(inter.note)}" if inter.note else ""
        lines.append(f"- **{inter.relation.value}** {_link(inter.target, known)}{note}")
    if not entry.interactions:
        lines.append("This entry names no interactions.")
    if incoming:
        lines += ["", "Named by other entries:", ""]
        for source, relation, note in incoming:
            shown = f": {md_inline(note)}" if note else ""
            lines.append(f"- {_link(source, known)} **{relation}** this entry{shown}")
    return "\n".join(lines).rstrip() + "\n"


def _measured_moves(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The entry's moves and how often each beat the search's best so far in the project's
    real `kbopt ablate` runs (the record the catalog search orders its moves by)."""
    lines = [
        "## Moves, as measured",
        "",
        "What each of this entry's moves found when a search applied it in this project's "
        "`kbopt ablate` runs on a real device: trials that beat the search's best so far by "
        "more than 1%, out of the trials that applied it, with its measured preconditions "
        "held or passed over (`kbopt.workflow.move_record`; the catalog search tries moves "
        "with a better record first).",
        "",
        "| Move | Preconditions held | Passed over |",
        "|---|---|---|",
    ]

    def shown(pair: Sequence[int]) -> str:
        return f"{pair[1]} of {pair[0]}" if pair[0] else "not measured"

    for row in rows:
        lines.append(
            f"| {code(row['move'])} | {shown(row['held'])} | {shown(row['passed_over'])} |"
        )
    if not rows:
        lines.append("| *(no ablation run in this project)* | | |")
    return [*lines, ""]


def _link(name: str, known: Mapping[str, Entry]) -> str:
    """A link to another entry page; plain text when the entry does not exist."""
    target = known.get(name)
    if target is None:
        return f"{code(name)} (no such entry)"
    return f"[{md_inline(target.title)}](./{name}.md) ({code(name)})"
