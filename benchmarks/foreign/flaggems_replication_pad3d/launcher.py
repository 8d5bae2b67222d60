"""FlagGems' 3-D replication padding (src/flag_gems/ops/replication_pad3d.py, v5.0.2:
`replicationpad3d_kernel`), launched as FlagGems' `replication_pad3d` launches it, so that
its launch choices are knobs.

The grid is (cdiv(W_out, BLOCK_W), cdiv(H_out, BLOCK_H), N * C * D_out): a program takes
one output depth slice of one (image, channel) volume, clamps its source depth into the
input once, then one BLOCK_H x BLOCK_W tile of that slice: the tile's output rows and
columns shifted back by the top and left pads and clamped into the input (the edge rows and
columns repeated), one gathered 2-D load and one 2-D store, masked past H_out and W_out.
No loop, no arithmetic beyond the index clamps.

FlagGems' launch: `@triton.autotune` over its tuning YAML's `replication_pad3d` entry (the
nvidia backend's; the Hopper file has none), keyed on H_out and W_out: (16, 64) with 4
warps, (32, 32) 4, (64, 16) 4, (8, 128) 8, all with the config loader's default 2 stages
(the kernel has no loop, so they pipeline nothing).  `triton_v1` takes the first entry.
Knobs: `block_h`, `block_w` and `num_warps`, None keeping FlagGems' first entry.  The
output is allocated per call by FlagGems; here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
# the first entry of `replication_pad3d` in FlagGems' nvidia tune_configs.yaml
FLAGGEMS_LAUNCH = {"block_h": 16, "block_w": 64, "num_warps": 4}
FLAGGEMS_STAGES = 2  # FlagGems' config loader's default (no loop: nothing to pipeline)


@dataclass(frozen=True)
class ReplicationPad3dConfig:
    block_h: int | None = None  # None: FlagGems' 16 output rows per program
    block_w: int | None = None  # None: FlagGems' 64 output columns per program
    num_warps: int | None = None  # None: FlagGems' 4


def _pick(cfg: ReplicationPad3dConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_LAUNCH[name]


def prepare(
    cfg: ReplicationPad3dConfig, x: torch.Tensor, pads: tuple[int, int, int, int, int, int]
) -> Callable[[], torch.Tensor]:
    """`pads` as torch's F.pad takes them for a 5-D input: (left, right, top, bottom,
    front, back)."""
    mod = _common.load_source("flaggems_replication_pad3d")
    if x.dim() != 5:
        raise ValueError("x must be [n, c, d, h, w]")
    pad_l, pad_r, pad_t, pad_b, pad_f, pad_ba = (int(p) for p in pads)
    n, c, d_in, h_in, w_in = x.shape
    d_out, h_out, w_out = d_in + pad_f + pad_ba, h_in + pad_t + pad_b, w_in + pad_l + pad_r
    out = torch.empty((n, c, d_out, h_out, w_out), device=x.device, dtype=x.dtype)
    block_h, block_w, warps = (_pick(cfg, k) for k in ("block_h", "block_w", "num_warps"))
    grid = (triton.cdiv(w_out, block_w), triton.cdiv(h_out, block_h), n * c * d_out)
    kernel = mod.replicationpad3d_kernel

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            x, out, d_in, h_in, w_in, d_out, h_out, w_out, pad_l, pad_t, pad_f,
            *x.stride(), *out.stride(), c,
            BLOCK_H=block_h, BLOCK_W=block_w, num_warps=warps, num_stages=FLAGGEMS_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["replicationpad3d_kernel"],
            block_h=block_h, block_w=block_w, num_warps=warps, num_stages=FLAGGEMS_STAGES,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
