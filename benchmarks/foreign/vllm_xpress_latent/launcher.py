"""vLLM's XPress latent pass (vllm/v1/worker/gpu/spec_decode/xpress/kernels.py, v0.34.0:
`_xpress_latent_kernel`), launched as vLLM's `xpress_latent_pass` launches it, so that its
launch choices are knobs.

One program per speculative block (a request's B draft slots).  It loads the block's
hidden cache [B, R] and the R x R embedding-to-latent projection, gathers each slot's
previous token embedding from the [V, R] table (slot 0 the anchor's predecessor), adds
their tl.dot with the projection, mixes the slots causally per channel (B unrolled steps
over the folded [B, B, R] mixer), then runs the SwiGLU MLP with a residual in HT-column
steps of the hidden size (gate and up as two [B, R] x [R, HT] tl.dots, SiLU and product,
down as a [B, HT] x [HT, R] tl.dot) and stores slots 1..B-1 of the latent.  Every program
reads the same ~1 MB of weights (L2-resident), so one block is a small chain of GEMMs.

vLLM's launch: HT 64, 8 warps, 3 stages (its comment: measured at batch 1, the weight
loads overlap the dots; 4 or more stages do not compile at rank 256), DO_MLP on (the
Qwen3 XPress head's path).  Knobs: the hidden tile and the warps and the stages, None
keeping vLLM's values.  The latent output is made once per step by the head's caller
(`lat0`, reused by every Jacobi pass); here it is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM = {"HT": 64, "num_warps": 8, "num_stages": 3}


@dataclass(frozen=True)
class XPressLatentConfig:
    hidden_tile: int | None = None  # None: vLLM's HT, 64 MLP hidden columns per step
    num_warps: int | None = None  # None: vLLM's 8
    num_stages: int | None = None  # None: vLLM's 3


def prepare(
    cfg: XPressLatentConfig, blk: torch.Tensor, am1: torch.Tensor, xh: torch.Tensor,
    w1: torch.Tensor, wlat_t: torch.Tensor, mix: torch.Tensor, wg_t: torch.Tensor,
    wu_t: torch.Tensor, wd_t: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_xpress_latent")
    n, b = blk.shape
    r = xh.shape[-1]
    h = wg_t.shape[-1]
    ht = cfg.hidden_tile or VLLM["HT"]
    warps = cfg.num_warps or VLLM["num_warps"]
    stages = cfg.num_stages or VLLM["num_stages"]
    if h % ht:
        raise ValueError(f"the hidden tile {ht} must divide the MLP hidden size {h}")
    lat_out = torch.empty(n, b - 1, r, dtype=xh.dtype, device=xh.device)
    grid = (n,)

    def launch() -> torch.Tensor:
        handle = mod._xpress_latent_kernel[grid](
            blk, am1, xh, lat_out, w1, wlat_t, mix, wg_t, wu_t, wd_t,
            B=b, R=r, H=h, BP=triton.next_power_of_2(b), HT=ht, DO_MLP=True,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_xpress_latent_kernel"],
            hidden_tile=ht, num_warps=warps, num_stages=stages, programs=n,
        )  # fmt: skip
        return lat_out

    return launch
