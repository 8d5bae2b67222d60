"""Liger-Kernel's RoPE forward (liger_kernel.ops.rope, 0.8.5), launched by our copy of
Liger's `rope_forward` so that its launch choice is a knob.

One program per token (b * s programs) rotates all of that token's q heads and k heads in
place: it loads the left and right halves of the rotary dimension as [heads, d/2] tiles
(heads padded to a power of two) and the token's cos and sin half-rows, in the dtype of
cos and sin.  Liger passes no num_warps (Triton's default, 4); it is the knob.  Liger's
wrapper transposes and makes q and k contiguous per call; here they arrive in the layout
the kernel reads ([b, s, h, d], contiguous), so the timed call is the launch alone.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from kbopt.bench.interpreter import fix_scalar_index_if_interpreting

LAST_INFO: dict[str, Any] = {}
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class LigerRopeConfig:
    num_warps: int | None = None  # None: Triton's default (Liger passes none)


def prepare(
    cfg: LigerRopeConfig, q: torch.Tensor, k: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import rope as liger

    for name, t in (("q", q), ("k", k), ("cos", cos), ("sin", sin)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (the layout the kernel reads)")
    batch, seq_len, n_qh, head_dim = q.shape
    n_kh = k.shape[2]
    rotary_dim = min(cos.shape[-1], head_dim)
    pad_hd, pad_rd = triton.next_power_of_2(head_dim), triton.next_power_of_2(rotary_dim)
    pad_qh, pad_kh = triton.next_power_of_2(n_qh), triton.next_power_of_2(n_kh)
    n_row = batch * seq_len
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    args = (
        q, q.stride(1), k, k.stride(1), cos, cos.stride(-2), sin, sin.stride(-2),
        seq_len, batch, cos.shape[0], n_qh, n_kh, head_dim, pad_qh, pad_kh, pad_hd, pad_rd,
        rotary_dim,
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = liger._triton_rope[(n_row,)](
            *args, BLOCK_SIZE=max(pad_qh, pad_kh), BACKWARD_PASS=False, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_triton_rope"], num_warps=warps,
            programs=n_row,
        )  # fmt: skip
        return q, k

    return launch
