"""The CuTe DSL ladder's lessons (cute_v4 → cute_v9), for ``python -m kernels.mla_decode.learn``.

Same mechanism as the Triton lessons in :mod:`kernels.mla_decode.learn`: each lesson names two
measured rows of one results file written by ``cute_bench`` (per-call and CUDA-graph times, the
ceilings of the same run), and the evidence table is computed from them. New entries are
created from the templates below; the rest append evidence to existing entries.
"""

from __future__ import annotations

from kernels.mla_decode.learn import Lesson

CUTE_BENCH = "python -m kernels.mla_decode.cute_bench --versions {versions}"
# v4, v6, v7 side by side with torch, SGLang and triton_v7 on the H200
RUN_V7 = "cute_20261202T140714Z.json"
# v5 to v9 side by side (v7 timed a second time)
RUN_V9 = "cute_20261202T142653Z.json"
# v1, v2, v3 side by side (per-call times only: no CUDA-graph replay in that run)
RUN_V3 = "cute_20261202T093523Z.json"
# v3, v4, v5 side by side with host time per call
RUN_V5 = "cute_20261202T111618Z.json"


def _cmd(*versions: str) -> str:
    return (
        CUTE_BENCH.format(versions=",".join(versions))
        + " (H200; kernels/mla_decode/h200_cute.sh installs the carried CuTe DSL wheel)"
    )


def _split_score_tile() -> str:
    return """---
name: cute-split-score-tile-across-warpgroups
kind: anti-pattern
language: cute-dsl
applies_to: [attention-decode, mla, attention, online-softmax]
bottlenecks: [latency, compute]
impact: medium
expected_gain_pct: 7
risk: low
status: validated
created: {today}
updated: {today}
---

# Splitting one small score tile across two warpgroups

## When to Apply
- Hopper attention kernels (wgmma) where two warpgroups each compute half of the columns of one 64-row score tile, both reading the same Q tile from shared memory as the A operand.
- MLA and other wide-head kernels: the score product has K = 576, so the shared A operand is re-read 36 times per tile by each warpgroup.
- `tensor_core_util_pct < 60`: the tensor pipe waits on shared memory and on the row-statistics exchange.
- `stall_barrier_pct > 20`: warps wait at the extra CTA barrier that merges the two halves of each row's max.

## Mechanism
A wgmma reads its A tile (64 × 16 bf16, 2 KB) from shared memory for every k-step whatever N is, so two m64n32k16 products over the two halves of a tile move 1.5× the shared-memory bytes of one m64n64k16 over the whole tile, at the same FLOPs. Each row's maximum and sum are then split between the warpgroups and must meet in shared memory behind a CTA-wide barrier on every KV tile. Giving the whole score tile to one warpgroup (the other joins only for P@V, on its half of the output columns) removes both costs; the online softmax stays inside one quad of lanes.

## Affected Metrics
- `tensor_core_util_pct`: rises when one warpgroup issues the whole tile.
- `stall_barrier_pct`: the per-tile max exchange disappears (a named barrier for P remains).
- `duration_us`: falls.

## Implementation
```python
# what NOT to do (kernels/mla_decode/cute_v3.py .. cute_v5.py): both warpgroups, half the columns each
mma_qk = cute.make_tiled_mma(cute.make_mma_atom(warpgroup.MmaF16BF16Op(
    dtype, cutlass.Float32, (64, 32, 16), warpgroup.OperandSource.SMEM, k_major, k_major)), (1, 2, 1))
# instead (cute_v6.py): warpgroup 0 alone, whole tile; P and corrections through smem + bar.sync 1, 256
mma_qk = cute.make_tiled_mma(cute.make_mma_atom(warpgroup.MmaF16BF16Op(
    dtype, cutlass.Float32, (64, 64, 16), warpgroup.OperandSource.SMEM, k_major, k_major)), (1, 1, 1))
```

## Performance Evidence
{evidence}

## Generalization
An MMA operand that both warpgroups read from shared memory costs its bytes twice; split work between warpgroups along the dimension that does not share an operand (here the output columns of P@V), and keep a reduction (a softmax row) inside one warpgroup so it needs no cross-warpgroup barrier.

## Pitfalls
- The second warpgroup now idles during the scores and the softmax: give it other work (issuing the next tile's loads, see `warp-specialized-producer-consumer`) or the gain stays small.
- Needs a named barrier (not `__syncthreads`) between the warpgroups, with exactly one arrival per phase from each side.

## Interactions
- composes `split-accumulator-across-warpgroups`: the output stays split by columns, the scores do not.
- composes `warp-specialized-producer-consumer`: the idle warpgroup becomes the load issuer.
"""


