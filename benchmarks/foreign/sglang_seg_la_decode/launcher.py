"""SGLang's segmented linear attention, decode (python/sglang/srt/layers/attention/linear/
seg_la.py, v0.5.9, from Ant Group's flood: `seg_la_d_kernel`, then a torch sum of its K-split
partials when there are several), launched as SGLang's `seg_la_fwd` launches it for a decode
batch (one token per request: its MAX_LENGTH of 1), so that its launch choices are knobs.

The linear-attention layers of Ling/Ring linear models (`bailing_moe_linear`, whose default
`linear_backend` is seg_la, also in decode) keep a head_dim x head_dim fp32 state per request
and head in a slot pool.  The grid is (rows, heads, head_dim / K_SPLIT x head_dim / V_SPLIT).
Each program loads its row's slot; a slot of -1 (a CUDA-graph padded row) returns at once,
writing nothing.  Otherwise it loads its K_SPLIT x V_SPLIT tile of the slot's state for its
head (rows head_dim apart), K_SPLIT lanes of q and k and V_SPLIT of v, in fp32; the tile
becomes exp(-slope) S + k^T v (an outer product), the output slice is the column sums of
(q / sqrt(head_dim)) times the new tile, stored in the dtype to a [head_dim / K_SPLIT, rows,
heads, head_dim] partial buffer, and the tile is stored back in place.  No loop, no masks
(head_dim must be a multiple of both splits), no tensor cores.  The partials along K are
summed by torch (`tmp.sum(0)`) when head_dim / K_SPLIT > 1; SGLang's K_SPLIT of 128 leaves
one, which is the output itself.

SGLang's choices for a decode batch: K_SPLIT = 128; up to 128 rows (the batch as launched,
CUDA-graph padding included) V_SPLIT = 32, 2 warps, 2 stages; above, V_SPLIT = 64, 2 warps,
3 stages (no heuristic, autotuner or tuned table).  Knobs: `k_split`, `v_split` and
`num_warps`, None keeping SGLang's; the stages are no knob (the kernel has no loop: SGLang's
2 or 3 are passed as they are).  SGLang allocates the partial buffer per call
(`torch.empty`); here it is made in `prepare`, outside the timed call, and zero-filled so
that a padded row, which the kernel never writes, reads as zeros.  The state pool is updated
in place: repeated timed calls keep decaying and adding to the live requests' states.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_K_SPLIT = 128  # seg_la_fwd's decode branch, at any batch
SGLANG_SMALL_BATCH = 128  # bs <= 128: V_SPLIT 32, 2 stages; above: V_SPLIT 64, 3 stages
SGLANG_WARPS = 2


def sglang_choices(rows: int) -> tuple[int, int, int, int]:
    """SGLang's (K_SPLIT_DIM, V_SPLIT_DIM, num_warps, num_stages) for a decode batch of
    `rows` rows (seg_la_fwd's decode branch; `rows` is the batch as launched)."""
    if rows <= SGLANG_SMALL_BATCH:
        return SGLANG_K_SPLIT, 32, SGLANG_WARPS, 2
    return SGLANG_K_SPLIT, 64, SGLANG_WARPS, 3


@dataclass(frozen=True)
class SegLaDecodeConfig:
    k_split: int | None = None  # None: SGLang's 128
    v_split: int | None = None  # None: SGLang's 32 up to 128 rows, 64 above
    num_warps: int | None = None  # None: SGLang's 2


def prepare(
    cfg: SegLaDecodeConfig, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
    state: torch.Tensor, slopes: torch.Tensor, slots: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_seg_la_decode")
    rows, heads, head_dim = q.shape
    if k.shape != q.shape or v.shape != q.shape:
        raise ValueError("q, k, v: [rows, heads, head_dim] (seg_la has no GQA)")
    if state.shape[1:] != (heads, head_dim, head_dim) or state.dtype != torch.float32:
        raise ValueError("state: an fp32 pool [slots, heads, head_dim, head_dim]")
    if slots.shape != (rows,) or slopes.shape != (heads,):
        raise ValueError("slots: one per row; slopes: one per head")
    if not all(t.is_contiguous() for t in (q, k, v, state)):
        raise ValueError("the kernel indexes q, k, v and the state pool as contiguous")
    k_default, v_default, warps_default, stages = sglang_choices(rows)
    k_split = cfg.k_split or k_default
    v_split = cfg.v_split or v_default
    warps = cfg.num_warps or warps_default
    if head_dim % k_split or head_dim % v_split:
        raise ValueError(f"k_split {k_split} and v_split {v_split} must divide {head_dim}")
    k_blocks = head_dim // k_split
    v_blocks = head_dim // v_split
    tmp = torch.zeros(k_blocks, rows, heads, head_dim, device=q.device, dtype=q.dtype)
    out = torch.zeros(rows, heads, head_dim, device=q.device, dtype=q.dtype)
    grid = (rows, heads, k_blocks * v_blocks)

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod.seg_la_d_kernel[grid](
            q, k, v, state, tmp, head_dim**-0.5, q.stride(0), k.stride(0), v.stride(0),
            state.stride(0), tmp.stride(0), slots, slopes, HEAD_DIM=head_dim,
            K_SPLIT_DIM=k_split, V_SPLIT_DIM=v_split, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        o = tmp[0] if k_blocks == 1 else torch.sum(tmp, dim=0, out=out)
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["seg_la_d_kernel"], k_split=k_split,
            v_split=v_split, num_warps=warps, num_stages=stages,
            programs=rows * heads * k_blocks * v_blocks, torch_sum=k_blocks > 1,
        )  # fmt: skip
        return o, state

    return launch
