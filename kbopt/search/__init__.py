"""Full-text and fielded search over the catalog (S1).

`search("register spill", kind="optimization", language="triton")` returns ranked
`Hit`s.  The index lives in a cache folder (see `kbopt.search.index`), is built on
first use, kept up to date incrementally, and rebuilt with a one-line notice when it
is missing, corrupt or from another schema version.

This module stays light: whoosh is imported only when an index is opened, so
`import kbopt` does not pay for it.  Query syntax is whoosh's: words are ANDed,
`OR`, `NOT`, `"phrases"`, `prefix*`, and fields such as `title:split`,
`metric:ctas_per_sm`, `context:mla`, `bottleneck:memory`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.model import Entry
from kbopt.store import KNOWLEDGE_DIR, Store

if TYPE_CHECKING:
    from kbopt.search.index import SearchIndex

__all__ = ["Hit", "attach", "get_index", "search"]

_INDEXES: dict[tuple[Path, Path], SearchIndex] = {}
_GUARD = threading.Lock()


@dataclass(frozen=True)
class Hit:
    """One search result: the typed entry, its score and a highlighted snippet."""

    entry: Entry
    score: float
    snippet: str  # matched terms in **bold**
    path: str  # relative to the project root, e.g. docs/knowledge/optimizations/x.md

    @property
    def id(self) -> str:
        return self.entry.name

    @property
    def kind(self) -> str:
        return self.entry.kind.value

    def to_dict(self) -> dict[str, Any]:
        e = self.entry
        return {
            "id": e.name,
            "title": e.title,
            "kind": e.kind.value,
            "scope": e.scope.value,
            "language": e.language.value if e.language else None,
            "path": self.path,
            "score": round(self.score, 4),
            "snippet": self.snippet,
            "bottlenecks": [b.value for b in e.bottlenecks],
            "applies_to": list(e.applies_to),
            "impact": e.impact.value,
            "expected_gain_pct": e.expected_gain_pct,
            "triggers": [t.expression for t in e.triggers],
        }


def get_index(store: Store | None = None) -> SearchIndex:
    """The process-wide index object of a knowledge base (opened lazily, reused)."""
    from kbopt.search.index import SearchIndex, index_dir

    store = store or Store()
    key = (store.root, index_dir(store))
    with _GUARD:
        ix = _INDEXES.get(key)
        if ix is None:
            ix = _INDEXES[key] = SearchIndex(store, key[1])
        return ix


def attach(store: Store) -> SearchIndex:
    """Index every write made through `store` at once (Store.on_write hook)."""
    ix = get_index(store)
    store.on_write(ix.update_paths)
    return ix


def search(
    query: str,
    *,
    kind: str | None = None,
    scope: str | None = None,
    language: str | None = None,
    bottleneck: str | None = None,
    metric: str | None = None,
    limit: int = 10,
    store: Store | None = None,
    snippets: bool = True,
) -> list[Hit]:
    """Ranked entries matching `query`, optionally filtered by the closed vocabularies.

    `language="shared"` keeps shared entries only.  A bad query or filter raises
    `KbError` with a message that says what to change.
    """
    from kbopt.errors import KbError
    from kbopt.search.query import check_filters, parse_query, run

    if limit < 1:
        raise KbError(f"limit must be at least 1 (got {limit})")
    filters = check_filters(
        {
            "kind": kind,
            "scope": scope,
            "language": language,
            "bottleneck": bottleneck,
            "metric": metric,
        }
    )
    ix = get_index(store)
    searcher = ix.searcher()
    q = parse_query(searcher.schema, query)
    prefix = KNOWLEDGE_DIR.as_posix() + "/"
    return [
        Hit(
            entry=Entry.model_validate(json.loads(fields["entry"])),
            score=score,
            snippet=snippet,
            path=prefix + fields["path"],
        )
        for fields, score, snippet in run(searcher, q, filters, limit, snippets=snippets)
    ]
