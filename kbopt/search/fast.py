"""A vectorized BM25 path for the queries agents send most: words ANDed or ORed.

whoosh scores one posting at a time in Python (tens of microseconds per matching
entry); on a 10,000-entry catalog a two-word query that matches a few thousand
entries takes tens of milliseconds.  This module reads each term's postings once from
the same whoosh index (public `items_as("weight")`), keeps them as numpy arrays for
the life of the index generation, and scores whole queries with array operations.

Only plain shapes are compiled: terms, ORs of one word across fields (what the
multi-field parser produces), and ANDs / ORs of those, with keyword terms
(`kind:optimization`, `metric:ctas_per_sm`) acting as filters.  Anything else —
phrases, prefixes, wildcards, NOT, ranges — returns None and whoosh runs the query.
Scoring is BM25 (k1=1.2, b=0.75 against the entry's word count, no length
normalization on the title and When to Apply) with the field boosts of the schema, in
float64 and in a fixed order of operations, with ties broken by document number: the
quick path's Python copy (`kbopt.search.snapshot`) gives the same scores bit for bit.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from whoosh import query as wq

from kbopt.search.schema import FIELD_BOOSTS, KEYWORD_FIELDS, LENGTH_FIELD, TEXT_FIELDS
from kbopt.search.snippets import _SNIPPET_CHARS, make_snippet

__all__ = ["_SNIPPET_CHARS", "FastIndex", "Plan", "compile_query", "make_snippet", "stems_of"]

K1 = 1.2
B = 0.75
MASK_FIELDS = frozenset({*KEYWORD_FIELDS, "id", "path"})
SHORT_FIELDS = frozenset({"title", "when"})


@dataclass
class Plan:
    """A compiled query: words (each an OR of (field, term) pairs) and keyword masks."""

    words: list[list[tuple[str, str]]] = field(default_factory=list)
    masks: list[tuple[str, str]] = field(default_factory=list)
    mode: str = "and"  # how the words combine
    phrases: list[list[str]] = field(default_factory=list)  # stems that must be adjacent


def _word(q: Any) -> list[tuple[str, str]] | None:
    """One word: a text-field Term, or an Or of Terms with the same text."""
    if isinstance(q, wq.Term) and q.fieldname in TEXT_FIELDS:
        return [(q.fieldname, q.text)]
    if isinstance(q, wq.Or) and q.subqueries:
        terms = q.subqueries
        if all(isinstance(t, wq.Term) and t.fieldname in TEXT_FIELDS for t in terms) and (
            len({t.text for t in terms}) == 1
        ):
            return [(t.fieldname, t.text) for t in terms]
    return None


def _phrase(q: Any) -> tuple[list[list[tuple[str, str]]], list[str]] | None:
    """A quoted phrase (one Phrase, or an Or of the same Phrase across text fields):
    its words ANDed for candidates, and the stems to check for adjacency."""
    subs = q.subqueries if isinstance(q, wq.Or) else [q]
    if not subs or not all(isinstance(p, wq.Phrase) and p.fieldname in TEXT_FIELDS for p in subs):
        return None
    stems = list(subs[0].words)
    if any(list(p.words) != stems for p in subs):
        return None
    fields = [p.fieldname for p in subs]
    return [[(f, w) for f in fields] for w in stems], stems


def _mask(q: Any) -> tuple[str, str] | None:
    if isinstance(q, wq.Term) and q.fieldname in MASK_FIELDS:
        return (q.fieldname, q.text)
    return None


def compile_query(q: Any) -> Plan | None:
    """A Plan for the shapes above, or None when whoosh must run the query."""
    plan = Plan()
    word, mask, phrase = _word(q), _mask(q), _phrase(q)
    if word is not None:
        plan.words.append(word)
        return plan
    if mask is not None:
        plan.masks.append(mask)
        return plan
    if phrase is not None:
        plan.words += phrase[0]
        plan.phrases.append(phrase[1])
        return plan
    if isinstance(q, wq.And | wq.Or) and q.subqueries:
        plan.mode = "and" if isinstance(q, wq.And) else "or"
        for sub in q.subqueries:
            w, m, ph = _word(sub), _mask(sub), _phrase(sub)
            if w is not None:
                plan.words.append(w)
            elif m is not None and plan.mode == "and":
                plan.masks.append(m)
            elif ph is not None and plan.mode == "and":
                plan.words += ph[0]
                plan.phrases.append(ph[1])
            else:
                return None
        return plan
    return None


def _phrase_regex(stems: list[str]) -> re.Pattern[str]:
    parts = [re.escape(s[:-1] if s.endswith("i") and len(s) > 3 else s) + r"\w*" for s in stems]
    return re.compile(r"\b" + r"\W+".join(parts), re.IGNORECASE)


def plan_for_text(schema: Any, text: str) -> Plan | None:
    """An OR plan of every analysed word of free text over the default fields.

    Used for a profile's root cause and key issues: no query syntax, no parser cost.
    """
    from kbopt.search.schema import DEFAULT_FIELDS

    analyzer = schema["mechanism"].analyzer  # every text field shares one analyzer
    stems = list(dict.fromkeys(t.text for t in analyzer(text)))
    if not stems:
        return None
    return Plan(words=[[(f, s) for f in DEFAULT_FIELDS] for s in stems], mode="or")


def read_postings(reader: Any, fieldname: str, text: str) -> tuple[np.ndarray, np.ndarray]:
    """A term's postings as arrays, segment by segment.

    whoosh hands postings out one at a time (about a microsecond each); its on-disk
    blocks already hold them as arrays.  For whoosh's W3 codec the blocks are decoded
    with numpy; any other matcher, or any surprise, takes the public `items_as` path.
    """
    from whoosh.matching.wrappers import FilterMatcher

    ids_parts: list[np.ndarray] = []
    tf_parts: list[np.ndarray] = []
    for segreader, offset in reader.leaf_readers():
        if (fieldname, text) not in segreader:
            continue
        m = segreader.postings(fieldname, text)
        leaf = m.child if isinstance(m, FilterMatcher) else m  # deleted docs: `live` mask
        blocks = _w3_blocks(leaf)
        if blocks is None:
            pairs = list(segreader.postings(fieldname, text).items_as("weight"))
            blocks = (
                np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs)),
                np.fromiter((p[1] for p in pairs), dtype=np.float32, count=len(pairs)),
            )
        ids_parts.append(blocks[0] + offset)
        tf_parts.append(blocks[1].astype(np.float64))
    if not ids_parts:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return np.concatenate(ids_parts), np.concatenate(tf_parts)


def _w3_blocks(m: Any) -> tuple[np.ndarray, np.ndarray] | None:
    """Decode every block of a whoosh W3 leaf matcher at once; None if it is not one."""
    if type(m).__name__ != "W3LeafMatcher":
        return None
    try:
        ids_parts, tf_parts = [], []
        while True:
            if m._data is None:
                m._read_data()
            raw_ids, raw_w = m._data[0], m._data[1]
            ids = np.asarray(raw_ids, dtype=np.int64)
            if not m._byteids:
                ids = np.cumsum(ids)  # blocks store deltas from 0
            n = m._blocklength
            if raw_w is None:
                tf = np.ones(n, dtype=np.float32)
            elif isinstance(raw_w, float):
                tf = np.full(n, raw_w, dtype=np.float32)
            else:
                tf = np.asarray(raw_w, dtype=np.float32)
            if len(ids) != n or len(tf) != n:
                return None
            ids_parts.append(ids)
            tf_parts.append(tf)
            if m._lastblock:
                break
            m._goto(m._nextoffset)
        ids_all = np.concatenate(ids_parts)
        if len(ids_all) > 1 and not bool(np.all(np.diff(ids_all) > 0)):
            return None  # not what we expect the format to be: use the public path
        return ids_all, np.concatenate(tf_parts)
    except (AttributeError, TypeError, ValueError, IndexError):
        return None


class FastIndex:
    """Numpy views of one whoosh index generation, filled lazily and kept while it lives."""

    def __init__(self, searcher: Any):
        self.searcher = searcher
        reader = searcher.reader()
        self.n = reader.doc_count_all()
        self.live = np.zeros(self.n, dtype=bool)
        self.live[np.fromiter(reader.all_doc_ids(), dtype=np.int64)] = True
        self.live_count = int(self.live.sum())
        lengths = np.zeros(self.n, dtype=np.float64)
        if reader.has_column(LENGTH_FIELD):
            col = reader.column_reader(LENGTH_FIELD)
            lengths[:] = np.fromiter((float(v or 0) for v in col), dtype=np.float64, count=self.n)
        live_lengths = lengths[self.live].tolist()
        # fsum: the exactly rounded mean, the same whatever the summation order.
        mean = math.fsum(live_lengths) / len(live_lengths) if live_lengths else 1.0
        self.length_norm = (1.0 - B) + (B * lengths) / max(1.0, mean or 1.0)
        self._ids: list[str] | None = None
        self._postings: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}
        self._masks: dict[tuple[str, str], np.ndarray] = {}

    def entry_id(self, docnum: int) -> str:
        """The entry name of a document, from the `id` column (read once, in bulk)."""
        if self._ids is None:
            reader = self.searcher.reader()
            if not reader.has_column("id"):
                return str(self.searcher.stored_fields(docnum)["id"])
            col = reader.column_reader("id")
            self._ids = [v.decode() if isinstance(v, bytes) else str(v) for v in col]
        return self._ids[docnum]

    def postings(self, fieldname: str, text: str) -> tuple[np.ndarray, np.ndarray]:
        """(docnums, term frequencies) of one term, including deleted documents (the
        `live` mask drops those), read once and kept."""
        key = (fieldname, text)
        got = self._postings.get(key)
        if got is None:
            got = self._postings[key] = read_postings(self.searcher.reader(), fieldname, text)
        return got

    def mask(self, fieldname: str, text: str) -> np.ndarray:
        key = (fieldname, text)
        m = self._masks.get(key)
        if m is None:
            m = np.zeros(self.n, dtype=bool)
            ids, _ = self.postings(fieldname, text)
            m[ids] = True
            self._masks[key] = m
        return m

    def run(self, plan: Plan, filters: dict[str, str], limit: int) -> list[tuple[int, float]]:
        """(docnum, score) of the best `limit` live documents, best first."""
        allowed = self.live.copy()
        for f, v in [*filters.items(), *plan.masks]:
            allowed &= self.mask(f, v)
        scores = np.zeros(self.n, dtype=np.float64)
        if plan.words:
            matched = (
                np.ones(self.n, dtype=bool) if plan.mode == "and" else np.zeros(self.n, dtype=bool)
            )
            for word in plan.words:
                hit = np.zeros(self.n, dtype=bool)
                for fieldname, text in word:
                    ids, tf = self.postings(fieldname, text)
                    if not len(ids):
                        continue
                    # Deleted documents keep their postings until a merge: count live ones
                    # only, so an updated index ranks exactly like a rebuilt one.
                    df = int(self.live[ids].sum())
                    if not df:
                        continue
                    idf = math.log(1.0 + (self.live_count - df + 0.5) / (df + 0.5))
                    # Titles and When to Apply are short: no length normalization there.
                    norm = 1.0 if fieldname in SHORT_FIELDS else self.length_norm[ids]
                    boost = FIELD_BOOSTS.get(fieldname, 1.0)
                    scores[ids] += boost * idf * tf * (K1 + 1.0) / (tf + K1 * norm)
                    hit[ids] = True
                if plan.mode == "and":
                    matched &= hit
                else:
                    matched |= hit
            allowed &= matched
        candidates = np.flatnonzero(allowed)
        if not len(candidates):
            return []
        cand_scores = scores[candidates]
        if plan.phrases:
            return self._verified(candidates, cand_scores, plan.phrases, limit)
        if len(candidates) > limit:
            # The `limit` best, ties at the cut taken in document order (as a full sort
            # by score then document number would): deterministic, and what the quick
            # path's plain sort returns.
            kth = -np.partition(-cand_scores, limit - 1)[limit - 1]
            above = cand_scores > kth
            tied = np.flatnonzero(cand_scores == kth)[: limit - int(above.sum())]
            top = np.concatenate([np.flatnonzero(above), tied])
            candidates, cand_scores = candidates[top], cand_scores[top]
        order = np.lexsort((candidates, -cand_scores))
        return [(int(candidates[i]), float(cand_scores[i])) for i in order]

    def _verified(
        self, candidates: np.ndarray, scores: np.ndarray, phrases: list[list[str]], limit: int
    ) -> list[tuple[int, float]]:
        """Best-first candidates whose stored text holds every phrase (words adjacent)."""
        patterns = [_phrase_regex(p) for p in phrases]
        out: list[tuple[int, float]] = []
        for i in np.lexsort((candidates, -scores)):
            doc = int(candidates[i])
            stored = self.searcher.stored_fields(doc)
            text = " ".join([stored.get("title", ""), stored.get("content", "")])
            if all(p.search(text) for p in patterns):
                out.append((doc, float(scores[i])))
                if len(out) == limit:
                    break
        return out


# ------------------------------------------------------------------ snippets


def stems_of(q: Any) -> list[str]:
    """The analysed words of a query in text fields (what a snippet should show)."""
    out = []
    for fieldname, text in q.iter_all_terms():
        if fieldname in TEXT_FIELDS and isinstance(text, str) and text not in out:
            out.append(text)
    return out
