"""The quick path of `kbopt search|show|list|recommend`: answers in a blink.

Agents call these commands again and again, each time as a new process.  Importing
whoosh, numpy and pydantic to answer from a 42-entry catalog cost most of a second,
so `kbopt.cli.main` first offers the command line to `answer` here, which uses the
standard library only: it finds the project and its index like the store does, reads
the generation's snapshot (`kbopt.search.snapshot`), checks every entry file's
(mtime, size) against it, and prints exactly what the full command would print.
`recommend` reads the profile with `kbopt.contracts.profile_text` (the contract's
rules without pydantic) and ranks with `kbopt.ranking`, the rules `kbopt.strategy`
runs too, over the cards and term frequencies the snapshot keeps.

It declines (returns None, and the full command runs) whenever it is not sure to give
the same answer: an option it does not handle (`recommend --fill`, `--timeout`) or a
value the full command would refuse, a query with operators, phrases, fields or
wildcards, a profile read from standard input, in the autopilot analysis format,
partial (no Stages or Bottleneck section, or no metrics) or with anything the profile
parser would report, scores tied where the full ranking's first pass picks among them
in no documented order, an entry file changed since the snapshot, a catalog too big
for a snapshot, a problem the full command would warn about (an entry file that does
not parse, for search too), a damaged or missing snapshot.  Tests run every case both ways and compare the
output byte for byte.  `KBOPT_QUICK=0` turns it off.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from kbopt.errors import KbError

QUICK_ENV = "KBOPT_QUICK"
KNOWLEDGE = Path("docs") / "knowledge"
_PLAIN_WORD = re.compile(r"[A-Za-z0-9_]+")
_OPERATORS = frozenset({"AND", "OR", "NOT", "ANDNOT", "ANDMAYBE", "TO"})
_OPTIONS = {
    "search": ("--kind", "--scope", "--language", "--bottleneck", "--metric", "--limit"),
    "show": (),
    "list": ("--kind", "--language"),
    "recommend": ("--language", "--limit"),
}


def answer(argv: Sequence[str] | None) -> int | None:
    """Print the answer and return the exit code, or None to let the full CLI run."""
    if os.environ.get(QUICK_ENV, "").strip().lower() in ("0", "off", "no", "false"):
        return None
    args = list(sys.argv[1:] if argv is None else argv)
    try:
        parsed = _parse(args)
        if parsed is None:
            return None
        command, root_arg, positional, options, as_json = parsed
        snap = _snapshot(root_arg)
        if snap is None:
            return None
        got = _RUN[command](snap, positional, options)
        if got is None:
            return None
        out = got.data if isinstance(got, _Answer) else got
        text = None if as_json else _TEXT[command](snap, got)
    except (KbError, OSError, ValueError, KeyError, TypeError, IndexError, AttributeError):
        return None  # whatever surprised us, the full command knows how to say it
    except KeyboardInterrupt:
        print("kbopt: interrupted", file=sys.stderr)
        return 130
    try:
        if text is not None:
            sys.stdout.write(text)
        else:
            from kbopt.cli.common import print_json

            print_json(out)
        sys.stdout.flush()
    except BrokenPipeError:  # `kbopt search x | head`: as the full command, no traceback
        return 0
    return 0


def _parse(
    args: list[str],
) -> tuple[str, str | None, str | None, dict[str, str], bool] | None:
    """(command, --root, the positional argument, options, --json) of the command lines
    handled."""
    root: str | None = None
    i = 0
    while i < len(args) and args[i].startswith("--root"):
        if args[i] == "--root" and i + 1 < len(args):
            root, i = args[i + 1], i + 2
        elif args[i].startswith("--root="):
            root, i = args[i].split("=", 1)[1], i + 1
        else:
            return None
    if i >= len(args) or args[i] not in _OPTIONS:
        return None
    command, rest = args[i], args[i + 1 :]
    allowed = _OPTIONS[command]
    positional: list[str] = []
    options: dict[str, str] = {}
    seen_json = False
    j = 0
    while j < len(rest):
        a = rest[j]
        if a == "--json" and not seen_json:
            seen_json = True
        elif a.startswith("-") and a != "-":
            name, eq, value = a.partition("=")
            if name not in allowed or name in options:
                return None
            if not eq:
                if j + 1 >= len(rest) or rest[j + 1].startswith("-"):
                    return None
                j += 1
                value = rest[j]
            options[name] = value
        else:
            positional.append(a)
        j += 1
    want_positional = 0 if command == "list" else 1
    if len(positional) != want_positional:
        return None
    return command, root, positional[0] if positional else None, options, seen_json


class _Answer:
    """A command's answer as `--json` prints it, and as text."""

    __slots__ = ("data", "text")

    def __init__(self, data: Any, text: str):
        self.data = data
        self.text = text


