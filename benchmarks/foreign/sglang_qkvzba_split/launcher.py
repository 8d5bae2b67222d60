"""SGLang's Qwen3-Next projection split (python/sglang/srt/models/qwen3_next.py, v0.5.9:
`fused_qkvzba_split_reshape_cat_kernel`), launched as SGLang's
`fused_qkvzba_split_reshape_cat` launches it, so that its launch choices are knobs.

The gated delta net's two input projections come out interleaved per key head: for each
token, `in_proj_qkvz` gives per key head [q (head_k), k (head_k), v (r x head_v), z
(r x head_v)] and `in_proj_ba` gives [b (r), a (r)], r = value heads per key head.  One
program per token and key head copies its head's q, k and v into the token's row of
mixed_qkv ([all q | all k | all v], the layout the causal conv1d reads), its z into z
[tokens, v_heads, head_v] and its b and a into b and a [tokens, v_heads] (those one element
at a time, a static loop of r).  The head sizes are compile-time and every `tl.arange`
spans a whole segment, so they must be powers of two; nothing is masked.

SGLang's launch: grid (tokens, key heads), num_warps=1, num_stages=3, no autotuning or
heuristic.  Knob: the warps, None keeping SGLang's 1.  The kernel has no loop (the b and a
loops are unrolled), so the stages are no knob; SGLang's 3 is passed as it passes it.  SGLang
allocates the four outputs per call; here they are made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
NUM_WARPS, NUM_STAGES = 1, 3  # fused_qkvzba_split_reshape_cat's launch


@dataclass(frozen=True)
class QkvzbaSplitConfig:
    num_warps: int | None = None  # None: SGLang's 1


def prepare(
    cfg: QkvzbaSplitConfig, mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, k_heads: int,
    v_heads: int, head_k: int, head_v: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_qkvzba_split")
    tokens = mixed_qkvz.shape[0]
    r = v_heads // k_heads
    if v_heads % k_heads or r not in (1, 2, 4):
        raise ValueError("SGLang takes this kernel for 1, 2 or 4 value heads per key head")
    for size in (head_k, r * head_v):
        if size & (size - 1):
            raise ValueError("head_k and v_heads / k_heads x head_v must be powers of two")
    if mixed_qkvz.shape != (tokens, k_heads * (2 * head_k + 2 * r * head_v)):
        raise ValueError("mixed_qkvz must be [tokens, k_heads x (2 head_k + 2 r head_v)]")
    if mixed_ba.shape != (tokens, 2 * v_heads):
        raise ValueError("mixed_ba must be [tokens, 2 v_heads]")
    if not (mixed_qkvz.is_contiguous() and mixed_ba.is_contiguous()):
        raise ValueError("the projections must be contiguous")
    dev = mixed_qkvz.device
    mixed_qkv = torch.empty(
        tokens, k_heads * head_k * 2 + v_heads * head_v, dtype=mixed_qkvz.dtype, device=dev
    )
    z = torch.empty(tokens, v_heads, head_v, dtype=mixed_qkvz.dtype, device=dev)
    b = torch.empty(tokens, v_heads, dtype=mixed_ba.dtype, device=dev)
    a = torch.empty_like(b)
    grid = (tokens, k_heads)
    warps = cfg.num_warps or NUM_WARPS

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod.fused_qkvzba_split_reshape_cat_kernel[grid](
            mixed_qkv, z, b, a, mixed_qkvz, mixed_ba, k_heads, v_heads, head_k, head_v,
            num_warps=warps, num_stages=NUM_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["fused_qkvzba_split_reshape_cat_kernel"], num_warps=warps,
            num_stages=NUM_STAGES, programs=grid[0] * grid[1],
        )  # fmt: skip
        return mixed_qkv, z, b, a

    return launch
