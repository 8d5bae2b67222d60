"""Write what the MLA decode ladder taught into the catalog (KB8 / KB9), numbers from results.

    python -m kernels.mla_decode.learn            # append evidence / add entries (idempotent)
    python -m kernels.mla_decode.learn --dry-run  # print the evidence tables only

Each lesson compares two measured variants (a ladder step or a sweep variant against its
base) in the benchmark's JSON rows; the evidence table is computed from those rows, with the
results file as Source and the bench command that reproduces the pair as Command. Lessons
whose entry exists get an evidence block (the store's append_evidence); new ones are created
with add_optimization / add_anti_pattern. A block whose Source is already in the entry is
not appended again.
"""

from __future__ import annotations

import argparse
import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from kernels.mla_decode.devlog import load_rows

BENCH = "python -m kernels.mla_decode.bench --repeat"


@dataclass(frozen=True)
class Lesson:
    entry: str  # catalog entry name
    before: str  # version (or sweep tag) measured before the change
    after: str
    what: str  # one line: the change, for the table's Config column
    validate: bool = False  # set status validated (an optimization that helped)
    new_entry: str | None = None  # Markdown of a new entry, evidence appended after it
    sweep: tuple[str, ...] = field(default=())  # sweep specs the command must time
    results_file: str | None = None  # pin the evidence to one run (None: newest with both)
    command: str | None = None  # reproducing command (default: bench.py on the two versions)
    configs: tuple[str, ...] | None = None  # only these configurations (None: all measured)
    # before == after: compare the version's per-call time with its CUDA-graph replay time
    call_vs_graph: bool = False
    host_time: bool = False  # compare Python time per call (host_us_per_call), not GPU time
    template: Any = None  # callable returning a new entry's Markdown ({today}, {evidence})


def _rows_for(rows: list[dict[str, Any]], version: str) -> dict[str, dict[str, Any]]:
    """config -> newest ok row of `version` (sweep tags include the 'sweep:' prefix)."""
    out: dict[str, dict[str, Any]] = {}
    for r in rows:
        if r.get("version") == version and r.get("status") == "ok":
            out[r["config"]] = r
    return out


def evidence_block(rows: list[dict[str, Any]], lesson: Lesson) -> Any:
    from kbopt.model import EvidenceBlock, EvidenceRow
    from kbopt.vocab import SourceType

    # Prefer the newest results file that measured both sides (same run, same ceilings).
    files = [
        f
        for f in dict.fromkeys(r["_file"] for r in rows)
        if _rows_for([r for r in rows if r["_file"] == f], lesson.before)
        and _rows_for([r for r in rows if r["_file"] == f], lesson.after)
    ]
    if lesson.results_file is not None:
        files = [f for f in files if f == lesson.results_file]
        if not files:
            raise SystemExit(f"{lesson.results_file} lacks {lesson.before} / {lesson.after}")
    pool = [r for r in rows if r["_file"] == files[-1]] if files else rows
    before, after = _rows_for(pool, lesson.before), _rows_for(pool, lesson.after)
    table, used, r0 = [], set(), None
    configs = set(before) & set(after)
    if lesson.configs is not None:
        configs &= set(lesson.configs)
    for cfg in sorted(configs, key=lambda c: c != "decode"):
        b, a = before[cfg], after[cfg]
        r0 = a
        used |= {b["_file"], a["_file"]}
        table.append(
            EvidenceRow(
                config=f"MLA {cfg} b={a['b']} s={a['s']} t={a['t']} h={a['h']} bf16: {lesson.what}",
                **(
                    _compare_host(b, a)
                    if lesson.host_time
                    else _compare(b, a, lesson.call_vs_graph)
                ),
            )
        )
    if not table or r0 is None:
        raise SystemExit(f"no measured pair {lesson.before} -> {lesson.after} in the results")
    versions = [v for v in (lesson.before, lesson.after) if not v.startswith("sweep:")]
    cmd = BENCH
    if versions:
        cmd += " --versions " + ",".join(dict.fromkeys(versions))
    if lesson.sweep:
        cmd += " --sweep " + ",".join(lesson.sweep)
    if lesson.command is not None:
        cmd = lesson.command
    return EvidenceBlock(
        source_type=SourceType.LOCAL_EXPERIMENT,
        source=", ".join(f"kernels/mla_decode/results/{f}" for f in sorted(used))
        + f" (rows {lesson.before}, {lesson.after}); devlog docs/kernels/mla_decode.md",
        device=r0["device"],
        versions=f"torch {r0['torch']}, triton {r0['triton']}, CUDA {r0['cuda']}"
        + (f", nvidia-cutlass-dsl {r0['cutlass_dsl']}" if r0.get("cutlass_dsl") else ""),
        date=str(r0["date"])[:10],
        command=cmd,
        rows=table,
    )


