"""Search commands: search, recommend, index (status / rebuild)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from kbopt.cli.common import command, count_limit, print_json, store_from
from kbopt.errors import KbError
from kbopt.layers import BUNDLED
from kbopt.vocab import Bottleneck, Kind, Scope

if TYPE_CHECKING:  # pydantic's models load with the command that reads a profile
    from kbopt.contracts.profile import Profile
    from kbopt.store import Store


def register(sub: argparse._SubParsersAction) -> None:
    p = command(
        sub,
        "search",
        "Full-text and fielded search over the catalog (whoosh query syntax).",
        "kbopt search 'register spill' --kind optimization --language triton --json",
    )
    p.add_argument("query", help='words (ANDed), OR / NOT, "phrases", prefix*, field:value')
    p.add_argument("--kind", choices=[k.value for k in Kind], help="only entries of this kind")
    p.add_argument(
        "--scope",
        choices=[s.value for s in Scope],
        help="only shared entries, or only language-specific ones",
    )
    p.add_argument(
        "--language",
        help="only this language's entries ('shared': only entries for every language). A "
        "filter: unlike `kbopt recommend --language`, shared entries are left out",
    )
    p.add_argument(
        "--bottleneck",
        choices=[b.value for b in Bottleneck],
        help="only entries that address this bottleneck",
    )
    p.add_argument("--metric", help="a canonical metric name (see `kbopt vocab`)")
    p.add_argument(
        "--limit", type=count_limit, default=10, help="at most this many entries (default: 10)"
    )
    p.set_defaults(func=cmd_search)

    p = command(
        sub,
        "recommend",
        "Rank the catalog's optimizations for a profile (the profiler contract or an "
        "autopilot analysis) and warn about matching anti-patterns.",
        "kbopt recommend profile.md --language triton --json",
    )
    p.add_argument("profile", help="a profile Markdown file, or - for standard input")
    p.add_argument(
        "--language",
        help="keep shared entries plus this language's ('shared': shared entries only; 'all': "
        "every language). Default: the language of the profiled version's family (triton_v3: "
        "triton, cute_v7: cute-dsl), else shared entries only",
    )
    p.add_argument(
        "--limit",
        type=count_limit,
        default=10,
        help="at most this many opportunities (default: 10)",
    )
    p.add_argument(
        "--fill",
        action="store_true",
        help="print the profile with its Top 3 Opportunities filled in (Markdown)",
    )
    p.set_defaults(func=cmd_recommend)

    p = command(
        sub,
        "index",
        "Show the search index's state, or rebuild it from the entries.",
        "kbopt index status --json",
    )
    p.add_argument(
        "action",
        choices=["status", "rebuild"],
        help="status: where the index is and whether it is current; rebuild: make it anew",
    )
    p.set_defaults(func=cmd_index)


def cmd_search(args: argparse.Namespace) -> int:
    from kbopt.search import search

    store = store_from(args)
    hits = search(
        args.query,
        kind=args.kind,
        scope=args.scope,
        language=args.language,
        bottleneck=args.bottleneck,
        metric=args.metric,
        limit=args.limit,
        store=store,
    )
    warn_left_out(store)
    if args.json:
        print_json([h.to_dict() for h in hits])
        return 0
    if not hits:
        print("no match")
        return 0
    for h in hits:
        where = ", bundled" if h.layer == BUNDLED else ""
        print(
            f"{h.score:7.2f}  {h.id}  [{h.kind}, {h.entry.language or 'shared'}{where}]  "
            f"{h.entry.title}"
        )
        print(f"         {h.path}")
        if h.snippet:
            print(f"         {h.snippet}")
    return 0


def warn_left_out(store: Store) -> None:
    """Warn, as `kbopt list` does, about each entry file the answer could not include."""
    from kbopt.search import get_index

    for problem in get_index(store).left_out():
        print(f"kbopt: warning: {problem} (run `kbopt lint`)", file=sys.stderr)


def read_profile(source: str) -> tuple[Profile, str | None]:
    """A Profile from a file (or stdin): the profiler contract, or the autopilot analysis;
    with a note when the ranking will rest on less than a whole profile."""
    from kbopt.contracts.analysis import Analysis
    from kbopt.contracts.profile import Profile
    from kbopt.textio import read_source

    text, shown = read_source(source)  # regular files only, strict UTF-8
    first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if first.lower().startswith("primary bottleneck:"):
        profile = Analysis.parse(text, shown).to_profile(kernel=Path(shown).stem)
        if profile.metrics:
            return profile, None
        # An analysis is prose: its class still ranks, but say that no number did.
        return profile, (
            f"{shown}: no number in the Evidence line names a metric (e.g. `memory "
            "bandwidth at 80%`, `occupancy 25%`, `ctas_per_sm=0.5`): the ranking rests on "
            "the bottleneck class and the text only"
        )
    profile = Profile.parse(text, shown)
    if not profile.metrics:
        raise KbError(
            "the profile gives no metrics: add a `### Stages` or `### Metrics` table "
            "(metric names: kbopt vocab)",
            shown,
            1,
        )
    # Agents write partial profiles on purpose: rank them, but say what is missing.
    missing = [
        f"`### {title}`"
        for title, present in (("Stages", profile.stages), ("Bottleneck", profile.bottleneck))
        if not present
    ]
    if not missing:
        return profile, None
    count = len(profile.metrics)
    return profile, (
        f"{shown}: no {' or '.join(missing)} section: the ranking rests on "
        f"{count} metric{'s' if count > 1 else ''} only"
    )


def cmd_recommend(args: argparse.Namespace) -> int:
    from kbopt.ranking import default_language
    from kbopt.strategy import recommend

    if args.fill and args.json:
        raise KbError(
            "--fill prints the profile as Markdown and --json the ranking as JSON: choose one"
        )
    profile, gap = read_profile(args.profile)
    store = store_from(args)
    language = args.language
    if language is None:  # the profiled version's own language (the JSON's `language`)
        language = default_language(getattr(profile, "version", ""))
    result = recommend(profile, language=language, limit=args.limit, store=store)
    warn_left_out(store)
    if gap is not None:
        print(f"kbopt: warning: {gap}", file=sys.stderr)
    if args.json:
        data = result.to_dict()
        if gap is not None:  # the JSON's note says what to know before reading the ranking
            data["note"] = f"{data['note']} {gap}" if data["note"] else gap
        print_json(data)
        return 0
    if args.fill:
        sys.stdout.write(result.filled_profile().render())
        return 0
    sys.stdout.write(result.to_text())
    return 0


def cmd_index(args: argparse.Namespace) -> int:
    from kbopt.search import get_index

    ix = get_index(store_from(args))
    if args.action == "rebuild":
        count = ix.rebuild()
        info = ix.status()
        if args.json:
            print_json(info)
        else:
            print(f"rebuilt {ix.dir}: {count} entries indexed")
        return 0
    info = ix.status()
    if args.json:
        print_json(info)
    else:
        for key, value in info.items():
            print(f"{key}: {value}")
    return 0