def _last_cta_merge() -> str:
    return """---
name: last-cta-merges-split-partials
kind: optimization
applies_to: [attention-decode, mla, online-softmax, small-grid]
bottlenecks: [latency, memory]
impact: medium
expected_gain_pct: 8
risk: medium
status: validated
created: {today}
updated: {today}
---

# Merge split-KV partials in the last CTA to finish, not in a second kernel

## When to Apply
- Split-KV decode (or split-K GEMM) whose partial results are merged by a separate kernel, at sizes where the main kernel takes tens of microseconds.
- The merge kernel's time is a visible share of the call: `kernel_count >= 2` per step and the merge re-reads the fp32 partials from DRAM.
- `num_splits >= 2` with few splits per output tile, so one CTA can merge them quickly.

## Mechanism
Each split CTA writes its fp32 partial output and log-sum-exp, then counts itself in an int32 arrival counter for its output tile (release order: CTA barrier, then one thread's gpu-scope fence and atomic add). The CTA that sees the count reach splits - 1 is the last: it fences (acquire), reads the other splits' partials while they are still in L2, writes the merged output, and resets the counter to zero for the next call. The second launch, its ramp-up and tail, and the DRAM round trip of the partials disappear.

## Affected Metrics
- `kernel_count`: one launch per step instead of two.
- `duration_us`: falls by about the merge kernel's time.
- `dram_throughput_pct`: the partials are read back from L2, not DRAM.

## Implementation
```python
# end of the attention kernel (kernels/mla_decode/cute_v7.py, merge_if_last)
cute.arch.sync_threads()                         # every partial store of this CTA issued
if tidx == 0:
    cute.arch.fence_acq_rel_gpu()                # release them at gpu scope
    s_arrived[0] = distributed.atomicAdd(counter_ptr, cutlass.Int32(1))
    cute.arch.fence_acq_rel_gpu()
cute.arch.sync_threads()
if s_arrived[0] == splits - 1:                   # last split of this row block
    ...merge the splits' rows (base-2 LSE weights), write the output...
    if tidx == 0:
        m_sem[bi, m_block] = 0                   # zero again for the next call
```

## Performance Evidence
{evidence}

## Generalization
When a reduction across CTAs is small and its inputs are still in L2, let the last contributor do it: an arrival counter turns a dependent second kernel into a tail on one CTA per output tile.

## Pitfalls
- The counters must start at zero: allocate them zeroed once and have the merging CTA reset them; a call aborted mid-kernel leaves them dirty.
- Calls that run concurrently on different streams must not share counters or partial buffers.
- The merging CTA's extra work lengthens the critical path when one output tile has many splits; keep splits few.

## Interactions
- composes `split-kv-decode`: same partials and LSE math, one launch fewer.
- composes `cuda-graph-capture-decode-step`: one kernel per step also shortens the captured graph.
"""


