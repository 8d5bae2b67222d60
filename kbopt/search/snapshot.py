"""A small catalog's index generation as one JSON file, for answers without whoosh.

A fresh `kbopt search` on the 42-entry bundled catalog used to spend most of its
second importing whoosh, numpy and pydantic to score a handful of documents.  After
every commit of a generation of at most `MAX_DOCS` documents the index also writes
`snapshot-<code>.json` beside the whoosh files: per live document (in whoosh's
document order) its stored answers (`search`, `show` and `list` rows, the entry as
JSON, which strategy selection reads its cards from, and the path `recommend` shows)
and its term frequencies per field, as whoosh's own analyzers produced them; and how
the analyzer turns free text into terms (`analyzer_spec`), so that a profile's text is
searched for with the index's own terms.  `kbopt.cli.quick` answers plain-word
searches, `show`, `list` and `recommend` from it with the standard library only,
after checking every entry file's (mtime, size) against the snapshot; anything else —
a changed file, a query with operators, a bigger catalog — goes the full way.

Scoring here is `kbopt.search.fast`'s BM25, operation for operation in the same
order and in float64, so both paths return the same entries with the same scores
(tests compare them).  `<code>` fingerprints the modules that decide what a snapshot
holds: after an upgrade or an edit of them, old snapshots are simply not found.

This module is imported by the quick path: standard library and kbopt.search's light
modules only; whoosh is used by the writer functions, which the index calls.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbopt.search.locations import SNAPSHOT

FORMAT = 3
MAX_DOCS = 400  # beyond this the file would cost more to load than whoosh + numpy
MAX_BYTES = 64 << 20
K1 = 1.2
B = 0.75
SHORT_FIELDS = frozenset({"title", "when"})
FILTER_FIELDS = ("kind", "scope", "language", "bottleneck", "metric")
# The modules whose code decides a snapshot's content, fingerprinted by (size, mtime).
_CODE = (
    "search/schema.py",
    "search/snapshot.py",
    "search/fast.py",
    "search/__init__.py",
    "model.py",
    "template.py",
    "vocab.py",
)
_PACKAGE = Path(__file__).resolve().parent.parent


def code_digest() -> str:
    h = hashlib.sha1(str(FORMAT).encode())
    for rel in _CODE:
        try:
            st = os.stat(_PACKAGE / rel)
            h.update(f"{rel}:{st.st_size}:{st.st_mtime_ns};".encode())
        except OSError:
            h.update(f"{rel}:-;".encode())
    return h.hexdigest()[:16]


def file_name() -> str:
    stem, ext = SNAPSHOT.rsplit(".", 1)
    return f"{stem}-{code_digest()}.{ext}"


def is_snapshot(name: str) -> bool:
    stem = SNAPSHOT.rsplit(".", 1)[0]
    return name.startswith(stem + "-") and name.endswith(".json")


# ---------------------------------------------------------------------- hits as JSON


def expression(t: dict[str, Any]) -> str:
    v = float(t["value"])
    shown = str(int(v)) if v.is_integer() else repr(v)
    return f"{t['metric']} {t['op']} {shown}"


def hit_json(
    *,
    id: str,
    kind: str,
    scope: str,
    entry: dict[str, Any],
    path: str,
    layer: str,
    score: float,
    snippet: str,
) -> dict[str, Any]:
    """One search hit as `kbopt search --json` prints it (both paths use this)."""
    return {
        "id": id,
        "title": entry["title"],
        "kind": kind,
        "scope": scope,
        "language": entry.get("language"),
        "path": path,
        "layer": layer,
        "score": round(score, 4),
        "snippet": snippet,
        "bottlenecks": entry["bottlenecks"],
        "applies_to": entry["applies_to"],
        "impact": entry["impact"],
        "expected_gain_pct": entry["expected_gain_pct"],
        "triggers": [expression(t) for t in entry.get("triggers", [])],
    }


# ---------------------------------------------------------------------- writing


def record(
    doc: dict[str, Any],
    *,
    schema: Any,
    text_fields: tuple[str, ...],
    summary: dict[str, Any],
    markdown: str,
    path: str,
    layer: str,
    public_path: str,
) -> dict[str, Any]:
    """What the snapshot keeps of one indexed document (`schema` is the whoosh schema:
    its analyzers give the exact terms and frequencies the index holds).  `path` is the
    file as a user opens it; `public_path` as generated files and `recommend` show it
    (the package path of a bundled entry in a layered project)."""
    tf: dict[str, dict[str, float]] = {}
    for name in text_fields:
        value = doc.get(name)
        if not value:
            continue
        terms: dict[str, float] = {}
        for term, _freq, weight, _value in schema[name].index(value):
            text = term.decode("utf-8") if isinstance(term, bytes) else str(term)
            terms[text] = terms.get(text, 0.0) + float(weight)  # what the postings hold
        if terms:
            tf[name] = terms
    return {
        "id": doc["id"],
        "kind": doc["kind"],
        "scope": doc["scope"],
        "keywords": {f: str(doc.get(f, "")).split() for f in FILTER_FIELDS},
        "length": int(doc["length"]),
        "content": doc["content"],
        "entry": json.loads(doc["entry"]),
        "summary": summary,
        "markdown": markdown,
        "path": path,
        "public_path": public_path,
        "layer": layer,
        "tf": tf,
    }


def write(
    gen: Path,
    *,
    order: list[str],
    records: dict[str, dict[str, Any]],
    entries: dict[str, list[Any]],
    problems: dict[str, list[str]],
    layers: list[str],
    stop_words: list[str],
    fields: list[str],
    boosts: dict[str, float],
    filter_values: dict[str, list[str]],
    analyzer: Any = None,
) -> None:
    """Write the snapshot of generation `gen` (documents in whoosh's order; `analyzer`
    is the text fields' whoosh analyzer)."""
    from kbopt.search.cachefs import replace_text

    data = {
        "format": FORMAT,
        "layers": layers,
        "entries": {rel: [v[0], v[1]] for rel, v in entries.items()},
        "problems": problems,
        "stop_words": sorted(stop_words),
        "fields": fields,
        "boosts": boosts,
        "filter_values": filter_values,
        "analyzer": analyzer_spec(analyzer),
        "order": order,
        "docs": {rel: records[rel] for rel in order},
    }
    name = file_name()
    replace_text(gen / name, json.dumps(data, ensure_ascii=False, separators=(",", ":")))
    remove_others(gen, keep=name)


def analyzer_spec(analyzer: Any) -> dict[str, Any] | None:
    """How the analyzer turns free text into terms, when it is the chain `analyze`
    repeats (whoosh's regex tokenizer, lowercase, stop words, porter2 stems); None for
    anything else (the quick path of `recommend` then declines)."""
    from whoosh.analysis import LowercaseFilter, RegexTokenizer, StemFilter, StopFilter
    from whoosh.lang.porter2 import stem

    items = list(getattr(analyzer, "items", ()))
    if [type(x) for x in items] != [RegexTokenizer, LowercaseFilter, StopFilter, StemFilter]:
        return None
    tokenizer, _, stops, stemmer = items
    if tokenizer.gaps or stemmer.stemfn is not stem or stemmer.lang or stemmer.ignore:
        return None
    return {
        "pattern": tokenizer.expression.pattern,
        "flags": int(tokenizer.expression.flags),
        "minsize": stops.min,
        "maxsize": stops.max,
        "stop_words": sorted(stops.stops),
        "stemmer": "porter2",
    }


def remove_others(gen: Path, keep: str | None = None) -> None:
    try:
        names = [p.name for p in gen.iterdir() if is_snapshot(p.name) and p.name != keep]
    except OSError:
        return
    for name in names:
        with contextlib.suppress(OSError):
            (gen / name).unlink()


def load_records(gen: Path) -> dict[str, dict[str, Any]]:
    """The document records of the snapshot in `gen` written by this code, or {}."""
    snap = load(gen)
    return snap.docs if snap is not None else {}


# ---------------------------------------------------------------------- reading


@dataclass
class Plan:
    """Plain words over text fields (the shape `kbopt.search.fast.Plan` has for them)."""

    words: list[list[tuple[str, str]]] = field(default_factory=list)
    mode: str = "and"


@dataclass
class Snapshot:
    path: Path
    layers: list[str]
    entries: dict[str, tuple[int, int]]
    problems: dict[str, list[str]]
    stop_words: frozenset[str]
    fields: list[str]
    boosts: dict[str, float]
    filter_values: dict[str, list[str]]
    order: list[str]
    docs: dict[str, dict[str, Any]]
    analyzer: dict[str, Any] | None = None  # `analyzer_spec` of the text fields
    _length_norm: list[float] | None = None

    def analyze(self, text: str) -> list[str] | None:
        """The distinct terms of free text, first seen first, as the index's analyzer
        makes them (what `kbopt.search.fast.plan_for_text` searches for); None when the
        snapshot does not describe an analyzer this can repeat."""
        spec = self.analyzer
        if spec is None or spec.get("stemmer") != "porter2":
            return None
        from whoosh.lang.porter2 import stem  # one small module, not whoosh's index

        pattern = re.compile(str(spec["pattern"]), int(spec["flags"]))
        low, high = int(spec["minsize"]), spec["maxsize"]
        stops = frozenset(spec["stop_words"])
        terms: dict[str, None] = {}
        for match in pattern.finditer(text):
            word = match.group(0).lower()
            if len(word) >= low and (high is None or len(word) <= high) and word not in stops:
                terms.setdefault(stem(word), None)
        return list(terms)

    def length_norm(self) -> list[float]:
        if self._length_norm is None:
            lengths = [float(self.docs[rel]["length"]) for rel in self.order]
            mean = math.fsum(lengths) / len(lengths) if lengths else 1.0
            m = max(1.0, mean or 1.0)
            self._length_norm = [(1.0 - B) + (B * x) / m for x in lengths]
        return self._length_norm

    def run(self, plan: Plan, filters: dict[str, str], limit: int) -> list[tuple[int, float]]:
        """(position, score) of the best `limit` documents: `FastIndex.run` in Python."""
        n = len(self.order)
        docs = [self.docs[rel] for rel in self.order]
        allowed = [True] * n
        for f, v in filters.items():
            for i, d in enumerate(docs):
                if allowed[i] and v not in d["keywords"].get(f, ()):
                    allowed[i] = False
        scores = [0.0] * n
        if plan.words:
            matched = [plan.mode == "and"] * n
            norm = self.length_norm()
            postings = _postings(docs, plan)
            for word in plan.words:
                hit = [False] * n
                for fieldname, text in word:
                    posting = postings.get((fieldname, text))
                    if not posting:
                        continue
                    df = len(posting)
                    idf = math.log(1.0 + (n - df + 0.5) / (df + 0.5))
                    boost = self.boosts.get(fieldname, 1.0)
                    short = fieldname in SHORT_FIELDS
                    for i, tf in posting:
                        nrm = 1.0 if short else norm[i]
                        scores[i] += boost * idf * tf * (K1 + 1.0) / (tf + K1 * nrm)
                        hit[i] = True
                if plan.mode == "and":
                    matched = [a and b for a, b in zip(matched, hit, strict=True)]
                else:
                    matched = [a or b for a, b in zip(matched, hit, strict=True)]
            allowed = [a and b for a, b in zip(allowed, matched, strict=True)]
        ranked = sorted((i for i in range(n) if allowed[i]), key=lambda i: (-scores[i], i))
        return [(i, scores[i]) for i in ranked[:limit]]


def _postings(docs: list[dict[str, Any]], plan: Plan) -> dict[tuple[str, str], list[Any]]:
    """(document position, term frequency) of each (field, term) the plan names, in
    document order.  One pass over the documents, each field's terms intersected with
    the plan's in C: a profile's few dozen words over every field stay cheap."""
    wanted: dict[str, set[str]] = {}
    for word in plan.words:
        for fieldname, text in word:
            wanted.setdefault(fieldname, set()).add(text)
    out: dict[tuple[str, str], list[Any]] = {}
    for i, d in enumerate(docs):
        tfs = d["tf"]
        for fieldname, texts in wanted.items():
            terms = tfs.get(fieldname)
            if not terms:
                continue
            for text in terms.keys() & texts:
                if tf := terms[text]:
                    out.setdefault((fieldname, text), []).append((i, float(tf)))
    return out


def load(gen: Path) -> Snapshot | None:
    """The snapshot of generation folder `gen` written by this code, or None.  A file
    that cannot be read as one is removed (it is derived data): the next full open
    writes a good one."""
    from kbopt.search.cachefs import read_regular

    path = gen / file_name()
    raw = read_regular(path, MAX_BYTES)
    if raw is None:
        return None
    try:
        data = json.loads(raw.decode("utf-8"))
        if data["format"] != FORMAT:
            raise ValueError("format")
        snap = Snapshot(
            path=path,
            layers=[str(x) for x in data["layers"]],
            entries={str(k): (int(v[0]), int(v[1])) for k, v in data["entries"].items()},
            problems={str(k): [str(m) for m in v] for k, v in data["problems"].items()},
            stop_words=frozenset(data["stop_words"]),
            fields=[str(f) for f in data["fields"]],
            boosts={str(k): float(v) for k, v in data["boosts"].items()},
            filter_values={str(k): [str(x) for x in v] for k, v in data["filter_values"].items()},
            order=[str(x) for x in data["order"]],
            docs=dict(data["docs"]),
            analyzer=data.get("analyzer"),
        )
        if snap.analyzer is not None and not isinstance(snap.analyzer, dict):
            raise ValueError("analyzer")
        if set(snap.order) != set(snap.docs):
            raise ValueError("order")
        for d in snap.docs.values():
            if not isinstance(d, dict) or not isinstance(d.get("tf"), dict):
                raise ValueError("doc")
    except (ValueError, KeyError, TypeError, AttributeError, IndexError):
        with contextlib.suppress(OSError):
            path.unlink()
        return None
    return snap