def _project_root(root_arg: str | None) -> Path | None:
    """The project root as `kbopt.store.find_project_root` and `--root` find it."""
    if root_arg is not None:
        path = Path(root_arg)
        return path.resolve() if path.is_dir() else None
    env = os.environ.get("KBOPT_ROOT")
    if env:
        path = Path(env).resolve()
        return path if path.is_dir() else None  # the full command says it does not exist
    here = Path.cwd().resolve()
    for candidate in (here, *here.parents):
        if (candidate / KNOWLEDGE).is_dir():
            return candidate
    package_parent = Path(__file__).resolve().parent.parent.parent
    if (package_parent / KNOWLEDGE).is_dir():
        return package_parent
    return None


def _snapshot(root_arg: str | None) -> Any:
    """The snapshot of the project's current index generation, if it is fresh."""
    from kbopt.layers import layers_for
    from kbopt.search.cachefs import read_regular
    from kbopt.search.locations import CURRENT, index_dir_for, visible_entries
    from kbopt.search.snapshot import load

    root = _project_root(root_arg)
    if root is None:
        return None
    layers = [str(la.knowledge_dir) for la in layers_for(root / KNOWLEDGE)]
    index = index_dir_for(root)
    raw = read_regular(index / CURRENT, 256)
    if raw is None:
        return None
    name = raw.decode("ascii").strip()
    if not re.fullmatch(r"gen-[0-9A-Za-z-]{1,64}", name):
        return None
    snap = load(index / name)
    if snap is None or snap.layers != layers:
        return None
    skipped: list[str] = []
    if visible_entries(layers, skipped=skipped) != snap.entries or skipped:
        return None  # something changed (or is odd) since: the full path updates the index
    return snap


# ---------------------------------------------------------------------- commands


def _filters(snap: Any, options: dict[str, str]) -> dict[str, str] | None:
    """Validated search filters, or None when the full command would refuse one."""
    out = {}
    for key in ("kind", "scope", "language", "bottleneck", "metric"):
        value = options.get(f"--{key}")
        if value is None or value == "":
            continue
        if value not in snap.filter_values.get(key, ()):
            return None
        out[key] = value
    if "scope" in out and "language" in out:
        return None  # the full command refuses a contradictory pair
    return out


def _limit(text: str | None, default: int) -> int | None:
    if text is None:
        return default
    if not re.fullmatch(r"[0-9]{1,4}", text):
        return None
    value = int(text)
    return value if 1 <= value <= 1000 else None


def plain_plan(query: str, snap: Any) -> tuple[Any, list[str]] | None:
    """The plan of a query of plain words (what the whoosh parser makes of it: every
    word lowercased, stop words and one-letter words dropped, stemmed, searched in
    every text field), and its stems; None for anything else."""
    from whoosh.lang.porter2 import stem  # one small module, not whoosh's index

    from kbopt.search.snapshot import Plan

    words = query.split()
    if not words or any(not _PLAIN_WORD.fullmatch(w) or w in _OPERATORS for w in words):
        return None
    stems: list[str] = []
    for w in words:
        token = w.lower()
        if len(token) < 2 or token in snap.stop_words:
            continue
        stems.append(stem(token))
    if not stems or len(set(stems)) != len(stems):
        return None  # nothing left (the full command explains), or repeated words
    return Plan(words=[[(f, s) for f in snap.fields] for s in stems], mode="and"), stems


