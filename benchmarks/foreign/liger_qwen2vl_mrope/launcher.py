"""Liger-Kernel's Qwen2-VL M-RoPE forward (liger_kernel.ops.qwen2vl_mrope, 0.8.5), launched
by our copy of Liger's `qwen2vl_mrope_forward` so that its launch choice is a knob.

One program per token (b * s programs) rotates all of that token's q heads and k heads in
place.  It first assembles the token's cos and sin half-rows from the three position
tables (three masked loads of 64 columns each, one per section: temporal, height, width),
then loads the left and right halves of every head as [heads, 64] tiles (heads padded to
a power of two: 28 -> 32) and stores the rotated halves, computing in the dtype of cos and
sin.  Liger passes no num_warps (Triton's default, 4); it is the knob.  Liger's wrapper
transposes q and k and makes them contiguous per call; here they arrive in the layout the
kernel reads ([b, s, h, d], contiguous), so the timed call is the launch alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.liger_qwen2vl_mrope.reference import MROPE_SECTION  # pairs per position axis
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class LigerQwen2vlMropeConfig:
    num_warps: int | None = None  # None: Triton's default (Liger passes none)


def prepare(
    cfg: LigerQwen2vlMropeConfig,
    q: torch.Tensor,
    k: torch.Tensor,
    cos: torch.Tensor,
    sin: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import qwen2vl_mrope as liger

    for name, t in (("q", q), ("k", k), ("cos", cos), ("sin", sin)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (the layout the kernel reads)")
    batch, seq_len, n_qh, head_dim = q.shape
    n_kh = k.shape[2]
    if cos.shape != (3, batch, seq_len, head_dim) or sin.shape != cos.shape:
        raise ValueError("cos and sin must be [3, b, s, head_dim] (temporal, height, width)")
    pad_hd = triton.next_power_of_2(head_dim)
    pad_qh, pad_kh = triton.next_power_of_2(n_qh), triton.next_power_of_2(n_kh)
    n_row = batch * seq_len
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    args = (
        q, k, cos, sin, seq_len, batch, n_qh, n_kh, head_dim, pad_qh, pad_kh, pad_hd,
        MROPE_SECTION[0], MROPE_SECTION[1],
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = liger._triton_qwen2vl_mrope[(n_row,)](
            *args, BLOCK_SIZE=max(pad_qh, pad_kh), BACKWARD_PASS=False, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_triton_qwen2vl_mrope"],
            num_warps=warps, programs=n_row,
        )  # fmt: skip
        return q, k

    return launch
