"""Which moves found something faster, in the committed `kbopt ablate` runs?

Each trial of a walking arm (`catalog`, `random`) after the first applied one move: an
entry's knob change from the arm's current values.  This script reads every real-device
results file in `results/ablation/` (fake-backend files are left out) and counts, per kind of
move, how often the trial was more than 1% faster than the arm's best so far (a move that
advanced the search), and how often more than 5%:

- in the catalog arm, by where the move came from: a fired anti-pattern (a warning: its way
  out), an opportunity the ranking placed (first, or lower), or an entry the ranking left out
  (`unranked`, tried once the ranked entries had no move left);
- the same for the first move of each run only (trial 2, from the starting configuration),
  and over the first run of each kernel and configuration only (before anything was changed
  because of that kernel);
- per fired anti-pattern, in the catalog arm;
- in both walking arms, per entry and knob change, split by whether the move's measured
  preconditions held or were passed over (a search passes them over once no other move is
  left), leaving out the warps-alongside repeats of a resize;
- in both walking arms, by the knob change itself (a role and a direction: `tile_n x2`,
  `warps /2`...);
- the warps-alongside repeats of a resize measured slower, against what the other moves made
  at the same trial of the same arm advanced (`pairing_against_position`);
- the moves that add a pipeline stage, by whether the values they moved from ran at
  `NEAR_FLOOR_PCT`% of the floor or more;
- by whether every change of the move had lost badly (`BAD_LOSS_PCT`) earlier in the same
  arm's run;
- `keep-enough-bytes-in-flight`'s moves and every other entry's, by whether the run's start
  profile had its warps waiting on loads (`stall_long_scoreboard_pct`) in `LOAD_WAIT_PCT`% of
  stall samples or more (a ranking rule the labels suggested, `scripts/rank_variants.py`);
- by where the move started, the arm's best values or values kept more than `PLATEAU_PCT`%
  slower than its best, and when in the run (the first move, from the start, left out);
- by the search rule that placed the move (push on, the other way...: `search_momentum`), in
  the runs whose trials record it;
- the reduction tile (`tile_k`, `kv_tile`), which no entry halves: per start condition
  (`TILE_CONDITIONS`, chosen before counting), whether each run's best trial had a smaller
  tile than the start's launched one, how often the grid arm's trials with a smaller tile
  beat the start against those with the same or a larger one, and the walking arms' moves
  of those roles against the other moves at the same position (`tile_table`).

    .venv/bin/python scripts/move_outcomes.py   # writes results/moves/move-outcomes.*

The counts describe the searches as they ran: a move is tried where the search's rules put
it, so a kind of move tried late (from values already tuned) has less left to find than one
tried first; compare kinds at the same position (the first-move table) before reading a rate
as a property of the move.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import json
import re
import shlex
import sys
from collections import defaultdict
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from kbopt.contracts.profile import Profile  # noqa: E402
from kbopt.workflow.ablation import load_results  # noqa: E402
from kbopt.workflow.move_record import (  # noqa: E402
    ADVANCED_PCT,
    MoveRecord,
    advanced,
    parse_move,
    row_key,
    trial_outcomes,
)
from kbopt.workflow.search_momentum import BAD_LOSS_PCT, PLATEAU_PCT  # noqa: E402

__all__ = ["parse_move", "trial_outcomes"]  # what the tests read through this script

RESULTS = REPO / "results" / "moves"
NAME = "move-outcomes"
CLEAR_PCT = 5.0


def tally(rows: Iterable[dict[str, Any]], key: Any) -> list[dict[str, Any]]:
    """Per value of `key(row)`: trials, and the share that advanced by over 1% and over 5%."""
    groups: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        groups[str(key(row))].append(row)
    out = []
    for name, members in groups.items():
        ahead = sum(1 for r in members if advanced(r))
        clear = sum(1 for r in members if r["gain_pct"] is not None and r["gain_pct"] > CLEAR_PCT)
        out.append(
            {
                "group": name,
                "trials": len(members),
                "advanced": ahead,
                "advanced_pct": round(100 * ahead / len(members), 1),
                "clear": clear,
                "clear_pct": round(100 * clear / len(members), 1),
            }
        )
    return sorted(out, key=lambda r: (-r["trials"], r["group"]))


def tables(
    rows: list[dict[str, Any]],
    spills: dict[str, str] | None = None,
    spill_sizes: dict[str, str] | None = None,
    load_waits: dict[str, str] | None = None,
) -> dict[str, list[dict[str, Any]]]:
    catalog = [r for r in rows if r["arm"] == "catalog"]
    spills, spill_sizes, load_waits = spills or {}, spill_sizes or {}, load_waits or {}
    first_moves = [r for r in rows if r["n"] == 2]
    return {
        "catalog arm, every move, by source": tally(catalog, lambda r: r["source"]),
        "first move of each run (trial 2), by source": tally(first_moves, lambda r: r["source"]),
        "first move, first run of each kernel and configuration only, by source": tally(
            [r for r in first_moves if r["first_run"]], lambda r: r["source"]
        ),
        "catalog arm, moves of fired anti-patterns, by entry": tally(
            [r for r in catalog if r["source"] == "fired anti-pattern"], lambda r: r["entry"]
        ),
        "both walking arms, by entry and change, preconditions held or passed over": tally(
            [r for r in rows if r["changes"] and not r["paired"]],
            lambda r: f"{r['entry']}: {' + '.join(r['changes'])}, "
            + ("passed over" if r["relaxed"] else "held"),
        ),
        "both walking arms, by knob change": tally(
            [r for r in rows if r["changes"]], lambda r: " + ".join(r["changes"])
        ),
        "both walking arms, the moves that double the warps to halve each thread's registers, "
        "by whether the start spilled": tally(
            [
                r
                for r in rows
                if r["entry"] in REGISTER_ENTRIES
                and r["changes"] == ["warps x2"]
                and not r["paired"]
            ],
            lambda r: f"{r['entry']}: {spills.get(r['file'], 'start not profiled')}",
        ),
        "both walking arms, the moves that double the warps to halve each thread's registers, "
        "by how much the start spilled": tally(
            [
                r
                for r in rows
                if r["entry"] in REGISTER_ENTRIES
                and r["changes"] == ["warps x2"]
                and not r["paired"]
            ],
            lambda r: f"{r['entry']}: {spill_sizes.get(r['file'], 'start not profiled')}",
        ),
        "both walking arms, the moves that add a pipeline stage (preconditions held), by how "
        f"close to its floor the kernel ran before (pct_of_floor, {NEAR_FLOOR_PCT:g}% the split)": tally(
            [
                r
                for r in rows
                if r["changes"] == ["pipeline_stages +1"] and not r["paired"] and not r["relaxed"]
            ],
            lambda r: f"{r['entry']}: {floor_band(r.get('from_pct_of_floor'))}",
        ),
        "both walking arms, by whether every change of the move had lost badly earlier in the "
        f"run (more than {BAD_LOSS_PCT:g}% slower than the arm's best so far)": tally(
            [r for r in rows if r["changes"] and not r["paired"]],
            lambda r: "repeats changes that lost badly"
            if r.get("repeats_a_bad_loss")
            else "some change had not lost badly",
        ),
        "both walking arms, keep-enough-bytes-in-flight's moves and the other entries', by how "
        f"much of the start's stalls waited on loads (stall_long_scoreboard_pct, "
        f"{LOAD_WAIT_PCT:g}% the split)": tally(
            [r for r in rows if r["changes"] and not r["paired"]],
            lambda r: (
                "keep-enough-bytes-in-flight"
                if r["entry"] == "keep-enough-bytes-in-flight"
                else "the other entries"
            )
            + f": {load_waits.get(r['file'], 'start not profiled')}",
        ),
        "both walking arms, by where the move started (the arm's best values, or values kept "
        f"more than {PLATEAU_PCT:g}% slower than its best) and when (runs that record which moves "
        "were kept)": tally(
            [r for r in rows if r.get("from_below_best_pct") is not None and r["n"] > 2],
            lambda r: f"{r['arm']} arm, trials {trial_band(r['n'])}: from "
            + (
                "the best values"
                if r["from_below_best_pct"] <= PLATEAU_PCT
                else f"values over {PLATEAU_PCT:g}% slower"
            ),
        ),
        "both walking arms, by the search rule that placed the move (runs that record it)": tally(
            [r for r in rows if r.get("momentum") is not None],
            lambda r: r["momentum"] or "no rule (the arm's own order)",
        ),
    }


def trial_band(n: int) -> str:
    """Which part of a run a trial is in: moves made early have more left to find."""
    return "3-8" if n <= 8 else "9-16" if n <= 16 else "17 on"


# Where the pipeline-stage moves' record splits (`keep-enough-bytes-in-flight`,
# `triton-num-stages-software-pipelining`): a kernel this close to its floor.
NEAR_FLOOR_PCT = 60


def floor_band(pct: float | None) -> str:
    if pct is None:
        return "not recorded"
    if pct >= NEAR_FLOOR_PCT:
        return f"at {NEAR_FLOOR_PCT}% of the floor or more"
    return f"under {NEAR_FLOOR_PCT}% of the floor"


# Where the labels put `keep-enough-bytes-in-flight` first (`scripts/rank_variants.py`'s
# keep-bytes-needs-long-scoreboard variant): warps waiting on loads this much of the time.
LOAD_WAIT_PCT = 40


def load_waits_at_the_start(docs: list[dict[str, Any]]) -> dict[str, str]:
    """Per results file: whether its start's warps waited on loads in `LOAD_WAIT_PCT`% of
    their stall samples or more."""

    def band(waiting: float) -> str:
        if waiting >= LOAD_WAIT_PCT:
            return f"start waited on loads {LOAD_WAIT_PCT}% or more"
        return f"start waited on loads under {LOAD_WAIT_PCT}%"

    return by_start_metric(docs, "stall_long_scoreboard_pct", band)


def by_start_metric(
    docs: list[dict[str, Any]], metric: str, band: Callable[[float], str]
) -> dict[str, str]:
    """Per results file: its start profile's `metric` put in a band by `band`, or "start not
    profiled" where the start has no profile or the profile lacks the metric."""
    out = {}
    for doc in docs:
        metrics = start_metrics(doc)
        value = None if metrics is None else metrics.get(metric)
        out[doc["_file"]] = "start not profiled" if value is None else band(value)
    return out


