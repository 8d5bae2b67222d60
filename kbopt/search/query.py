"""Queries over the index: parsing with clear errors, filters, ranked hits with snippets."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from whoosh import highlight, qparser
from whoosh import query as wq

from kbopt.errors import KbError
from kbopt.search.schema import DEFAULT_FIELDS, FIELD_BOOSTS, KEYWORD_FIELDS, TEXT_FIELDS
from kbopt.vocab import METRICS, Bottleneck, Kind, Language, Scope

FILTER_VALUES: dict[str, list[str]] = {
    "kind": [k.value for k in Kind],
    "scope": [s.value for s in Scope],
    "language": [*(lang.value for lang in Language), "shared"],
    "bottleneck": [b.value for b in Bottleneck],
    "metric": list(METRICS),
}
QUERY_FIELDS = (*TEXT_FIELDS, *KEYWORD_FIELDS, "id", "path")
# `word:` at a term start, outside quotes is close enough: a URL-like `http://` is skipped.
_FIELD_PREFIX = re.compile(r"(?:(?<=\s)|(?<=^)|(?<=\())([A-Za-z_]+):(?!//)")


class _MarkdownBold(highlight.Formatter):
    """Matched terms as **bold** Markdown: readable in a terminal and in agent output."""

    between = " … "

    def format_token(self, text: str, token: Any, replace: bool = False) -> str:
        return "**" + highlight.get_text(text, token, replace) + "**"


_FORMATTER = _MarkdownBold()
_FRAGMENTER = highlight.ContextFragmenter(maxchars=160, surround=50)


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
    return out


def filter_query(filters: Mapping[str, str]) -> Any:
    terms = [wq.Term(k, v) for k, v in filters.items()]
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else wq.And(terms)


def parse_query(schema: Any, text: str, *, any_word: bool = False) -> Any:
    """A whoosh query over the default fields; every user mistake is a KbError."""
    if not text or not text.strip():
        raise KbError("empty query: give words to search for, e.g. `kbopt search 'register spill'`")
    for name in _FIELD_PREFIX.findall(text):
        if name not in QUERY_FIELDS:
            raise KbError(
                f"unknown field {name!r} in query {text!r}; searchable fields: "
                + ", ".join(QUERY_FIELDS)
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
    return q


def run(
    searcher: Any, q: Any, filters: Mapping[str, str], limit: int, *, snippets: bool = True
) -> list[tuple[dict[str, Any], float, str]]:
    """(stored fields, score, snippet) of the best `limit` documents."""
    results = searcher.search(q, filter=filter_query(filters), limit=limit, terms=snippets)
    out = []
    if snippets:
        results.fragmenter = _FRAGMENTER
        results.formatter = _FORMATTER
    for hit in results:
        snippet = ""
        if snippets:
            snippet = hit.highlights("content", top=2) or ""
            if not snippet:
                snippet = hit["content"][:160].replace("\n", " ")
        out.append((hit.fields(), float(hit.score or 0.0), " ".join(snippet.split())))
    return out