def _search(snap: Any, query: str | None, options: dict[str, str]) -> _Answer | None:
    from kbopt.search.snapshot import hit_json
    from kbopt.search.snippets import make_snippet

    filters = _filters(snap, options)
    limit = _limit(options.get("--limit"), 10)
    if filters is None or limit is None or query is None or snap.problems:
        return None  # ... or an entry that does not parse: the full command warns
    planned = plain_plan(query, snap)
    if planned is None:
        return None
    plan, stems = planned
    out = []
    ranked = snap.run(plan, filters, limit)
    for pos, score in ranked:
        d = snap.docs[snap.order[pos]]
        out.append(
            hit_json(
                id=d["id"],
                kind=d["kind"],
                scope=d["scope"],
                entry=d["entry"],
                path=d["path"],
                layer=d["layer"],
                score=score,
                snippet=make_snippet(d["content"], stems),
            )
        )
    # The text shows the score as computed, not as --json rounds it (13.38499 is 13.38).
    return _Answer(out, _search_text(out, [score for _, score in ranked]))


def _show(snap: Any, name: str | None, options: dict[str, str]) -> dict[str, Any] | None:
    found = [d for d in snap.docs.values() if d["id"] == name]
    if len(found) != 1 or snap.problems:
        return None  # unknown, ambiguous, or the store might find an unparsable file
    d = found[0]
    data = dict(d["entry"])
    data["id"] = d["id"]
    data["scope"] = d["scope"]
    data["path"] = d["path"]
    data["layer"] = d["layer"]
    return data


def _list(snap: Any, _: str | None, options: dict[str, str]) -> list[Any] | None:
    kind, language = options.get("--kind"), options.get("--language")
    if snap.problems:
        return None  # the full command warns about each problem
    if kind is not None and kind not in snap.filter_values.get("kind", ()):
        return None  # ... and refuses an unknown kind or language
    if language is not None and language not in snap.filter_values.get("language", ()):
        return None
    ids = [d["id"] for d in snap.docs.values()]
    if len(set(ids)) != len(ids):
        return None  # duplicate names: the full command reports them
    rows = []
    for d in snap.docs.values():
        row = dict(d["summary"])
        row["path"] = d["path"]
        row["layer"] = d["layer"]
        rows.append(row)
    if kind:
        rows = [r for r in rows if r["kind"] == kind]
    if language:
        want = None if language == "shared" else language
        rows = [r for r in rows if r["language"] == want]
    rows.sort(key=lambda r: (r["kind"], r["language"] or "", r["id"]))
    return rows


def _search_text(hits: list[dict[str, Any]], scores: list[float]) -> str:
    if not hits:
        return "no match\n"
    lines = []
    for h, score in zip(hits, scores, strict=True):
        where = ", bundled" if h["layer"] == "bundled" else ""
        lines.append(
            f"{score:7.2f}  {h['id']}  [{h['kind']}, {h['language'] or 'shared'}{where}]  "
            f"{h['title']}"
        )
        lines.append(f"         {h['path']}")
        if h["snippet"]:
            lines.append(f"         {h['snippet']}")
    return "\n".join(lines) + "\n"


def _show_text(snap: Any, data: dict[str, Any]) -> str:
    found = [d for d in snap.docs.values() if d["id"] == data["id"]]
    return str(found[0]["markdown"])


def _list_text(snap: Any, rows: list[dict[str, Any]]) -> str:
    layered = len(snap.layers) > 1  # one layer: nothing to tell apart
    out = []
    for r in rows:
        layer = f"{r['layer']:<8} " if layered else ""
        out.append(
            f"{r['id']:<44} {r['kind']:<13} {r['language'] or 'shared':<10} {r['impact']:<6} "
            f"{layer}{r['title']}\n"
        )
    return "".join(out)