def _timing(r: dict[str, Any], key: str = "time_us", pct: str = "pct_of_floor") -> str:
    return f"{r[key]:.1f} us ({r[pct]:.1f}% of floor)"


def _compare(b: dict[str, Any], a: dict[str, Any], call_vs_graph: bool) -> dict[str, str]:
    """Before / After / Change cells: per-call times, plus CUDA-graph replay times when the
    rows have them (cute_bench), or one version's per-call time against its graph time."""
    if call_vs_graph:
        change = 100.0 * (a["time_us_graph"] / b["time_us"] - 1.0)
        return {
            "before": "per call " + _timing(b),
            "after": "graph replay " + _timing(a, "time_us_graph", "pct_of_floor_graph"),
            "change": f"{change:+.1f}% time",
        }
    change = 100.0 * (a["time_us"] / b["time_us"] - 1.0)
    cells = {"before": _timing(b), "after": _timing(a), "change": f"{change:+.1f}% time"}
    if b.get("time_us_graph") is not None and a.get("time_us_graph") is not None:
        g = 100.0 * (a["time_us_graph"] / b["time_us_graph"] - 1.0)
        cells["before"] += f"; graph {_timing(b, 'time_us_graph', 'pct_of_floor_graph')}"
        cells["after"] += f"; graph {_timing(a, 'time_us_graph', 'pct_of_floor_graph')}"
        cells["change"] += f" per call, {g:+.1f}% graph"
    return cells


def _compare_host(b: dict[str, Any], a: dict[str, Any]) -> dict[str, str]:
    """Host time per call (cute_bench), with the per-call time it left."""
    change = 100.0 * (a["host_us_per_call"] / b["host_us_per_call"] - 1.0)
    return {
        "before": f"host {b['host_us_per_call']:.1f} us/call, per call {b['time_us']:.1f} us",
        "after": f"host {a['host_us_per_call']:.1f} us/call, per call {a['time_us']:.1f} us",
        "change": f"{change:+.1f}% host time",
    }


def _new_wider_tile() -> str:
    return """---
name: triton-wider-kv-tile-over-deeper-pipeline
kind: optimization
language: triton
applies_to: [attention-decode, mla, attention]
bottlenecks: [latency, compute]
impact: medium
expected_gain_pct: 15
risk: low
status: validated
created: {today}
updated: {today}
---

# Trade a pipeline stage for a wider KV tile when shared memory is the wall

## When to Apply
- Triton attention loops whose Q tile already occupies a large share of shared memory (MLA: a 64x576 bf16 Q tile is 72 KB), so only a few KV stages fit.
- The loop is latency-bound: one CTA per SM, tensor pipe well under its peak, DRAM far from saturated.
- `shared_mem_per_block_kb >= 150`: stages and tile width compete for the same 227 KB.
- `tensor_core_util_pct < 60`: the wgmma instructions are too small or too serialized.

## Mechanism
Each KV tile costs a fixed chain per iteration: wait for the tile, QK^T, a cross-warpgroup row max and sum, P@V, and the rescale of the accumulator. Doubling BLOCK_N halves the number of these chains per KV row and makes each wgmma larger (N=64 scores, K=64 for P@V), while the extra shared memory is paid by dropping from three stages to two. When the loop is latency-bound, fewer and larger steps win even with a shallower pipeline.

## Affected Metrics
- `tensor_core_util_pct`: rises (ncu profiles of triton_v5 and triton_v7 in docs/kernels/mla_decode.md).
- `shared_mem_per_block_kb`: rises to the limit.
- `duration_us`: falls.

## Implementation
```python
# MLA decode (kernels/mla_decode/triton_v7.py): BLOCK_N 32 -> 64, num_stages 3 -> 2
CONFIG = TiledConfig(block_m=64, block_n=64, num_warps=8, num_stages=2, splits=None, use_tma=True)
```

## Performance Evidence
{evidence}

## Generalization
Per-iteration overheads (barriers, reductions, rescales, wait latency) scale with the number of tiles, pipeline depth only hides load latency. When shared memory forces a choice, compare the wider tile at depth S-1 with the narrower one at depth S, and keep the one that issues fewer, larger tensor-core steps.

## Pitfalls
- A tile so wide that only one stage fits loses load/compute overlap entirely (BLOCK_N=128, 1 stage: spills and slower in the same sweep).
- Check registers: a wider score tile adds registers next to a 64x512 fp32 accumulator.

## Interactions
- conflicts `triton-num-stages-software-pipelining`: both spend the same shared memory.
- composes `triton-tensor-descriptor-tma`: TMA boxes of 64x256 move the wider tile in few instructions.
"""


