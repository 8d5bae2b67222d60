"""The whoosh schema of the catalog and the document built from one entry.

Bump `SCHEMA_VERSION` whenever the fields or what goes into them change: an index
built with another version is rebuilt automatically on the next open.
"""

from __future__ import annotations

import json
from typing import Any

from whoosh.analysis import StemmingAnalyzer
from whoosh.columns import VarBytesColumn
from whoosh.fields import COLUMN, ID, KEYWORD, NUMERIC, STORED, TEXT, Schema
from whoosh.lang.porter2 import stem as porter2_stem

from kbopt.model import Entry

SCHEMA_VERSION = 10

# Fields a query may name (`title:split`, `metric:ctas_per_sm`) and the default ones.
TEXT_FIELDS = (
    "title",
    "when",
    "mechanism",
    "affected",
    "implementation",
    "evidence",
    "generalization",
    "pitfalls",
    "interactions",
)
KEYWORD_FIELDS = (
    "kind",
    "scope",
    "language",
    "context",
    "bottleneck",
    "metric",
    "impact",
    "risk",
    "status",
)
# A query's plain words search every section; the title and When to Apply weigh more.
DEFAULT_FIELDS = TEXT_FIELDS
FIELD_BOOSTS = {"title": 3.0, "when": 2.0}
# Word count of the whole entry, kept as a column so BM25 length normalization reads
# it in bulk.
LENGTH_FIELD = "length"


def build_schema() -> Schema:
    # porter2: "splitting" -> "split".  An unbounded stem cache: whoosh's bounded one
    # evicts by scanning all its keys, which dominated one-entry updates.
    stem = StemmingAnalyzer(stemfn=porter2_stem, cachesize=-1)
    # Each section is indexed once, in its own field, without positions: phrases are
    # checked against the stored text instead (kbopt.search.fast), which keeps a
    # 10,000-entry cold build well under a minute.
    text = {name: TEXT(analyzer=stem, phrase=False) for name in TEXT_FIELDS if name != "title"}
    return Schema(
        path=ID(stored=True, unique=True, sortable=True),  # the update key; a column too
        id=ID(stored=True, sortable=True),  # sortable: a column read in bulk by fast.py
        kind=KEYWORD(stored=True),
        scope=KEYWORD(stored=True),
        language=KEYWORD(stored=True),  # "shared" for shared entries
        context=KEYWORD(stored=True, scorable=True),  # front matter applies_to tags
        bottleneck=KEYWORD(stored=True, scorable=True),
        metric=KEYWORD(stored=True, scorable=True),  # Affected Metrics + trigger metrics
        impact=KEYWORD(stored=True),
        risk=KEYWORD(stored=True),
        status=KEYWORD(stored=True),
        gain=NUMERIC(float, stored=True),
        title=TEXT(analyzer=stem, stored=True),
        content=STORED,  # every section as plain text: snippets and phrase checks
        entry=STORED,  # the Entry as JSON, so hits need no file parsing
        length=NUMERIC(int, sortable=True),
        # What strategy selection needs of the entry, as compact JSON in a column: read
        # for all entries at once without unpickling every document's stored fields.
        card=COLUMN(VarBytesColumn()),
        **text,
    )


def entry_document(entry: Entry, relpath: str) -> dict[str, Any]:
    """The whoosh document of one entry (keyword values are space-separated tokens)."""
    when = [
        " ".join(entry.applies_to),
        *entry.contexts,
        *(f"{t.expression} {t.note}" for t in entry.triggers),
    ]
    affected = [f"{m.metric} {m.note}" for m in entry.affected_metrics]
    evidence = [
        " ".join([b.source, *(f"{r.config} {r.before} {r.after} {r.change}" for r in b.rows)])
        for b in entry.evidence
    ]
    interactions = [f"{i.relation.value} {i.target} {i.note}" for i in entry.interactions]
    sections = {
        "when": "\n".join(when),
        "mechanism": entry.mechanism,
        "affected": "\n".join(affected),
        "implementation": entry.implementation,
        "evidence": "\n".join(evidence),
        "generalization": entry.generalization,
        "pitfalls": "\n".join(entry.pitfalls),
        "interactions": "\n".join(interactions),
    }
    metrics = {m.metric for m in entry.affected_metrics} | {t.metric for t in entry.triggers}
    content = "\n".join(
        [entry.title, " ".join(entry.applies_to)] + [v for v in sections.values() if v]
    )
    return {
        "path": relpath,
        "id": entry.name,
        "kind": entry.kind.value,
        "scope": entry.scope.value,
        "language": entry.language.value if entry.language else "shared",
        "context": " ".join(entry.applies_to),
        "bottleneck": " ".join(b.value for b in entry.bottlenecks),
        "metric": " ".join(sorted(metrics)),
        "impact": entry.impact.value,
        "risk": entry.risk.value,
        "status": entry.status.value,
        "gain": float(entry.expected_gain_pct),
        "title": entry.title,
        "content": content,
        "length": len(content.split()),
        "entry": json.dumps(entry.model_dump(mode="json"), separators=(",", ":")),
        "card": json.dumps(card_data(entry), separators=(",", ":")).encode(),
        **sections,
    }


def card_data(entry: Entry) -> dict[str, Any]:
    """The fields of an entry that ranking reads (same keys as the Entry's JSON)."""
    return {
        "name": entry.name,
        "title": entry.title,
        "kind": entry.kind.value,
        "language": entry.language.value if entry.language else None,
        "status": entry.status.value,
        "bottlenecks": [b.value for b in entry.bottlenecks],
        "applies_to": list(entry.applies_to),
        "expected_gain_pct": entry.expected_gain_pct,
        "impact": entry.impact.value,
        "risk": entry.risk.value,
        "triggers": [
            {
                "metric": t.metric,
                "op": t.op,
                "value": t.value,
                **({"alternative": True} if t.alternative else {}),
                **({"room": True} if t.room else {}),
                **({"defining": True} if t.defining else {}),
            }
            for t in entry.triggers
        ],
        "interactions": [
            {"relation": i.relation.value, "target": i.target} for i in entry.interactions
        ],
    }