def _recommend(snap: Any, source: str | None, options: dict[str, str]) -> _Answer | None:
    from kbopt.contracts.profile_text import read_facts
    from kbopt.ranking import (
        ALL_LANGUAGES,
        KNOWLEDGE_PATH,
        Card,
        candidates,
        default_language,
        explain_and_order,
        kernel_contexts,
        metric_weights,
        result_dict,
        result_text,
        trigger_metrics,
        unmeasured_metrics,
    )
    from kbopt.textio import read_source
    from kbopt.vocab import Language

    given = options.get("--language")
    language = None if given == "shared" else given  # "shared": shared entries only
    limit = _limit(options.get("--limit"), 10)
    if source is None or source == "-" or limit is None:
        return None  # standard input cannot be read twice: the full command reads it
    if (
        language is not None
        and language != ALL_LANGUAGES
        and language not in {lang.value for lang in Language}
    ):
        return None  # the full command names the languages
    ids = [d["id"] for d in snap.docs.values()]
    if snap.problems or len(set(ids)) != len(ids):
        return None  # the full command warns about each problem
    text, _ = read_source(source)  # a problem with the file: KbError, the full command says it
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if first.lower().startswith("primary bottleneck:"):
        return None  # the autopilot analysis format
    profile = read_facts(text)
    if profile is None or not profile.stages or profile.bottleneck is None or not profile.metrics:
        return None  # ... or a partial profile: the full command says what is missing
    if given is None:  # the profiled version's own language, as the full command defaults
        language = default_language(profile.version)
    cards = [Card.from_entry_json(snap.docs[rel]["entry"], rel) for rel in snap.order]
    shown = {f"{KNOWLEDGE_PATH}/{rel}": str(snap.docs[rel]["public_path"]) for rel in snap.order}
    relevance = text_relevance(snap, profile.text_for_search())
    if relevance is None:
        return None
    weights = metric_weights(cards)
    metrics = trigger_metrics(profile)
    picked = candidates(
        cards,
        weights,
        metrics,
        relevance,
        profile.bottleneck,
        language,
        limit,
        kernel_contexts(profile),
        unmeasured_metrics(profile),
    )
    if picked is None:
        return None
    opportunities, warnings = explain_and_order(
        cards,
        weights,
        picked[0],
        picked[1],
        metrics=metrics,
        relevance=relevance,
        bottleneck=profile.bottleneck,
        limit=limit,
        shown_path=shown.__getitem__,
    )
    data = result_dict(
        kernel=profile.kernel,
        version=profile.version,
        bottleneck=profile.bottleneck,
        language=language,
        metrics=profile.metrics,
        opportunities=opportunities,
        warnings=warnings,
    )
    text = result_text(profile.kernel, profile.version, opportunities, warnings, profile.metrics)
    return _Answer(data, text)


def text_relevance(snap: Any, text: str) -> dict[str, float] | None:
    """`kbopt.strategy._relevance` over the snapshot: each entry's BM25 score for the
    profile's words (any of them, evidence tables left out), over the best one; None
    when the snapshot cannot analyse text as the index does."""
    from kbopt.ranking import TEXT_CANDIDATES
    from kbopt.search.snapshot import Plan

    terms = snap.analyze(text)
    if not terms:
        return None if terms is None else {}
    fields = [f for f in snap.fields if f != "evidence"]
    plan = Plan(words=[[(f, t) for f in fields] for t in terms], mode="or")
    ranked = snap.run(plan, {}, TEXT_CANDIDATES)
    top = max((score for _, score in ranked), default=0.0)
    if top <= 0:
        return {}
    return {snap.docs[snap.order[pos]]["id"]: score / top for pos, score in ranked}


_RUN: dict[str, Callable[[Any, str | None, dict[str, str]], Any]] = {
    "search": _search,
    "show": _show,
    "list": _list,
    "recommend": _recommend,
}
_TEXT: dict[str, Callable[[Any, Any], str]] = {
    "search": lambda snap, got: str(got.text),
    "show": _show_text,
    "list": _list_text,
    "recommend": lambda snap, got: str(got.text),
}
