"""Liger-Kernel's Llama 4 RoPE forward (liger_kernel.ops.llama4_rope, 0.8.5), launched by
our copy of Liger's `llama4_rope_forward` so that its launch choices are knobs.

Llama 4 rotates q and k as complex numbers: each head's 128 values are 64 interleaved
(real, imaginary) pairs, multiplied by the position's complex frequencies.  A 2-D grid: one
program per (token, head) for max(query heads, KV heads) heads; a program loops over the
head's pairs in BLOCK_SIZE-pair steps (unrolled), loads the real and the imaginary parts of
its query head as two stride-2 vectors and, when its head index is below the KV head count,
those of the KV head too, multiplies by the frequencies (fp32, [seq, pairs, 2]) with FMAs
and stores both parts in place.  Liger's choices (`_select_kernel_meta`): 64 pairs per step
and 4 warps for head_dim 128, num_stages 2.  Knobs: `block_size` (pairs per step) and
`num_warps`, None keeping Liger's.

Liger's wrapper casts k to q's dtype and makes q, k and the frequencies contiguous (no-ops
here: they arrive in that layout), so the timed call is the launch alone.  The frequencies
are indexed by the position in the sequence only, as Liger does: every sequence of a batch
uses the same rows.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
LIGER_STAGES = 2
IMAG_SIGN = 1.0  # forward (the backward pass conjugates with -1)


@dataclass(frozen=True)
class LigerLlama4RopeConfig:
    block_size: int | None = None  # None: liger's _select_kernel_meta (64 pairs at head_dim 128)
    num_warps: int | None = None  # None: liger's _select_kernel_meta (4 at head_dim 128)


def prepare(
    cfg: LigerLlama4RopeConfig, q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import llama4_rope as liger

    for name, t in (("q", q), ("k", k), ("freqs", freqs)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (the layout the kernel reads)")
    if k.dtype != q.dtype:
        raise ValueError("q and k must have one dtype (Liger casts k to q's)")
    batch, seq_len, n_qh, head_dim = q.shape
    n_kh = k.shape[2]
    half = head_dim // 2
    if freqs.dim() != 3 or freqs.shape[0] < seq_len or freqs.shape[1:] != (half, 2):
        raise ValueError(f"freqs must be [>= {seq_len}, {half}, 2] (real view of complex64)")
    block, warps = liger._select_kernel_meta(half)
    block = cfg.block_size or block
    warps = cfg.num_warps or warps
    grid = (batch * seq_len, max(n_qh, n_kh))

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = liger._llama4_rope_kernel[grid](
            q, k, freqs, q.stride(1), k.stride(1), q.stride(2), k.stride(2), freqs.stride(0),
            seq_len, batch, IMAG_SIGN, half, n_qh, n_kh, block,
            num_warps=warps, num_stages=LIGER_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_llama4_rope_kernel"],
            block_size=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return q, k

    return launch
