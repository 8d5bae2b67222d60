"""Full-text and fielded search over the catalog.

`search("register spill", kind="optimization", language="triton")` returns ranked
`Hit`s.  The index lives in a cache folder (see `kbopt.search.index`), is built on
first use, kept up to date incrementally, and rebuilt with a one-line notice when it
is missing, corrupt or from another schema version.

This module stays light: whoosh, pydantic and the store are imported only when an
index is opened or an entry decoded, so `import kbopt` (and the quick path of the
command line, `kbopt.cli.quick`) does not pay for them.  Query syntax is whoosh's: words are ANDed,
`OR`, `NOT`, `"phrases"`, `prefix*`, and fields such as `title:split`,
`metric:ctas_per_sm`, `context:mla`, `bottleneck:memory`.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.layers import PROJECT
from kbopt.search.snapshot import hit_json

if TYPE_CHECKING:
    from kbopt.model import Entry
    from kbopt.search.index import SearchIndex
    from kbopt.store import Store

__all__ = ["Hit", "attach", "get_index", "search"]

_INDEXES: dict[tuple[Path, tuple[Path, ...], Path], SearchIndex] = {}
_GUARD = threading.Lock()


@dataclass(frozen=True)
class Hit:
    """One search result: the entry, its score and a highlighted snippet.

    `entry` (the typed `Entry`) is decoded from the index on first access, so a caller
    that only reads ids, paths and scores pays for none of it.
    """

    id: str
    kind: str
    # Relative to the project root (docs/knowledge/optimizations/x.md) for a project
    # entry; the file inside the installed kbopt for a bundled one.
    path: str
    score: float
    snippet: str  # matched words in **bold**
    stored: dict[str, Any] = field(repr=False, compare=False)
    layer: str = PROJECT  # or BUNDLED (kbopt.layers)

    @cached_property
    def entry(self) -> Entry:
        from kbopt.model import Entry

        return Entry.model_validate(self._entry_json)

    @cached_property
    def _entry_json(self) -> dict[str, Any]:
        data: dict[str, Any] = json.loads(self.stored["entry"])
        return data

    def to_dict(self) -> dict[str, Any]:
        return hit_json(
            id=self.id,
            kind=self.kind,
            scope=self.stored["scope"],
            entry=self._entry_json,
            path=self.path,
            layer=self.layer,
            score=self.score,
            snippet=self.snippet,
        )


def _where(store: Store, rel: str) -> tuple[str, str]:
    """(layer, path as a user opens it) of the document keyed `rel`."""
    from kbopt.store import KNOWLEDGE_DIR

    project = f"{KNOWLEDGE_DIR.as_posix()}/{rel}"
    if len(store.layers) == 1:
        return PROJECT, project
    found = store.locate(rel)
    if found is None:  # removed since it was indexed; the next freshness check drops it
        return PROJECT, project
    return store.layer_of(found).name, store.display(found)


def get_index(store: Store | None = None) -> SearchIndex:
    """The process-wide index object of a knowledge base (opened lazily, reused)."""
    from kbopt.search.index import SearchIndex, index_dir
    from kbopt.store import Store

    store = store or Store()
    # Two stores of one project with other layers see other entries: one object each.
    key = (store.root, tuple(la.knowledge_dir for la in store.layers), index_dir(store))
    with _GUARD:
        ix = _INDEXES.get(key)
        if ix is None:
            ix = _INDEXES[key] = SearchIndex(store, key[2])
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
    from kbopt.search.fast import stems_of
    from kbopt.search.query import check_filters, parse_query, run
    from kbopt.search.snippets import make_snippet

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

    def run_query() -> list[Hit]:
        searcher = ix.searcher()
        q = parse_query(searcher.schema, query)
        assert ix.gen is not None
        ranked = run(searcher, ix.gen.fast(), q, filters, limit)
        stems = stems_of(q) if snippets else []
        hits = []
        for docnum, score in ranked:
            stored, text = ix.gen.stored(docnum)
            layer, path = _where(ix.store, stored["path"])
            hits.append(
                Hit(
                    id=stored["id"],
                    kind=stored["kind"],
                    path=path,
                    score=score,
                    snippet=make_snippet(text, stems, normalized=True) if snippets else "",
                    stored=stored,
                    layer=layer,
                )
            )
        return hits

    return ix.reading(run_query)
