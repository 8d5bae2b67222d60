"""Shared pieces of the Triton MLA decode versions: the split combine kernel and helpers.

Not a version itself (the registry only discovers ``triton_v*`` modules).
"""

from __future__ import annotations

import functools

import torch
import triton
import triton.language as tl

from kbopt.bench.interpreter import fix_scalar_index_if_interpreting
from kernels.mla_decode.reference import D_QK, D_V, check_inputs

LOG2E = 1.4426950408889634


# range() over loaded scalars under TRITON_INTERPRET=1 (the CPU tests).
fix_scalar_index_if_interpreting()


@triton.jit
def combine_kernel(
    PartO,  # [rows_total, NUM_SPLITS, D_V] fp32, each split normalised by its own sum
    PartLse,  # [rows_total, NUM_SPLITS] fp32, log2(sum) + max in the log2 domain (-inf: empty)
    Out,  # [rows_total, D_V] in the output dtype
    NUM_SPLITS: tl.constexpr,
    SPLITS_P2: tl.constexpr,
    DV: tl.constexpr,
):
    """Merge the per-split partial softmax results of one query row (log-sum-exp weights)."""
    row = tl.program_id(0).to(tl.int64)
    offs_s = tl.arange(0, SPLITS_P2)
    offs_d = tl.arange(0, DV)
    mask_s = offs_s < NUM_SPLITS
    lse = tl.load(PartLse + row * NUM_SPLITS + offs_s, mask=mask_s, other=float("-inf"))
    m = tl.max(lse, 0)
    w = tl.exp2(lse - m)  # empty splits carry -inf -> weight 0
    w = w / tl.sum(w, 0)
    o = tl.load(
        PartO + (row * NUM_SPLITS + offs_s[:, None]) * DV + offs_d[None, :],
        mask=mask_s[:, None],
        other=0.0,
    )
    out = tl.sum(o * w[:, None], 0)
    tl.store(Out + row * DV + offs_d, out.to(Out.dtype.element_ty))


def combine(part_o: torch.Tensor, part_lse: torch.Tensor, out: torch.Tensor) -> None:
    rows, splits, dv = part_o.shape
    combine_kernel[(rows,)](
        part_o,
        part_lse,
        out,
        NUM_SPLITS=splits,
        SPLITS_P2=triton.next_power_of_2(splits),
        DV=dv,
        num_warps=4,
    )


@functools.lru_cache(maxsize=8)
def sm_count(device_index: int) -> int:
    """Streaming multiprocessors of the GPU (132 on an H200); 132 on the CPU interpreter."""
    if not torch.cuda.is_available():
        return 132
    return int(torch.cuda.get_device_properties(device_index).multi_processor_count)


def prepare(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor
) -> tuple[int, int, int, int, torch.Tensor]:
    """Validate and return (b, s, h, t_max, lens as int32 contiguous)."""
    check_inputs(q, kv_cache, cache_seqlens)
    if not q.is_contiguous() or not kv_cache.is_contiguous():
        raise ValueError("q and kv_cache must be contiguous")
    b, s, h, _ = q.shape
    lens = cache_seqlens.to(device=q.device, dtype=torch.int32).contiguous()
    return b, s, h, kv_cache.shape[1], lens


__all__ = ["D_QK", "D_V", "LOG2E", "combine", "prepare", "sm_count"]
