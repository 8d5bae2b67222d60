"""SGLang's Kimi Delta Attention forget gate (python/sglang/srt/layers/attention/fla/kda.py,
v0.5.9: `kda_gate_fwd_kernel`), launched as SGLang's `fused_kda_gate` launches it, so that
its launch choices are knobs.

One program per (BT-token tile, head) loads the head's A_log once (-exp of it), then a
[BT, BD] tile of the gate projection through a block pointer (rows H * D apart, BD the head
width's next power of two, boundary-checked), adds the head's bias row, applies softplus
(log(1 + exp) below the threshold, identity above) in fp32, scales by -exp(A_log) and
stores the fp32 [BT, D] tile into y [tokens, heads, head_dim].  No loop, no tl.dot.

SGLang's launch: the kernel is @triton.autotune'd over BT in {32, 64, 128}, warps in
{4, 8, 16, 32} and stages in {2, 3} keyed on (H, D); the fetched copy drops the autotuner,
and `triton_v1` takes its first configuration (BT 32, 4 warps, 2 stages).  Knobs: `block_t`,
`num_warps`, `num_stages`, None keeping that first configuration.  SGLang's output buffer
(`torch.empty_like(g, dtype=float32)` per call) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FIRST_AUTOTUNE = {"block_t": 32, "num_warps": 4, "num_stages": 2}
BETA = 1.0  # fused_kda_gate's defaults, which KimiDeltaAttention keeps
THRESHOLD = 20.0


@dataclass(frozen=True)
class KdaGateConfig:
    block_t: int | None = None  # None: the first autotune configuration's BT 32
    num_warps: int | None = None  # None: its 4 warps
    num_stages: int | None = None  # None: its 2 stages


def _pick(cfg: KdaGateConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FIRST_AUTOTUNE[name]


def prepare(
    cfg: KdaGateConfig, g: torch.Tensor, a_log: torch.Tensor, g_bias: torch.Tensor
) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_kda_gate")
    if g.dim() != 2 or a_log.dim() != 1 or g_bias.dim() != 1:
        raise ValueError("g [tokens, heads * head_dim], a_log [heads], g_bias [heads * head_dim]")
    tokens, hd = g.shape
    heads = a_log.numel()
    if hd % heads or g_bias.numel() != hd:
        raise ValueError("g's width must be heads * head_dim, g_bias as wide")
    head_dim = hd // heads
    bt, warps, stages = (_pick(cfg, n) for n in ("block_t", "num_warps", "num_stages"))
    y = torch.empty_like(g, dtype=torch.float32)
    grid = (triton.cdiv(tokens, bt), heads)
    bd = triton.next_power_of_2(head_dim)

    def launch() -> torch.Tensor:
        handle = mod.kda_gate_fwd_kernel[grid](
            g, a_log, y, g_bias, BETA, THRESHOLD, tokens, heads, head_dim,
            BT=bt, BD=bd, HAS_BIAS=True, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["kda_gate_fwd_kernel"],
            block_t=bt, block_d=bd, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1],
        )  # fmt: skip
        return y.view(tokens, heads, head_dim)

    return launch
