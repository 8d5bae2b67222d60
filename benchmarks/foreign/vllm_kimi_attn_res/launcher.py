"""vLLM's Kimi K3 block attention-residuals kernel (vllm/models/kimi_k3/nvidia/ops/attn_res.py,
v0.34.0: `_attn_res_kernel`), launched as vLLM's `attn_res` launches it on every GPU but
SM100 (where a native op takes hidden 7168), so that its launch choices are knobs.

One program per token: it loads the token's prefix and delta rows (BLOCK_D =
next_power_of_2(hidden) lanes, fp32), stores prefix + delta back in the dtype (HAS_DELTA)
and, at a block-write layer, into the block table's slot `block_write_idx` (WRITE_BLOCK);
then it walks the num_blocks valid blocks and the new prefix BLOCK_L sources at a time
([BLOCK_L, BLOCK_D] loads through the table's token and slot strides, the prefix selected
for the last source by a pointer tl.where, evict_first), RMS-normalises each source into a
logit against norm_weight * qk_weight, and keeps an online softmax and the weighted sum in
registers; finally it RMS-normalises the mix with the output norm weight
(APPLY_OUTPUT_NORM) and stores it.  Memory-bound: each source row is read once, the prefix
twice (the second read from cache).  Strides, counts, the write index and both epsilons
are constexpr (one compilation per layer kind).  On Hopper and later vLLM also passes
launch_pdl (a programmatic-dependent-launch wait at the top); the same here on a CUDA
device of compute capability 9 or more, off elsewhere.

vLLM's launch: grid (tokens,); BLOCK_L 1 source a step and 4 warps from 256 tokens up or
with at most one block, else 4 sources a step and 8 warps ("tuned on GB300: source tiling
helps decode, while one-source tiles scale better for prefill"); 2 stages always; no
autotune.  Knobs: the sources per step, the warps and the stages, None keeping vLLM's;
tiles of more than 256 fp32 values per thread are refused (see MAX_PER_THREAD).  vLLM's
per-call output (prefix.new_empty) is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_PREFILL_TOKENS = 256  # from this many tokens (or with <= 1 block): 1 source, 4 warps
VLLM_PREFILL = (1, 4)
VLLM_DECODE = (4, 8)
VLLM_STAGES = 2
# A [BLOCK_L, BLOCK_D] fp32 source tile over more than 256 values a thread spills; vLLM's
# two launches hold 64 (1 x 8192 over 4 warps) and 128 (4 x 8192 over 8 warps) at hidden 7168.
MAX_PER_THREAD = 256
EPS = 1e-5


@dataclass(frozen=True)
class AttnResConfig:
    block_l: int | None = None  # None: vLLM's 1 (>= 256 tokens or <= 1 block) or 4
    num_warps: int | None = None  # None: vLLM's 4 or 8, with block_l
    num_stages: int | None = None  # None: vLLM's 2


def vllm_pdl(device: torch.device) -> bool:
    """vLLM's `current_platform.is_arch_support_pdl()`: CUDA at compute capability 9+."""
    if device.type != "cuda":
        return False
    return torch.cuda.get_device_capability(device)[0] >= 9


def vllm_choice(tokens: int, sources: int) -> tuple[int, int]:
    """(BLOCK_L, num_warps) as `attn_res` picks them."""
    return VLLM_PREFILL if tokens >= VLLM_PREFILL_TOKENS or sources <= 1 else VLLM_DECODE


def prepare(
    cfg: AttnResConfig, prefix: torch.Tensor, delta: torch.Tensor, blocks: torch.Tensor,
    norm_weight: torch.Tensor, qk_weight: torch.Tensor, output_norm_weight: torch.Tensor,
    sources: int, layer_kind: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor]]:  # fmt: skip
    mod = _common.load_source("vllm_kimi_attn_res")
    tokens, hidden = prefix.shape
    if delta.shape != prefix.shape or blocks.shape[0] != tokens or blocks.shape[2] != hidden:
        raise ValueError("prefix and delta [tokens, hidden], blocks [tokens, slots, hidden]")
    if prefix.stride(-1) != 1 or delta.stride(-1) != 1 or blocks.stride(-1) != 1:
        raise ValueError("rows must be contiguous (vLLM asserts it)")
    if layer_kind not in (1, 2) or not 0 <= sources <= blocks.shape[1] - (layer_kind == 2):
        raise ValueError("sources <= slots; a block-write layer (2) writes block sources < slots")
    vl, vw = vllm_choice(tokens, sources)
    block_l = cfg.block_l or vl
    warps = cfg.num_warps or vw
    stages = cfg.num_stages or VLLM_STAGES
    block_d = triton.next_power_of_2(hidden)
    if block_l * block_d > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block_l} x {block_d} source tile over {warps} warps holds more than "
            f"{MAX_PER_THREAD} fp32 values per thread"
        )
    pdl = vllm_pdl(prefix.device)
    write_idx = sources if layer_kind == 2 else -1
    out = prefix.new_empty(prefix.shape)
    grid = (tokens,)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        handle = mod._attn_res_kernel[grid](
            prefix, delta, blocks, norm_weight, qk_weight, output_norm_weight, out,
            prefix.stride(0), delta.stride(0), blocks.stride(0), blocks.stride(1),
            out.stride(0), sources, hidden, write_idx, EPS, EPS,
            HAS_DELTA=True, WRITE_BLOCK=write_idx >= 0, APPLY_OUTPUT_NORM=True,
            BLOCK_L=block_l, BLOCK_D=block_d, num_warps=warps, num_stages=stages,
            launch_pdl=pdl,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_attn_res_kernel"],
            block_l=block_l, block_d=block_d, num_warps=warps, num_stages=stages,
            programs=tokens, launch_pdl=pdl,
        )  # fmt: skip
        return out, prefix, blocks

    return launch