def _new_reload_pipelining() -> str:
    return """---
name: triton-manual-score-pipelining-reloads-kv
kind: anti-pattern
language: triton
applies_to: [attention-decode, mla, attention]
bottlenecks: [latency]
impact: high
expected_gain_pct: 40
risk: medium
status: validated
created: {today}
updated: {today}
---

# Hand-pipelining next-tile scores in Triton by re-loading the KV tile for P@V

## When to Apply
- A Triton attention loop rewritten FA3-style: the scores of tile i+1 are computed before P@V of tile i, and, because the K tile cannot stay in registers, the V tile is loaded a second time for P@V.
- Large head dimensions (MLA: K and V share 512 latent columns) where carrying the tile across iterations is impossible.
- `l2_hit_rate_pct > 40`: the second load of the same tile shows up as L2 hits.
- `tensor_core_util_pct < 30`: the intended overlap did not happen.

## Mechanism
The FA3 overlap needs the next scores' wgmma to stay in flight while the softmax runs; Triton 3.6 on Hopper still waits for the scores before the softmax that uses them, so nothing overlaps. What remains is the cost: every KV tile is read twice (L2 to shared memory), the extra TMA buffers shrink the KV tile (BLOCK_N 64 -> 32) to fit shared memory, and there are more barriers per iteration.

## Affected Metrics
- `tensor_core_util_pct`: falls (ncu profiles of triton_v7 and triton_v8 in docs/kernels/mla_decode.md).
- `l2_hit_rate_pct`: jumps, from the duplicate tile loads.
- `duration_us`: about doubles.

## Implementation
```python
# what NOT to do (kernels/mla_decode/triton_v8.py, PIPE_QK branch of triton_tiled.py)
qk = scores(q, k_desc, start)
for n0 in tl.range(start, end, BLOCK_N):
    p = softmax_step(qk)
    qk = scores(q, k_desc, n0 + BLOCK_N)      # next tile, hoping it overlaps the softmax
    v = kv_desc.load([n0, 0])                 # second load of the tile just used as K
    acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
```

## Performance Evidence
{evidence}

## Generalization
Software pipelining that buys overlap with extra memory traffic only pays when the compiler actually keeps the asynchronous work in flight. Check the tensor-pipe utilization and the L2 traffic of the rewrite before keeping it; in Triton, overlap between dependent matmul phases needs warp specialization or explicit async dots that the compiler exposes, not a reordered loop.

## Pitfalls
- The rewrite is correct and passes tests; only the counters and the timing show it is a loss.
- Results may change with Triton versions that schedule wgmma waits differently: re-measure before relying on this.

## Interactions
- conflicts `overlap-softmax-with-async-mma`: the same goal, reached in CUDA/CuTe with explicit wgmma waits and warpgroup roles.
- conflicts `triton-wider-kv-tile-over-deeper-pipeline`: the duplicate buffers take the shared memory a wider tile needs.
"""


RUN3 = "20261202T092954Z-NVIDIA-H200.json"  # the full ladder, timed twice
RUN2 = "20261202T092534Z-NVIDIA-H200.json"  # the second sweep
RUN1 = "20261202T092056Z-NVIDIA-H200.json"  # the first sweep

