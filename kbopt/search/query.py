"""Queries over the index: parsing with clear errors, filters, ranked hits with snippets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from whoosh import qparser
from whoosh import query as wq

from kbopt.errors import KbError
from kbopt.search.schema import (
    DEFAULT_FIELDS,
    FIELD_BOOSTS,
    KEYWORD_FIELDS,
    SCHEMA_VERSION,
    TEXT_FIELDS,
)
from kbopt.vocab import CONTEXTS, METRICS, Bottleneck, Kind, Language, Level, Scope, Status

FILTER_VALUES: dict[str, list[str]] = {
    "kind": [k.value for k in Kind],
    "scope": [s.value for s in Scope],
    "language": [*(lang.value for lang in Language), "shared"],
    "bottleneck": [b.value for b in Bottleneck],
    "metric": list(METRICS),
}
# The keyword fields a query may name whose values are a closed vocabulary: a value
# outside it matches nothing, so it is a mistake to report, not an empty answer.
CLOSED_FIELD_VALUES: dict[str, list[str]] = {
    **FILTER_VALUES,
    "context": list(CONTEXTS),
    "impact": [level.value for level in Level],
    "risk": [level.value for level in Level],
    "status": [s.value for s in Status],
}
QUERY_FIELDS = (*TEXT_FIELDS, *KEYWORD_FIELDS, "id", "path")
# `word:` at a term start, outside quotes is close enough: a URL-like `http://` is skipped.
_FIELD_PREFIX = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=\())([A-Za-z_]+):(?!//)")
# `kind:` with nothing after it: whoosh would drop the field and search for nothing.
_EMPTY_FIELD = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=\())([A-Za-z_]+):(?=\s|$|\))")


def check_filters(filters: Mapping[str, str | None]) -> dict[str, str]:
    """Drop empty filters; refuse values outside the closed vocabularies."""
    out = {}
    for key, value in filters.items():
        if value is None or value == "":
            continue
        allowed = FILTER_VALUES[key]
        if value not in allowed:
            raise KbError(f"unknown {key} {value!r}; use one of: {', '.join(allowed)}")
        out[key] = value
    scope, language = out.get("scope"), out.get("language")
    if scope and language and (scope == "language") != (language != "shared"):
        # Shared entries are exactly those without a language: this pair matches nothing.
        raise KbError(
            f"scope {scope!r} and language {language!r} contradict each other (a shared "
            "entry has no language); give one of them"
        )
    return out


def filter_query(filters: Mapping[str, str]) -> Any:
    terms = [wq.Term(k, v) for k, v in filters.items()]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else wq.And(terms)


def parse_query(schema: Any, text: str, *, any_word: bool = False) -> Any:
    """A whoosh query over the default fields; every user mistake is a KbError.

    Parsing costs about a millisecond, as much as running the query: parsed queries are
    kept per schema version (the schema's analyzers decide the terms).
    """
    key = (SCHEMA_VERSION, text, any_word)  # every index of one version has one schema
    q = _PARSED.get(key)
    if q is None:
        q = _parse(schema, text, any_word)
        if len(_PARSED) >= 512:
            _PARSED.clear()
        _PARSED[key] = q
    return q


_PARSED: dict[tuple[int, str, bool], Any] = {}


def _parse(schema: Any, text: str, any_word: bool) -> Any:
    if not text or not text.strip():
        raise KbError("empty query: give words to search for, e.g. `kbopt search 'register spill'`")
    if text.count('"') % 2:
        # whoosh would search the quote's words as loose words, hiding the typo.
        raise KbError(f'unbalanced " in query {text!r}: a phrase is "words in quotes"')
    depth = 0
    for part in text.split('"')[::2]:  # outside the phrases
        for ch in part:
            depth += {"(": 1, ")": -1}.get(ch, 0)
            if depth < 0:
                raise KbError(f"unbalanced ) in query {text!r}: it closes no (")
    if depth:
        # whoosh would close it at the end without a word, hiding the typo.
        raise KbError(
            f"unbalanced ( in query {text!r}: close each group, e.g. (split OR tile) decode"
        )
    words = " ".join(text.split('"')[::2]).replace("(", " ( ").replace(")", " ) ").split()
    for i, word in enumerate(words):
        before = words[i - 1] if i else "("
        after = words[i + 1] if i + 1 < len(words) else ")"
        if (word in ("AND", "OR") and (before == "(" or after == ")")) or (
            word == "NOT" and after == ")"
        ):
            # whoosh would drop the operator without a word, answering another question
            raise KbError(
                f"{word} in query {text!r} has no term on "
                + ("its right" if after == ")" else "its left")
                + ": write e.g. split AND decode, split OR tile, split NOT decode"
            )
    for name in _FIELD_PREFIX.findall(text):
        if name not in QUERY_FIELDS:
            raise KbError(
                f"unknown field {name!r} in query {text!r}; searchable fields: "
                + ", ".join(QUERY_FIELDS)
            )
    empty = _EMPTY_FIELD.search(text)
    if empty:
        name = empty.group(1)
        raise KbError(
            f"field {name!r} has no value in query {text!r}: write {name}:VALUE, no space"
        )
    group = qparser.OrGroup.factory(0.9) if any_word else qparser.AndGroup
    parser = qparser.MultifieldParser(
        list(DEFAULT_FIELDS), schema, fieldboosts=dict(FIELD_BOOSTS), group=group
    )
    try:
        q = parser.parse(text)
    except Exception as exc:  # whoosh's parser rarely raises; if it does, say so plainly
        raise KbError(f"cannot parse query {text!r}: {exc}") from None
    if q is wq.NullQuery or isinstance(q, type(wq.NullQuery)):
        raise KbError(
            f"query {text!r} has nothing to search for (only stop words or unbalanced "
            "operators?); try plain keywords such as `bank conflict shared memory`"
        )
    for leaf in q.leaves():
        allowed = CLOSED_FIELD_VALUES.get(getattr(leaf, "fieldname", ""))
        if isinstance(leaf, wq.Term) and allowed is not None and leaf.text not in allowed:
            raise KbError(
                f"unknown {leaf.fieldname} {leaf.text!r} in query {text!r}; use one of: "
                + ", ".join(allowed)
            )
    return q


def run(
    searcher: Any, fast: Any, q: Any, filters: Mapping[str, str], limit: int
) -> list[tuple[int, float]]:
    """(docnum, score) of the best `limit` documents: numpy BM25 when the query is plain
    words (see `kbopt.search.fast`), whoosh otherwise."""
    from kbopt.search.fast import compile_query

    plan = compile_query(q)
    if plan is not None:
        return fast.run(plan, dict(filters), limit)
    try:
        results = searcher.search(q, filter=filter_query(filters), limit=limit)
    except Exception as exc:  # e.g. a phrase on a field indexed without positions
        raise KbError(f"cannot run query {q}: {exc}") from None
    return [(hit.docnum, float(hit.score or 0.0)) for hit in results]