# Entries whose move gives the program twice the warps to halve each thread's registers.
REGISTER_ENTRIES = (
    "triton-register-budget-num-warps-maxnreg",
    "register-spills-from-oversized-per-thread-state",
)


def dims_stem(doc: dict[str, Any]) -> str:
    """A run's configuration as profile files name it (`tokens_8192_hidden_7168`)."""
    dims = (doc.get("config") or {}).get("dims") or {}
    return "_".join(f"{k}_{v}" for k, v in dims.items())


def start_metrics(doc: dict[str, Any]) -> dict[str, float] | None:
    """The start's profile metrics of one ablation run: the profile JSON it names
    (`start_profile.source`), else the blind set's profile Markdown of the same kernel and
    configuration; None when neither is in the repository."""
    source = (doc.get("start_profile") or {}).get("source")
    if source and (REPO / source).is_file():
        return json.loads((REPO / source).read_text())[0]["metrics"]
    stem = dims_stem(doc)
    for path in sorted(REPO.glob(f"benchmarks/real_profiles*/{doc['kernel']}--*--{stem}.md")):
        return dict(Profile.parse(path.read_text(encoding="utf-8"), str(path)).measured)
    return None


def spills_at_the_start(docs: list[dict[str, Any]]) -> dict[str, str]:
    """Per results file: whether its start spilled registers (`spill_bytes_per_thread`)."""
    coarse = {"start not profiled", "start did not spill"}
    return {
        f: size if size in coarse else "start spilled"
        for f, size in spill_sizes_at_the_start(docs).items()
    }