def _l2_prefetch() -> str:
    return """---
name: l2-prefetch-without-a-latency-bottleneck
kind: anti-pattern
applies_to: [attention-decode, mla, attention, memory-bound]
bottlenecks: [memory, latency]
impact: low
expected_gain_pct: 0
risk: low
status: validated
created: {today}
updated: {today}
---

# Prefetching into L2 a loop that is not waiting on DRAM

## When to Apply
- A streaming loop (attention over a KV cache, a GEMM mainloop) gets software L2 prefetches (`cp.async.bulk.prefetch.L2`, `prefetch.global.L2`) for tiles a few steps ahead, on the assumption that DRAM latency is what makes each step slow.
- The evidence for that assumption is indirect: a low L2 hit rate, or a configuration that reads from DRAM being slower than one that reads from L2.
- `l2_hit_rate_pct < 30`: tempting, because most sectors come from DRAM.
- `dram_throughput_pct < 50`: DRAM is far from saturated, so bandwidth is not the reason either.

## Mechanism
A prefetch only helps if a warp would otherwise stall on the load it covers. When a step's time is set by its own chain (matrix products, softmax, barriers) and the load already arrives within the step, bringing the data to L2 earlier moves sectors from the miss column to the hit column and changes nothing else: the same bytes still travel from L2 to shared memory, and the prefetch instructions and their extra L2 traffic cost a little.

## Affected Metrics
- `l2_hit_rate_pct`: rises (the prefetched tiles hit): 18% to 49% at decode for the pair below (ncu, `kernels/mla_decode/results/ncu-20261202T1426Z-NVIDIA-H200.csv`).
- `duration_us`: unchanged, or slightly worse: 85 us for both in that ncu run, tensor pipe 53% busy in both.
- `dram_throughput_pct`: unchanged (the same bytes, earlier).

## Implementation
```python
# what was tried (kernels/mla_decode/cute_v8.py via cute_v7.prefetch_tile): one thread, tile n+2
if wg_tidx == 0 and tile + 2 < tile_end:
    start = cute.local_tile(kv_b, (64, 576), (tile + 2, 0)).iterator
    prefetch_l2_bulk(start, rows * 1152)      # cp.async.bulk.prefetch.L2.global [start], bytes
```

## Performance Evidence
{evidence}

## Generalization
Before adding a prefetch, check that warps actually stall on the loads it would cover (long-scoreboard or cp.async-wait stalls at the consuming instruction), not only that the data comes from DRAM. A hit-rate gain is not a speed-up.

## Pitfalls
- The L2 hit rate looks like a success; only the duration tells.
- Prefetches of tiles a CTA will not use (past its split or its sequence) waste DRAM bandwidth: bound them by the CTA's own range.

## Interactions
- conflicts `warp-specialized-producer-consumer`: once loads are issued early by their own warps, prefetching the same tiles adds nothing.
"""


def _launch_plan() -> str:
    return """---
name: cache-per-shape-launch-state
kind: optimization
applies_to: [attention-decode, inference-step, small-grid]
bottlenecks: [latency]
impact: medium
expected_gain_pct: 20
risk: low
status: validated
created: {today}
updated: {today}
---

# Build a kernel's launch state once per shape, not on every call

## When to Apply
- Python-launched kernels (CuTe DSL, Triton, custom extensions) at decode sizes, where one call's GPU work is tens of microseconds and the call is not replayed from a CUDA graph.
- The host wrapper re-derives per call what only depends on the shapes: the split count, scratch and output buffers, argument conversion, stream objects.
- `launch_overhead_pct > 20`: the GPU waits between calls.
- `kernel_count >= 1` with `duration_us < 200`: short kernels, where host time per call is of the same order.

## Mechanism
Everything that depends only on (shapes, dtypes, device, stream) goes into a plan built on the first call and looked up by key afterwards: the launch geometry, scratch buffers (safe to reuse because calls on one stream run in order), packed argument slots, the stream handle. A call then checks its inputs, allocates its output, writes the few pointers that change into the packed slots and launches. Host time per call falls, and when it was above the GPU time the per-call time falls with it.

## Affected Metrics
- `launch_overhead_pct`: falls.
- `duration_us`: unchanged on the GPU; the wall time per call falls where the host was the limit.

## Implementation
```python
# kernels/mla_decode/cute_plan.py (cute_v9): plan keyed by shapes, dtype, device, stream
key = (version, q.shape, q.dtype, kv_cache.shape, q.device, stream_handle)
plan = _PLANS.get(key) or _PLANS.setdefault(key, _make_plan(...))   # split, scratch, counters
out = torch.empty(b, s, h, 512, dtype=q.dtype, device=q.device)      # the one allocation
plan.launch([q.data_ptr(), kv_cache.data_ptr(), ..., out.data_ptr()], plan.ints, scale, plan.stream)
```

## Performance Evidence
{evidence}

## Generalization
Separate what a call computes from what its shape implies; cache the latter. It is the host-side counterpart of capturing the step in a CUDA graph and helps where graphs are not used (eager serving, tests, tools).

## Pitfalls
- Scratch shared by calls must be per stream; concurrent calls from several host threads on one stream would race on the packed slots.
- The key must include everything the plan depends on (dtype and device, not only shapes).

## Interactions
- composes `cuda-graph-capture-decode-step`: graphs remove the launch cost entirely; the plan makes un-graphed calls cheap.
"""


