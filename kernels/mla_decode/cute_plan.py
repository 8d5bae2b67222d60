"""Host side with launch plans (cute_v9+): per-shape state built once, one allocation per call.

:func:`kernels.mla_decode.cute_common.run_split_kv` re-derives everything on every call: the
split, three output/scratch allocations, the stream object, the argument list. On the H200
machine's CPU one call of cute_v7 costs ~99 us of Python (``host_us_per_call`` in
``cute_20261202T140714Z.json``) for ~85 us of GPU work, so an un-graphed decode call is
host-bound. A plan keyed by (version, shapes, dtype, device, stream) keeps the split, the fp32
partials and LSE scratch, the arrival counters, the stream object and the packed-argument
slots; a call then checks its inputs, allocates the output and launches.

Scratch is per stream: calls on one stream run in order, so they can share it. Calls that
share a stream must not run concurrently from several host threads (the packed-argument slots
are reused), which holds for the benchmark and the tests.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from kernels.mla_decode import cute_common
from kernels.mla_decode import reference as ref


@dataclass
class _Plan:
    launch: cute_common.PackedLaunch
    in_dt: Any
    out_dt: Any
    ints: list[int]
    splits: int
    partials: torch.Tensor | None  # fp32 [b, rows, splits, 512] when splits > 1
    lse: torch.Tensor
    counters: torch.Tensor
    stream: Any
    info: dict[str, int | str]  # what a call records in cute_common.LAST_INFO


_PLANS: dict[tuple[Any, ...], _Plan] = {}


def _make_plan(
    version: str,
    compiled: Callable[[Any, Any], Any],
    m_blk: int,
    n_blk: int,
    q: torch.Tensor,
    t_max: int,
    stream_handle: int,
) -> _Plan:
    import cuda.bindings.driver as cuda
    import cutlass

    rows = cute_common.check_query(version, q, m_blk)
    b = q.shape[0]
    n_tiles = math.ceil(t_max / n_blk)
    splits, per_split = cute_common.pick_splits(
        b * rows // m_blk, n_tiles, cute_common.num_sms(q.device)
    )
    in_dt = getattr(cutlass, cute_common._TORCH_TO_CUTE[q.dtype])
    out_dt = in_dt if splits == 1 else cutlass.Float32
    partials = (
        None
        if splits == 1
        else torch.empty(b, rows, splits, ref.D_V, dtype=torch.float32, device=q.device)
    )
    fn = compiled(in_dt, out_dt)
    info: dict[str, int | str] = {"splits": splits, "tiles_per_split": per_split, "kernels": 1}
    sha = cute_common.launched_ptx_sha256(fn)
    if sha is not None:
        info["ptx_sha256"] = sha
    return _Plan(
        launch=cute_common.PackedLaunch(fn),
        in_dt=in_dt,
        out_dt=out_dt,
        ints=[b, rows, t_max, splits, per_split],
        splits=splits,
        partials=partials,
        lse=torch.empty(b, rows, splits, dtype=torch.float32, device=q.device),
        counters=torch.zeros(b * rows // m_blk, dtype=torch.int32, device=q.device),
        stream=cuda.CUstream(stream_handle),
        info=info,
    )


def run_planned(
    version: str,
    compiled: Callable[[Any, Any], Any],
    m_blk: int,
    n_blk: int,
    q: torch.Tensor,
    kv_cache: torch.Tensor,
    cache_seqlens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    """The contract call for versions whose kernel merges its splits in place (v7's entry)."""
    ref.check_inputs(q, kv_cache, cache_seqlens)
    stream_handle = torch.cuda.current_stream(q.device).cuda_stream
    key = (version, q.shape, q.dtype, kv_cache.shape, q.device, stream_handle)
    plan = _PLANS.get(key)
    if plan is None:
        plan = _make_plan(version, compiled, m_blk, n_blk, q, kv_cache.shape[1], stream_handle)
        _PLANS[key] = plan
    if not q.is_contiguous():
        q = q.contiguous()
    if not kv_cache.is_contiguous():
        kv_cache = kv_cache.contiguous()
    lens = cache_seqlens
    if lens.dtype != torch.int32 or lens.device != q.device or not lens.is_contiguous():
        lens = lens.to(device=q.device, dtype=torch.int32).contiguous()
    b, s, h, _ = q.shape
    out = torch.empty(b, s, h, ref.D_V, dtype=q.dtype, device=q.device)
    o = out if plan.partials is None else plan.partials
    addrs = [
        q.data_ptr(),
        kv_cache.data_ptr(),
        lens.data_ptr(),
        o.data_ptr(),
        plan.lse.data_ptr(),
        out.data_ptr(),
        plan.counters.data_ptr(),
    ]
    scale_log2 = float(sm_scale) * cute_common.LOG2_E
    cute_common.LAST_INFO.clear()
    cute_common.LAST_INFO.update(plan.info)

    def cute_args() -> tuple[Any, ...]:  # CuTe DSL's own conversion, checked on the first call
        import cutlass

        ptr = cute_common._gmem_ptr
        return (
            ptr(plan.in_dt, addrs[0], 16),
            ptr(plan.in_dt, addrs[1], 16),
            ptr(cutlass.Int32, addrs[2], 4),
            ptr(plan.out_dt, addrs[3], 16),
            ptr(cutlass.Float32, addrs[4], 4),
            ptr(plan.in_dt, addrs[5], 16),
            ptr(cutlass.Int32, addrs[6], 4),
            *plan.ints,
            scale_log2,
            plan.stream,
        )

    plan.launch(addrs, plan.ints, scale_log2, plan.stream, cute_args)
    return out