# Where the warps-doubling move's record splits (`triton-register-budget-num-warps-maxnreg`).
MANY_SPILLED_BYTES = 512


def spill_sizes_at_the_start(docs: list[dict[str, Any]]) -> dict[str, str]:
    """Per results file: whether its start spilled many registers, a few, or none."""

    def band(spilled: float) -> str:
        if spilled >= MANY_SPILLED_BYTES:
            return f"start spilled {MANY_SPILLED_BYTES} bytes a thread or more"
        if spilled > 0:
            return f"start spilled under {MANY_SPILLED_BYTES} bytes a thread"
        return "start did not spill"

    return by_start_metric(docs, "spill_bytes_per_thread", band)


def first_move_duel(rows: list[dict[str, Any]], *, past_only: bool) -> dict[str, int]:
    """The runs whose two walking arms made different first moves: which of the two the
    record of the other kernels' runs (only the runs before it, with `past_only`: what a
    search could have known then) scores higher, and which of them advanced."""
    by_run: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for r in rows:
        if r["n"] == 2 and not r["paired"]:
            by_run[r["run"]][r["arm"]] = r
    out: dict[str, int] = defaultdict(int)
    for run, arms in sorted(by_run.items()):
        if set(arms) != {"catalog", "random"}:
            continue
        cat, rnd = arms["catalog"], arms["random"]
        if row_key(cat) == row_key(rnd):
            out["same first move"] += 1
            continue
        known = [
            r for r in rows if r["kernel"] != cat["kernel"] and (not past_only or r["run"] < run)
        ]
        record = MoveRecord.from_rows(known)
        score_cat, score_rnd = record.score(row_key(cat)), record.score(row_key(rnd))
        if score_cat == score_rnd:
            out["scored alike"] += 1
            continue
        pick = cat if score_cat > score_rnd else rnd
        out["compared"] += 1
        out["the higher-scored move advanced"] += advanced(pick)
        out["the catalog arm's move advanced"] += advanced(cat)
        out["the random order's move advanced"] += advanced(rnd)
        out["the higher-scored move was the catalog arm's"] += pick is cat
    return dict(out)


