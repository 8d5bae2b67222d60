"""The Triton tutorial layer norm forward (05-layer-norm.py): one program per row.

`_layer_norm_fwd_fused` reads its row three times in BLOCK_SIZE chunks (mean, variance,
normalize), writes y and the row's mean and 1/std (fp32, for a backward pass).  The
tutorial's `LayerNorm.forward` picks BLOCK_SIZE = min(64 KB / element size,
next_pow2(N)) and num_warps = min(max(BLOCK_SIZE // 256, 1), 8); a knob left at None takes
that choice, a value overrides it.  Output and statistics buffers are allocated in
`prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class LayerNormConfig:
    block_size: int | None = None  # None: the tutorial's min(64 KB / elt, next_pow2(N))
    num_warps: int | None = None  # None: the tutorial's min(max(BLOCK_SIZE // 256, 1), 8)


def settings(cfg: LayerNormConfig, n: int, element_size: int) -> tuple[int, int]:
    max_fused = 65536 // element_size
    block = cfg.block_size or min(max_fused, triton.next_power_of_2(n))
    if cfg.block_size is None and n > block:
        raise RuntimeError("This layer norm doesn't support feature dim >= 64KB.")  # tutorial's
    warps = cfg.num_warps or min(max(block // 256, 1), 8)
    return block, warps


def prepare(
    cfg: LayerNormConfig, x: torch.Tensor, w: torch.Tensor, b: torch.Tensor, eps: float
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("triton_layernorm")
    x_arg = x.reshape(-1, x.shape[-1])
    m, n = x_arg.shape
    y = torch.empty_like(x)
    mean = torch.empty((m,), dtype=torch.float32, device=x.device)
    rstd = torch.empty((m,), dtype=torch.float32, device=x.device)
    block, warps = settings(cfg, n, x.element_size())

    def launch() -> torch.Tensor:
        handle = mod._layer_norm_fwd_fused[(m,)](
            x_arg, y, w, b, mean, rstd, x_arg.stride(0), n, eps,
            BLOCK_SIZE=block, num_warps=warps, num_ctas=1,
        )  # fmt: skip
        _common.record(
            LAST_INFO,
            handle,
            kernels=1,
            kernel_names=["_layer_norm_fwd_fused"],
            block_size=block,
            num_warps=warps,
        )
        return y

    return launch
