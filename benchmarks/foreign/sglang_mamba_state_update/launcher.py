"""SGLang's Mamba-2 decode-step state update (python/sglang/srt/layers/attention/mamba/ops/
mamba_ssm.py, v0.5.9, adapted there from vLLM and mamba_ssm's selective_state_update),
launched by our copy of SGLang's `selective_state_update` so that its launch choices are
knobs.

Each decode token of a Mamba-2 layer updates its sequence's SSM state in place: one program
per (BLOCK_SIZE_M rows of a head's dim, sequence, head) loads its rows x dstate slice of the
state, decays it by exp(A * softplus(dt + dt_bias)), adds dt * B (x) x, writes the output
C . state + D * x gated by silu(z), and stores the state back.  Mamba-2's A, dt, dt_bias and
D are one value per head (stride 0 over dim and dstate: the kernel's TIE_HDIM path).
SGLang's hand-tuned choice (no autotune, which would overwrite the state) by dstate: BLOCK_SIZE_M
x num_warps = 32 x 4 up to 16, 16 x 4 up to 32, 8 x 4 up to 64, 4 x 4 up to 128, 4 x 8
above.  Knobs: `block_m` and `num_warps`, None keeping SGLang's.

The output is allocated in `prepare`, outside the timed call, as SGLang's caller does.  The
state is updated in place: repeated timed calls keep decaying it (|exp(A dt)| < 1).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}


def sglang_tile(dstate: int) -> tuple[int, int]:
    """SGLang's (BLOCK_SIZE_M, num_warps) for a state size."""
    if dstate <= 16:
        return 32, 4
    if dstate <= 32:
        return 16, 4
    if dstate <= 64:
        return 8, 4
    return (4, 4) if dstate <= 128 else (4, 8)


@dataclass(frozen=True)
class MambaStateUpdateConfig:
    block_m: int | None = None  # None: SGLang's by dstate (4 at 128)
    num_warps: int | None = None  # None: SGLang's by dstate (4 at 128)


def prepare(
    cfg: MambaStateUpdateConfig, state: torch.Tensor, x: torch.Tensor, dt: torch.Tensor,
    dt_bias: torch.Tensor, a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, d: torch.Tensor,
    z: torch.Tensor,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("sglang_mamba_ssm")
    batch, nheads, dim, dstate = state.shape
    ngroups = b.shape[1]
    if x.shape != (batch, nheads, dim) or z.shape != x.shape or dt.shape != (batch, nheads):
        raise ValueError("x, z: [batch, nheads, dim]; dt: [batch, nheads]")
    if b.shape != (batch, ngroups, dstate) or c.shape != b.shape or nheads % ngroups:
        raise ValueError("B, C: [batch, ngroups, dstate] with nheads a multiple of ngroups")
    if a.shape != (nheads,) or dt_bias.shape != (nheads,) or d.shape != (nheads,):
        raise ValueError("A, dt_bias, D: one value per head")
    tile_m, tile_warps = sglang_tile(dstate)
    bm = cfg.block_m or tile_m
    warps = cfg.num_warps or tile_warps
    # SGLang's caller's views: one token (T = 1), per-head values broadcast over dim/dstate
    x4, z4 = x.unsqueeze(1), z.unsqueeze(1)
    dt4 = dt.unsqueeze(1).unsqueeze(-1).expand(batch, 1, nheads, dim)
    dt_bias2 = dt_bias.unsqueeze(-1).expand(nheads, dim)
    a3 = a.view(nheads, 1, 1).expand(nheads, dim, dstate)
    d2 = d.unsqueeze(-1).expand(nheads, dim)
    b4, c4 = b.unsqueeze(1), c.unsqueeze(1)
    out = torch.empty_like(x4)
    grid = (triton.cdiv(dim, bm), batch, nheads)
    args = (
        state, x4, dt4, dt_bias2, a3, b4, c4, d2, z4, out, None, -1, None, 0, None, None,
        batch, 1, nheads, dim, dstate, nheads // ngroups,
        *state.stride(), *x4.stride(), *dt4.stride(), *dt_bias2.stride(), *a3.stride(),
        *b4.stride(), *c4.stride(), *d2.stride(), *z4.stride(), *out.stride(), 0, 0,
        True, True, bm,
    )  # fmt: skip

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = mod._selective_scan_update_kernel[grid](
            *args, DISABLE_STATE_UPDATE=False, num_warps=warps
        )
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_selective_scan_update_kernel"],
            block_m=bm, num_warps=warps, programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out.squeeze(1), state

    return launch