def pairing_against_position(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The warps-alongside repeats: how many advanced, and how many would have at the rate
    of the other moves made at the same trial number of the same arm (a walk's later trials
    have less left to find, so the plain rate over all moves would flatter them)."""
    at: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        if r["changes"] and not r["paired"]:
            counts = at[(r["arm"], r["n"])]
            counts[0] += 1
            counts[1] += advanced(r)
    paired = [r for r in rows if r["changes"] and r["paired"] and at[(r["arm"], r["n"])][0]]
    expected = sum(at[(r["arm"], r["n"])][1] / at[(r["arm"], r["n"])][0] for r in paired)
    return {
        "trials": len(paired),
        "advanced": sum(advanced(r) for r in paired),
        "expected_at_the_same_position": round(expected, 1),
    }


# ------------------------------------------------------------------ reduction tile
# Would a move that halves the reduction tile (`tile_k`, `kv_tile`) help?  No catalog entry
# makes it, so the walking arms rarely try it; the grid arm samples the knob grid at random,
# so its trials with a smaller tile than the start and those with a larger one are compared
# at the same footing.  The start-profile conditions below were chosen before any outcome
# was counted, from thresholds catalog entries already read (a smaller reduction tile means
# less shared memory a stage and a smaller accumulator slice a thread, so the memory and
# register conditions are its mechanism; the wave and floor ones are controls).
REDUCTION_ROLES = ("tile_k", "kv_tile")
TILE_CONDITIONS: tuple[tuple[str, str, Any], ...] = (
    ("occupancy_limit_shared_mem <= 2", "occupancy_limit_shared_mem", lambda v: v <= 2),
    ("shared_mem_per_block_kb >= 100", "shared_mem_per_block_kb", lambda v: v >= 100),
    ("registers_per_thread >= 128", "registers_per_thread", lambda v: v >= 128),
    ("shared_bank_conflict_pct > 10", "shared_bank_conflict_pct", lambda v: v > 10),
    ("stall_short_scoreboard_pct >= 15", "stall_short_scoreboard_pct", lambda v: v >= 15),
    ("ctas_per_sm < 1", "ctas_per_sm", lambda v: v < 1),
    (f"pct_of_floor >= {NEAR_FLOOR_PCT}", "pct_of_floor", lambda v: v >= NEAR_FLOOR_PCT),
)
_LAUNCHED = r"{} None \(launched as ([^)\s]+)\)"


def spec_knob_roles(spec: str, root: Path = REPO) -> dict[str, str]:
    """Each knob's role as the spec's `Knob(...)` calls declare it, read from the file's
    syntax (loading a foreign spec needs its fetched third-party sources)."""
    path = root / spec if (root / spec).is_file() else root / "kernels" / spec / "spec.py"
    if not path.is_file():
        return {}
    roles: dict[str, str] = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        func = getattr(node, "func", None)
        if (
            not isinstance(node, ast.Call)
            or getattr(func, "id", getattr(func, "attr", "")) != "Knob"
        ):
            continue
        args = {i: a for i, a in enumerate(node.args)}
        args.update({kw.arg: kw.value for kw in node.keywords if kw.arg})
        name, role = args.get("name", args.get(0)), args.get("role", args.get(3))
        if isinstance(name, ast.Constant) and isinstance(role, ast.Constant):
            roles[str(name.value)] = str(role.value)
    return roles


def start_profile(doc: dict[str, Any]) -> dict[str, float] | None:
    """The start's metrics: those the walking arms' first moves recorded moving from
    (`from_metrics`), else the start's profile (`start_metrics`)."""
    for arm in doc.get("rows", []):
        for trial in arm.get("trajectory", []):
            if int(trial.get("n", 0)) == 2 and trial.get("from_metrics"):
                return dict(trial["from_metrics"])
    return start_metrics(doc)


def start_launched(doc: dict[str, Any]) -> dict[str, Any]:
    """What the start's launch recorded choosing (`measurement.launched`) in a profile of
    the same kernel, version and configuration under `results/profiles/` (the one the run
    names first), or {}."""
    stem = dims_stem(doc)
    named = (doc.get("start_profile") or {}).get("source")
    found = [REPO / named] if named and (REPO / named).is_file() else []
    found += sorted(
        REPO.glob(f"results/profiles/*/{doc['kernel']}--{doc.get('start_version')}--{stem}.json")
    )
    for path in found:
        try:
            launched = json.loads(path.read_text())[0]["measurement"]["launched"]
        except (ValueError, LookupError, TypeError):
            continue
        if isinstance(launched, dict):
            return launched
    return {}


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def tile_runs(
    docs: list[dict[str, Any]],
    roles_of: Any = spec_knob_roles,
    profile_of: Any = start_profile,
    launched_of: Any = start_launched,
) -> list[dict[str, Any]]:
    """One row per run and reduction-tile knob: the start's value (the launched value where
    the start leaves the knob to the kernel, read from a move's "launched as" or the start's
    profiled launch; a trial that
    leaves it to the kernel counts at that value too), the grid's smallest and largest
    values, the best trial's value over every arm, the grid arm's trials as (value, gain
    over the start in %), and the start's conditions (None: metric not in its profile)."""
    out = []
    for doc in docs:
        roles = roles_of(doc["spec"])
        profile = profile_of(doc) or {}
        trials = [
            t
            for arm in doc.get("rows", [])
            for t in arm.get("trajectory", [])
            if t.get("status") == "ok" and t.get("duration_us")
        ]
        moves = " ".join(str(t.get("move", "")) for t in trials)
        for knob, values in (doc.get("knobs") or {}).items():
            role = roles.get(knob)
            if role not in REDUCTION_ROLES or not trials:
                continue
            start_values = doc["rows"][0]["trajectory"][0]["values"]
            start = start_values.get(knob)
            if start is None:
                found = re.search(_LAUNCHED.format(re.escape(knob)), moves)
                start = found.group(1) if found else launched_of(doc).get(knob)
            start = _number(start)

            def value(t: dict[str, Any], knob: str = knob, start: float | None = start) -> Any:
                v = t["values"].get(knob)
                return start if v is None else _number(v)

            best = min(trials, key=lambda t: float(t["duration_us"]))
            start_us = float(doc.get("start_us") or doc["rows"][0]["trajectory"][0]["duration_us"])
            grid = [
                (value(t), round((start_us - float(t["duration_us"])) / start_us * 100, 2))
                for arm in doc["rows"]
                if arm.get("arm") == "grid"
                for t in arm.get("trajectory", [])
                if int(t.get("n", 0)) > 1 and t.get("status") == "ok" and t.get("duration_us")
            ]
            grid_values = [v for v in (_number(x) for x in values) if v is not None]
            conditions = {}
            for label, metric, test in TILE_CONDITIONS:
                measured = _number(profile.get(metric))
                conditions[label] = None if measured is None else bool(test(measured))
            out.append(
                {
                    "file": doc.get("_file", ""),
                    "kernel": doc.get("kernel"),
                    "knob": knob,
                    "role": role,
                    "start": start,
                    "smallest": min(grid_values, default=None),
                    "largest": max(grid_values, default=None),
                    "best": value(best),
                    "best_gain_pct": round(
                        (start_us - float(best["duration_us"])) / start_us * 100, 2
                    ),
                    "grid": grid,
                    "conditions": conditions,
                }
            )
    return out


def direction(value: float | None, start: float | None) -> str:
    if value is None or start is None:
        return "unknown"
    return "smaller" if value < start else "larger" if value > start else "same"


def tile_table(
    runs: list[dict[str, Any]], moves: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """Per reduction role and start condition (every run; each condition held / not held):
    (a) runs whose best trial over every arm had a smaller tile than the start, the same,
    a larger one (only runs whose start launched a known value with room both ways in the
    grid); (b) the grid arm's trials with a smaller tile than the start's, and with a
    larger or the same one, and how many were more than 5% faster than the start;
    (c) the walking arms' moves that changed the role, by direction, and how many advanced
    against how many the other moves at the same trial of the same arm would have."""
    moves = moves or []
    at: dict[tuple[str, int], list[int]] = defaultdict(lambda: [0, 0])
    for r in moves:
        if r["changes"] and not r["paired"]:
            at[(r["arm"], r["n"])][0] += 1
            at[(r["arm"], r["n"])][1] += advanced(r)
    groups: list[tuple[str, str, Any]] = [("every run", "", lambda c: True)]
    for label, _, _ in TILE_CONDITIONS:
        groups.append((label, "held", lambda c, k=label: c.get(k) is True))
        groups.append((label, "not held", lambda c, k=label: c.get(k) is False))
    out = []
    for role in REDUCTION_ROLES:
        for label, state, test in groups:
            members = [r for r in runs if r["role"] == role and test(r["conditions"])]
            both_ways = [
                r
                for r in members
                if r["start"] is not None
                and r["smallest"] is not None
                and r["smallest"] < r["start"] < r["largest"]
            ]
            best = [
                direction(r["best"], r["start"]) if r["best_gain_pct"] > ADVANCED_PCT else "none"
                for r in both_ways
            ]
            grid = [(direction(v, r["start"]), g) for r in members for v, g in r["grid"]]
            smaller = [g for d, g in grid if d == "smaller"]
            other = [g for d, g in grid if d in ("larger", "same")]
            files = {r["file"] for r in members}
            walked = {"smaller": [0, 0, 0.0], "larger": [0, 0, 0.0]}
            for m in moves:
                if m["file"] not in files or m["paired"] or not at[(m["arm"], m["n"])][0]:
                    continue
                for change in m["changes"]:
                    if change.split()[0] == role:
                        op = change.split()[1]
                        key = "smaller" if op[0] in "/-" or op in ("down", "min") else "larger"
                        n, hits = at[(m["arm"], m["n"])]
                        walked[key][0] += 1
                        walked[key][1] += advanced(m)
                        walked[key][2] += hits / n
            out.append(
                {
                    "role": role,
                    "condition": label if not state else f"{label}: {state}",
                    "runs": len({r["file"] for r in members}),
                    "kernels": len({r["kernel"] for r in members}),
                    "best_smaller_kernels": len(
                        {
                            r["kernel"]
                            for r in both_ways
                            if r["best_gain_pct"] > ADVANCED_PCT
                            and direction(r["best"], r["start"]) == "smaller"
                        }
                    ),
                    "runs_room_both_ways": len(both_ways),
                    "best_smaller": best.count("smaller"),
                    "best_same": best.count("same"),
                    "best_larger": best.count("larger"),
                    "best_none": best.count("none"),
                    "grid_smaller_trials": len(smaller),
                    "grid_smaller_faster": sum(g > ADVANCED_PCT for g in smaller),
                    "grid_smaller_clear": sum(g > CLEAR_PCT for g in smaller),
                    "grid_other_trials": len(other),
                    "grid_other_faster": sum(g > ADVANCED_PCT for g in other),
                    "grid_other_clear": sum(g > CLEAR_PCT for g in other),
                    "walk_smaller": [*walked["smaller"][:2], round(walked["smaller"][2], 1)],
                    "walk_larger": [*walked["larger"][:2], round(walked["larger"][2], 1)],
                }
            )
    return out


def _share(hits: int, trials: int) -> str:
    return f"{hits}/{trials} ({100 * hits / trials:.0f}%)" if trials else "0/0"


def render_tile_table(rows: list[dict[str, Any]]) -> list[str]:
    """`tile_table`'s rows as the Markdown section "Smaller reduction tile"."""
    out = [
        "**Smaller reduction tile** (`tile_k`, `kv_tile`; no entry halves them), by start "
        "condition (chosen before the counts were looked at; a run whose start profile lacks "
        "the metric is in neither half).  Runs of one kernel repeat (*Kernels*: how many "
        "distinct kernels the runs are of), so a kernel run many times weighs as many runs.  *Best*: runs whose start had values both ways in "
        "the grid, by the best trial over every arm: a smaller tile than the start's launched "
        f"one / the same / larger / nothing over {ADVANCED_PCT:g}% faster.  *Grid*: the grid "
        f"arm's trials (random points of the knob grid) more than {ADVANCED_PCT:g}% / "
        f"{CLEAR_PCT:g}% faster than the start, with a smaller tile and with the same or a "
        "larger one.  *Walk*: the walking arms' moves that made the tile smaller / larger, "
        "advanced, against what the other moves at the same trial of the same arm give.",
        "",
        "| Role | Start condition | Runs | Kernels | Best smaller / same / larger / none | "
        "Kernels whose best was smaller | Grid smaller "
        f"tile: >{ADVANCED_PCT:g}% / >{CLEAR_PCT:g}% | Grid same or larger: >{ADVANCED_PCT:g}% "
        f"/ >{CLEAR_PCT:g}% | Walk smaller: advanced (expected) | Walk larger: advanced "
        "(expected) |",
        "|------|-----------------|------|---------|-------------------------------------|----"
        "-------------------------|---------------"
        "-----------|------------------------------|-----------------------------------|----"
        "-------------------------------|",
    ]
    for r in rows:
        walk = [
            f"{r[k][1]} of {r[k][0]} ({r[k][2]:g})" if r[k][0] else "-"
            for k in ("walk_smaller", "walk_larger")
        ]
        out.append(
            f"| {r['role']} | {r['condition']} | {r['runs']} | {r['kernels']} | "
            f"{r['best_smaller']} / {r['best_same']} / {r['best_larger']} / {r['best_none']} "
            f"of {r['runs_room_both_ways']} | {r['best_smaller_kernels']} | "
            f"{_share(r['grid_smaller_faster'], r['grid_smaller_trials'])} / "
            f"{r['grid_smaller_clear']} | "
            f"{_share(r['grid_other_faster'], r['grid_other_trials'])} / "
            f"{r['grid_other_clear']} | {walk[0]} | {walk[1]} |"
        )
    if not rows:
        out.append("| *(no run yet)* | | | | | | | | | |")
    return [*out, ""]


def render(result: dict[str, Any]) -> str:
    out = [
        f"Moves of the walking arms in {result['runs']} real `kbopt ablate` runs "
        f"({result['trials']} move trials), counted by `{result['command']}` on "
        f"{result['date'][:10]}. *Advanced*: the trial was more than {ADVANCED_PCT:g}% faster "
        f"than the arm's best so far; *clear*: more than {CLEAR_PCT:g}%.",
        "",
    ]
    out += [
        "**First moves where the two walking arms differed**: the record of the other "
        "kernels' runs scores the two moves (`kbopt.workflow.move_record`); which advanced.",
        "",
        "| Record from | Runs compared | Higher-scored move advanced | Catalog arm's move "
        "advanced | Random order's move advanced | Higher-scored was the catalog arm's |",
        "|-------------|---------------|-----------------------------|--------------------"
        "---------|------------------------------|-------------------------------------|",
    ]
    columns = (
        "compared",
        "the higher-scored move advanced",
        "the catalog arm's move advanced",
        "the random order's move advanced",
        "the higher-scored move was the catalog arm's",
    )
    for name, duel in result["first_move_duel"].items():
        out.append("| " + " | ".join([name, *(str(duel.get(c, 0)) for c in columns)]) + " |")
    out.append("")
    pairing = result["pairing"]
    out += [
        "**Warps alongside** (a resize measured slower, repeated with the warps scaled "
        f"alike): {pairing['advanced']} of {pairing['trials']} trials advanced; the other "
        "moves made at the same trial of the same arm advanced at rates that give "
        f"{pairing['expected_at_the_same_position']:g} of {pairing['trials']}.",
        "",
    ]
    out += render_tile_table(result.get("reduction_tile", []))
    for title, rows in result["tables"].items():
        out += [
            f"**{title[0].upper() + title[1:]}**",
            "",
            "| Group | Trials | Advanced | Clear |",
            "|-------|--------|----------|-------|",
        ]
        for r in rows:
            out.append(
                f"| {r['group']} | {r['trials']} | {r['advanced']} ({r['advanced_pct']:g}%) "
                f"| {r['clear']} ({r['clear_pct']:g}%) |"
            )
        if not rows:
            out.append("| *(no trial yet)* | | | |")
        out.append("")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for the results")
    args = parser.parse_args(argv)
    docs = load_results(REPO)
    rows = trial_outcomes(docs)
    result = {
        "what": "per kind of move, how often an ablation trial beat the arm's best so far",
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "command": shlex.join(["python", "scripts/move_outcomes.py", *(argv or sys.argv[1:])]),
        "runs": len(docs),
        "trials": len(rows),
        "files": [d["_file"] for d in docs],
        "tables": tables(
            rows,
            spills_at_the_start(docs),
            spill_sizes_at_the_start(docs),
            load_waits_at_the_start(docs),
        ),
        "pairing": pairing_against_position(rows),
        "reduction_tile": tile_table(tile_runs(docs), rows),
        "first_move_duel": {
            "every other kernel's runs": first_move_duel(rows, past_only=False),
            "other kernels' earlier runs only": first_move_duel(rows, past_only=True),
        },
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / f"{NAME}.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / f"{NAME}.md").write_text(render(result))
    print(
        f"wrote {(args.out / NAME).relative_to(REPO) if args.out.is_relative_to(REPO) else args.out}.json/.md"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
