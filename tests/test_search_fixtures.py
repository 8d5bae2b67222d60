"""Small knowledge bases for the search and strategy tests (no tests in this module)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from kbopt.model import entry_relpath
from kbopt.vocab import Kind, Language


def entry_text(
    name: str,
    title: str,
    *,
    kind: str = "optimization",
    language: str | None = None,
    applies_to: Sequence[str] = ("any-kernel",),
    bottlenecks: Sequence[str] = ("memory",),
    gain: float = 20,
    triggers: Sequence[str] = (),
    context: str = "Any kernel.",
    mechanism: str = "Moves fewer bytes.",
    metrics: Sequence[str] = ("dram_throughput_pct",),
    status: str = "validated",
) -> str:
    lang = f"language: {language}\n" if language else ""
    when = "\n".join([f"- {context}", *(f"- `{t}`: condition." for t in triggers)])
    affected = "\n".join(f"- `{m}`: moves." for m in metrics)
    return f"""---
name: {name}
kind: {kind}
{lang}applies_to: [{", ".join(applies_to)}]
bottlenecks: [{", ".join(bottlenecks)}]
impact: high
expected_gain_pct: {gain}
risk: low
status: {status}
created: 2026-12-01
updated: 2026-12-02
---

# {title}

## When to Apply
{when}

## Mechanism
{mechanism}

## Affected Metrics
{affected}

## Implementation
```python
x = 1
```

## Performance Evidence
Source type: external report
Source: A vendor guide (2024), H100
| Config | Before | After | Change |
|--------|--------|-------|--------|
| b=1 | 10 us | 8 us | -20% |

## Generalization
A reusable rule.

## Pitfalls
- None known.

## Interactions
"""


def write_entry(root: Path, text: str) -> Path:
    """Write an entry at its KB2 path under `root` (name, kind, language read from `text`)."""
    fields = dict(
        line.split(": ", 1) for line in text.split("---")[1].strip().splitlines() if ": " in line
    )
    lang = fields.get("language")
    rel = entry_relpath(Kind(fields["kind"]), Language(lang) if lang else None, fields["name"])
    path = root / "docs" / "knowledge" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def small_kb(root: Path) -> Path:
    """Five entries covering kinds, a language, triggers and distinctive words."""
    (root / "docs" / "knowledge").mkdir(parents=True, exist_ok=True)
    write_entry(
        root,
        entry_text(
            "reduce-register-pressure",
            "Reduce register pressure to raise occupancy",
            bottlenecks=("latency",),
            triggers=("registers_per_thread > 128", "achieved_occupancy_pct < 30"),
            mechanism="Fewer live values per thread let more warps stay resident; spills vanish.",
            metrics=("registers_per_thread", "achieved_occupancy_pct"),
            gain=25,
        ),
    )
    write_entry(
        root,
        entry_text(
            "split-the-grid",
            "Split the reduction axis when the grid is small",
            applies_to=("small-grid", "attention-decode"),
            bottlenecks=("memory", "latency"),
            triggers=("ctas_per_sm < 1", "kv_len >= 1024"),
            mechanism="More CTAs put every SM to work on the KV stream.",
            metrics=("ctas_per_sm",),
            gain=50,
        ),
    )
    write_entry(
        root,
        entry_text(
            "swizzle-shared-tiles",
            "Swizzle shared-memory tiles against bank conflicts",
            language="triton",
            bottlenecks=("latency",),
            triggers=("shared_bank_conflicts > 1000",),
            mechanism="An XOR swizzle spreads a column across the 32 banks.",
            metrics=("shared_bank_conflicts",),
            gain=15,
        ),
    )
    write_entry(
        root,
        entry_text(
            "over-splitting",
            "Splitting when the grid already fills the GPU",
            kind="anti-pattern",
            applies_to=("small-grid",),
            triggers=("ctas_per_sm >= 1", "num_splits >= 4"),
            mechanism="Partial outputs and the combine launch cost more than they save.",
            metrics=("kernel_count",),
            gain=10,
        ),
    )
    write_entry(
        root,
        entry_text(
            "refuted-magic",
            "Magic register trick that was refuted",
            bottlenecks=("latency",),
            triggers=("registers_per_thread > 64",),
            status="refuted",
            gain=90,
        ),
    )
    return root