def _duplicate_scores() -> str:
    return """---
name: cute-duplicate-score-tile-per-warpgroup
kind: anti-pattern
language: cute-dsl
applies_to: [attention-decode, mla, attention, online-softmax]
bottlenecks: [compute]
impact: high
expected_gain_pct: 20
risk: low
status: validated
created: {today}
updated: {today}
---

# Each warpgroup computing the same score tile for its half of the output

## When to Apply
- Hopper attention kernels whose output accumulator is split across two warpgroups by columns (MLA: 64 x 512 fp32 does not fit one warpgroup), where each warpgroup then computes the full score tile Q K^T itself so that it has P in its own registers.
- The score product is large compared with P@V (MLA: K = 576 for the scores against 64 for each P@V half), so the duplicate is a large share of all tensor-core work.
- `tensor_core_util_pct > 40` while time per tile stays high: the tensor pipe is busy, but with repeated work.

## Mechanism
Splitting O by columns halves each warpgroup's P@V, but not the scores: if both warpgroups compute S = Q K^T for the same rows, the score FLOPs are paid twice. For MLA the scores are 53% of a tile's FLOPs, so the duplicate adds about half a tile of tensor-core time. Computing S once (split between the warpgroups, or by one of them) and sharing P through shared memory costs a P store, a fence and a barrier per tile, which is far cheaper.

## Affected Metrics
- `duration_us`: falls by about the duplicated share once S is computed once.
- `tensor_core_util_pct`: the useful share rises; the raw share can even fall.

## Implementation
```python
# what NOT to do (kernels/mla_decode/cute_v2.py): both warpgroups run the whole score product
acc_s = gemm(q_smem, k_smem)            # in warpgroup 0 AND warpgroup 1, same rows, same keys
p = softmax(acc_s); acc_o_half += p @ v_smem[:, my_half]
# instead (cute_v3.py, then cute_v6.py): compute S once, publish P (bf16) in shared memory,
# both warpgroups read it for their P@V halves after a barrier
```

## Performance Evidence
{evidence}

## Generalization
When work is split across warpgroups by the output dimension, check which inputs to that work each warpgroup recomputes; a shared intermediate (here P) exchanged through shared memory is usually cheaper than recomputing it.

## Pitfalls
- Splitting the score tile between the warpgroups (v3) fixes the duplicate but has its own costs; see `cute-split-score-tile-across-warpgroups`.

## Interactions
- composes `split-accumulator-across-warpgroups`: the accumulator split that makes the duplicate tempting.
- conflicts `cute-split-score-tile-across-warpgroups`: the next step after removing the duplicate.
"""


