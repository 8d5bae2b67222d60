"""Time a version that writes into its own inputs on inputs it has not changed yet.

Some kernels work in place: vLLM's top-k/top-p filter masks the logits it reads, Liger's
cross-entropy writes the gradient over its logits, an in-cache KV move rewrites the cache.
Timed the usual way (the same few input sets launched over and over) every call after the
first runs on what the calls before it left, and where the time depends on the data the
measurement drifts through a search: on an H100, vLLM's filter measured 2.31 ms at its
launch configuration first in a `kbopt ablate` run and 1.38 ms at the same values at the
run's end (results/ablation/20261206T000757Z-vllm_topk_topp-NVIDIA-H100-80GB-HBM3.json;
the run before it, 2.36 and 1.38 ms).

So a measurement first finds out whether the version writes into its inputs: a fingerprint
of every input tensor of one set, before and after one call outside any timed region. If
one changed, the sets are made anew with a pristine copy of each tensor the version writes,
and before every timed call (outside the timed region) the set about to be launched gets
those tensors back and the L2 is flushed, as `triton.testing.do_bench` flushes it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

# Bytes a fingerprint reads at a time: its int32 temporaries stay at 4x this.
CHUNK_BYTES = 1 << 24
# Position weights cycle with this (prime) period, so a permutation of equal bytes, an
# in-place sort for one, changes the weighted sum.
WEIGHT_PERIOD = 251
WARMUP_CALLS = 3
MIN_CALLS, MAX_CALLS = 5, 1000


def fingerprint(t: Any) -> tuple[int, int]:
    """(sum, position-weighted sum) of a tensor's bytes: equal before and after a call that
    did not write it; a call that did changes one or the other (but for a write that puts
    back exactly the bytes it found)."""
    import torch

    flat = t.detach().reshape(-1)
    if flat.numel() == 0:
        return (0, 0)
    data = flat.contiguous().view(torch.uint8)
    total = torch.zeros((), dtype=torch.int64, device=data.device)
    weighted = torch.zeros((), dtype=torch.int64, device=data.device)
    for start in range(0, data.numel(), CHUNK_BYTES):
        chunk = data[start : start + CHUNK_BYTES].to(torch.int32)
        weights = torch.arange(start, start + chunk.numel(), device=data.device) % WEIGHT_PERIOD
        total += chunk.sum(dtype=torch.int64)
        weighted += (chunk * (weights + 1).to(torch.int32)).sum(dtype=torch.int64)
    return int(total), int(weighted)


def tensor_positions(inputs: Sequence[Any]) -> list[int]:
    """Positions of the tensors among a call's inputs."""
    return [i for i, x in enumerate(inputs) if hasattr(x, "element_size")]


def written_positions(launch: Callable[[], Any], inputs: Sequence[Any]) -> frozenset[int]:
    """Positions of the input tensors that one call of `launch` (bound to `inputs`) changed."""
    import torch

    positions = tensor_positions(inputs)
    before = {i: fingerprint(inputs[i]) for i in positions}
    launch()
    if any(inputs[i].is_cuda for i in positions):
        torch.cuda.synchronize()
    return frozenset(i for i in positions if fingerprint(inputs[i]) != before[i])


class PristineSets:
    """Copies of the tensors a version writes, taken from input sets no call has touched,
    to put back into a set before each of its timed calls."""

    def __init__(self, sets: Sequence[Sequence[Any]], positions: Iterable[int]):
        self.positions = frozenset(positions)
        self.sets = sets
        self.copies = [{p: s[p].clone() for p in self.positions} for s in sets]

    def covers(self, positions: Iterable[int]) -> bool:
        return set(positions) <= self.positions

    def restore(self, i: int) -> None:
        """Set `i`'s written tensors as they were made."""
        for p, copy in self.copies[i].items():
            self.sets[i][p].copy_(copy)

    def restore_all(self) -> None:
        for i in range(len(self.sets)):
            self.restore(i)


def bench_restoring_ms(
    launches: Sequence[Callable[[], Any]], pristine: PristineSets, rep_ms: int
) -> tuple[float, float, float]:
    """(median, p20, p80) in ms of the launches in turn, each on a set restored (and the L2
    flushed) just before its timed call, like `triton.testing.do_bench` otherwise.  The
    restores and flushes are not timed but take wall time: the number of calls is held to
    what about four times `rep_ms` of wall time allows (at least MIN_CALLS)."""
    import time

    import torch
    from triton import runtime

    driver = runtime.driver.active
    flush = driver.get_empty_cache_for_benchmark()
    n_sets = len(launches)

    def prepared(i: int) -> Callable[[], Any]:
        pristine.restore(i % n_sets)
        driver.clear_cache(flush)
        return launches[i % n_sets]

    for i in range(WARMUP_CALLS):
        prepared(i)()
    torch.cuda.synchronize()
    began = time.perf_counter()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    call_ms = 0.0
    for i in range(MIN_CALLS):
        fn = prepared(i)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        call_ms += start.elapsed_time(end)
    per_iteration_ms = (time.perf_counter() - began) * 1e3 / MIN_CALLS
    n = calls_for(rep_ms, call_ms / MIN_CALLS, per_iteration_ms)
    events = []
    for i in range(n):
        fn = prepared(i)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        events.append((s, e))
    torch.cuda.synchronize()
    times = torch.tensor([s.elapsed_time(e) for s, e in events], dtype=torch.float64)
    med, p20, p80 = (float(torch.quantile(times, q)) for q in (0.5, 0.2, 0.8))
    pristine.restore_all()  # what the next measurement at this shape starts from
    return med, p20, p80


def calls_for(rep_ms: float, call_ms: float, iteration_ms: float) -> int:
    """Timed calls: `rep_ms` worth of calls (as do_bench counts them), but no more than about
    four times `rep_ms` of wall time with the restores, and between MIN_CALLS and MAX_CALLS."""
    n = int(rep_ms / max(call_ms, 1e-3))
    n = min(n, int(4 * rep_ms / max(iteration_ms, 1e-3)))
    return max(MIN_CALLS, min(MAX_CALLS, n))