LESSONS = [
    Lesson(
        "triton-grouped-heads-tl-dot-decode",
        "triton_v1",
        "triton_v2",
        "one query row per program (tl.sum) -> 64 rows per program with tl.dot",
        True,
        results_file=RUN3,
    ),
    Lesson(
        "split-kv-decode",
        "triton_v2",
        "triton_v3",
        "no split -> 8 KV splits + combine kernel",
        True,
        results_file=RUN3,
    ),
    Lesson(
        "too-many-kv-splits",
        "triton_v3",
        "triton_v4",
        "8 fixed splits -> split count sized from SM count and batch (2 / 1)",
        results_file=RUN3,
    ),
    Lesson(
        "triton-num-stages-software-pipelining",
        "triton_v4",
        "triton_v5",
        "num_stages 1 -> 3 (also removed the accumulator spills)",
        True,
        results_file=RUN3,
    ),
    Lesson(
        "triton-tensor-descriptor-tma",
        "triton_v5",
        "triton_v6",
        "pointer tiles -> tensor descriptors (TMA), 2x256-wide latent boxes",
        True,
        results_file=RUN3,
    ),
    Lesson(
        "triton-wider-kv-tile-over-deeper-pipeline",
        "triton_v6",
        "triton_v7",
        "BLOCK_N 32 x 3 stages -> BLOCK_N 64 x 2 stages",
        new_entry="opt",
        results_file=RUN3,
    ),
    Lesson(
        "triton-manual-score-pipelining-reloads-kv",
        "triton_v7",
        "triton_v8",
        "next-tile scores before P@V, V tile re-loaded through TMA",
        new_entry="anti",
        results_file=RUN3,
    ),
    Lesson(
        "register-spills-from-oversized-per-thread-state",
        "triton_v5",
        "sweep:bn32-st3-w4-spauto",
        "64x512 fp32 accumulator over 8 warps -> over 4 warps (256 acc regs/thread, spills)",
        sweep=("bm64-bn32-st3-w4-spauto",),
        results_file=RUN1,
    ),
    Lesson(
        "triton-warp-specialize-loop",
        "triton_v7",
        "sweep:bm64-bn64-st2-w8-spauto-tma-ws",
        "tl.range(..., warp_specialize=True) on the KV loop, Hopper (no effect measured)",
        sweep=("bm64-bn64-st2-w8-spauto-tma-ws",),
        results_file=RUN2,
    ),
    Lesson(
        "triton-register-budget-num-warps-maxnreg",
        "triton_v7",
        "sweep:bm128-bn32-st2-w16-spauto-tma",
        "64 rows x 8 warps -> 128 rows x 16 warps (register cap 128/thread: accumulator spills)",
        sweep=("bm128-bn32-st2-w16-spauto-tma",),
        results_file=RUN2,
    ),
    Lesson(
        "triton-wider-kv-tile-over-deeper-pipeline",
        "triton_v7",
        "sweep:bm64-bn128-st1-w8-spauto-tma",
        "pitfall: BLOCK_N 64 x 2 stages -> BLOCK_N 128 x 1 stage (no overlap, spills)",
        sweep=("bm64-bn128-st1-w8-spauto-tma",),
        results_file=RUN2,
    ),
]


def apply(dry_run: bool = False) -> list[str]:
    from kbopt.store import Store
    from kbopt.template import parse_entry
    from kbopt.vocab import Status

    rows = load_rows()
    store = Store(_repo())
    done = []
    today = dt.date.today().isoformat()
    from kernels.mla_decode.learn_cute import CUTE_LESSONS

    for lesson in LESSONS + CUTE_LESSONS:
        block = evidence_block(rows, lesson)
        if dry_run:
            print(f"## {lesson.entry}\nSource: {block.source}\nCommand: {block.command}")
            for r in block.rows:
                print(f"| {r.config} | {r.before} | {r.after} | {r.change} |")
            continue
        if store.find(lesson.entry) is None:
            if lesson.new_entry is None:
                raise SystemExit(f"catalog has no entry {lesson.entry!r}")
            if lesson.template is not None:
                template = lesson.template()
            elif lesson.new_entry == "opt":
                template = _new_wider_tile()
            else:
                template = _new_reload_pipelining()
            # Parse the entry with a placeholder evidence block, then put the measured one in
            # (the store re-renders and re-parses before writing).
            text = template.replace("{today}", today).replace("{evidence}", _placeholder())
            entry = parse_entry(text, name=lesson.entry, path="<learn>")
            entry.evidence = [block]
            if lesson.new_entry == "opt":
                store.add_optimization(entry)
            else:
                store.add_anti_pattern(entry)
            done.append(f"added {lesson.entry}")
            continue
        existing = store.get(lesson.entry)
        if any(e.source == block.source for e in existing.evidence):
            done.append(f"unchanged {lesson.entry} (evidence already present)")
            continue
        status = Status.VALIDATED if lesson.validate else None
        store.append_evidence(lesson.entry, block, status=status)
        done.append(f"appended evidence to {lesson.entry}")
    return done


def _placeholder() -> str:
    return (
        "Source type: local experiment\nSource: placeholder\nCommand: true\n"
        "| Config | Before | After | Change |\n|--------|--------|-------|--------|\n"
        "| x | 1 | 1 | 0% |"
    )


def _repo() -> Any:
    from pathlib import Path

    return Path(__file__).resolve().parents[2]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m kernels.mla_decode.learn")
    p.add_argument("--dry-run", action="store_true")
    args = p.parse_args(argv)
    for line in apply(args.dry_run):
        print(line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