CUTE_LESSONS = [
    Lesson(
        "fill-tensor-core-tile-m",
        "cute_v1",
        "cute_v2",
        "warp mma.sync m16n8k16 with ldmatrix -> warpgroup wgmma (M = 64 rows) reading Q/K/V "
        "from swizzled shared memory, in a first layout where both warpgroups compute the score "
        "tile (see cute-duplicate-score-tile-per-warpgroup); per-call times, this run has no "
        "CUDA-graph replay and at decode size Python launch time is part of them",
        True,
        results_file=RUN_V3,
        command=_cmd("cute_v1", "cute_v2"),
    ),
    Lesson(
        "cute-duplicate-score-tile-per-warpgroup",
        "cute_v2",
        "cute_v3",
        "both warpgroups compute the whole score tile (P in registers) -> the score tile "
        "computed once, split between them, P shared through shared memory",
        True,
        new_entry="anti",
        results_file=RUN_V3,
        command=_cmd("cute_v2", "cute_v3"),
        template=_duplicate_scores,
    ),
    Lesson(
        "cute-split-score-tile-across-warpgroups",
        "cute_v5",
        "cute_v6",
        "score tile split between 2 warpgroups (m64n32k16 each, max exchanged per tile) -> "
        "one warpgroup computes the whole tile (m64n64k16), the other joins for P@V",
        True,
        new_entry="anti",
        results_file=RUN_V9,
        command=_cmd("cute_v5", "cute_v6"),
        template=_split_score_tile,
    ),
    Lesson(
        "warp-specialized-producer-consumer",
        "cute_v6",
        "cute_v7",
        "cp.async of the next KV tile issued by both warpgroups before the scores -> by the "
        "otherwise idle warpgroup while the other computes them (also in this step: mask only "
        "the last tile; in-kernel merge, which does not apply at one split)",
        True,
        results_file=RUN_V9,
        configs=("speculative",),
        command=_cmd("cute_v6", "cute_v7"),
    ),
    Lesson(
        "last-cta-merges-split-partials",
        "cute_v6",
        "cute_v7",
        "2 KV splits merged by a second kernel -> by the last split CTA (arrival counter); same "
        "step also moved the loads to the idle warpgroup",
        True,
        new_entry="opt",
        results_file=RUN_V9,
        configs=("decode",),
        command=_cmd("cute_v6", "cute_v7"),
        template=_last_cta_merge,
    ),
    Lesson(
        "cuda-graph-capture-decode-step",
        "cute_v7",
        "cute_v7",
        "one Python call per step (CuTe DSL launch, ~99 us of host time in this run; 59 us "
        "in cute_20261202T142653Z, where per-call and graph times matched) -> the same call "
        "replayed from a CUDA graph",
        results_file=RUN_V7,
        configs=("decode",),
        command=_cmd("cute_v7"),
        call_vs_graph=True,
    ),
    Lesson(
        "l2-prefetch-without-a-latency-bottleneck",
        "cute_v7",
        "cute_v8",
        "no prefetch -> cp.async.bulk.prefetch.L2 of the KV tile two steps ahead (one thread)",
        True,
        new_entry="anti",
        results_file=RUN_V9,
        command=_cmd("cute_v7", "cute_v8"),
        template=_l2_prefetch,
    ),
    Lesson(
        "cache-per-shape-launch-state",
        "cute_v4",
        "cute_v5",
        "CuTe DSL converts every Python argument per call -> ctypes argument slots packed once "
        "and passed by address (checked against CuTe DSL's own conversion); same kernels",
        True,
        results_file=RUN_V5,
        command=_cmd("cute_v4", "cute_v5"),
        host_time=True,
    ),
    Lesson(
        "cache-per-shape-launch-state",
        "cute_v8",
        "cute_v9",
        "split, scratch, counters, stream and argument slots derived per call -> cached per "
        "(shapes, dtype, device, stream); same kernel",
        True,
        new_entry="opt",
        results_file=RUN_V9,
        command=_cmd("cute_v8", "cute_v9"),
        template=_launch_plan,
        host_time=True,
    ),
]
