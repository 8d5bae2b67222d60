"""vLLM's multi-LoRA shrink (vllm/lora/ops/triton_ops/lora_shrink_op.py and kernel_utils.py,
v0.34.0: `_lora_shrink_kernel` with its `do_shrink_kernel` and `mm_k`), launched as vLLM's
`_lora_shrink` launches it (no batch invariance, no programmatic dependent launch) so that
its launch choices are knobs.

The first half of every LoRA-wrapped linear layer of a multi-adapter server (Punica's SGMV
shrink): for each token and each output slice of the layer (q, k and v of a fused QKV
projection), the token's hidden state times the A matrix of that token's adapter, a
hidden -> rank projection written as fp32 into the [slices, tokens, rank] buffer that the
expand kernel reads next.  The tokens are grouped by adapter once per step (vLLM's
`LoRAKernelMeta.prepare_tensors`: a stable sort of the token-to-adapter map, the adapters'
token counts and start offsets); one program per (split of K, BLOCK_M tokens of one adapter,
BLOCK_N of the rank), per slice and per adapter slot gathers its tokens' rows, loops over
its share of the hidden size in BLOCK_K-deep tl.dot steps (SPLIT_K programs interleave along
K, each stepping BLOCK_K * SPLIT_K), scales, and atomically adds its partial sum into the
zeroed buffer (a plain store when SPLIT_K is 1).  Programs of an adapter slot with no
adapter, or past its adapter's tokens, exit at once.  The grid's last axis is max_loras + 1
adapter slots (vLLM's launch shape unless `specialize_active_lora` is set).

vLLM's choice without a tuned table (`get_lora_op_configs("shrink", ...)`, the default):
BLOCK_M 32, BLOCK_N 16, GROUP_SIZE_M 8, 4 warps, 2 stages, and below 128 tokens BLOCK_K 256
with SPLIT_K 64, from 128 tokens on BLOCK_K 32 with SPLIT_K 8.  Knobs: those seven, None
keeping vLLM's.  The zeroing of the buffer (`output_tensor.zero_()` inside `_lora_shrink`)
is timed with the kernel; the adapter grouping, the per-slice weight pointer table (cached
by vLLM across steps) and the buffer's allocation happen in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_M = 32
VLLM_BLOCK_N = 16
VLLM_GROUP_M = 8
VLLM_WARPS = 4
VLLM_STAGES = 2
SMALL_BATCH = 128  # below this many tokens vLLM's default is a deep, widely split K


@dataclass(frozen=True)
class LoraShrinkConfig:
    block_m: int | None = None  # None: vLLM's 32
    block_n: int | None = None  # None: vLLM's 16
    block_k: int | None = None  # None: vLLM's 256 below 128 tokens, else 32
    split_k: int | None = None  # None: vLLM's 64 below 128 tokens, else 8
    group_size_m: int | None = None  # None: vLLM's 8
    num_warps: int | None = None  # None: vLLM's 4
    num_stages: int | None = None  # None: vLLM's 2


def vllm_default_config(tokens: int) -> dict[str, int]:
    """vLLM's default shrink configuration (lora/ops/triton_ops/utils.py, no tuned table)."""
    small = tokens < SMALL_BATCH
    return {
        "block_m": VLLM_BLOCK_M,
        "block_n": VLLM_BLOCK_N,
        "block_k": 256 if small else 32,
        "split_k": 64 if small else 8,
        "group_size_m": VLLM_GROUP_M,
        "num_warps": VLLM_WARPS,
        "num_stages": VLLM_STAGES,
    }


def kernel_meta(
    mapping: torch.Tensor, loras: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """What vLLM's `LoRAKernelMeta.prepare_tensors` computes from the token-to-adapter map:
    token indices sorted by adapter (stable), the active adapter ids (-1 padded to loras + 1
    slots), their token counts and the counts' exclusive cumsum (loras + 2 entries)."""
    device = mapping.device
    _, order = torch.sort(mapping, stable=True)
    ids, counts = torch.unique(mapping, sorted=True, return_counts=True)
    lora_ids = torch.full((loras + 1,), -1, dtype=torch.int32, device=device)
    lora_ids[: ids.numel()] = ids.to(torch.int32)
    per_lora = torch.zeros(loras + 1, dtype=torch.int32, device=device)
    per_lora[: counts.numel()] = counts.to(torch.int32)
    start = torch.zeros(loras + 2, dtype=torch.int32, device=device)
    start[1 : 1 + counts.numel()] = torch.cumsum(counts, 0).to(torch.int32)
    return order.to(torch.int32), lora_ids, per_lora, start


def live_programs(mapping: torch.Tensor, block_m: int, column_blocks: list[int]) -> int:
    """Programs of vLLM's LoRA grid that find work: for each adapter with tokens, its token
    blocks times the column blocks of every slice (``column_blocks``, one entry per slice).
    The grid gives every one of its loras + 1 slots every token block of the whole batch and
    the widest slice's column blocks; the others return at once.  One read of the map to the
    host, at preparation, not per launch."""
    ids, counts = torch.unique(mapping, return_counts=True)
    token_blocks = sum(-(-n // block_m) for i, n in zip(ids.tolist(), counts.tolist()) if i >= 0)
    return token_blocks * sum(column_blocks)


def prepare(
    cfg: LoraShrinkConfig, x: torch.Tensor, lora_a: torch.Tensor, mapping: torch.Tensor,
    scale: float,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    shrink = _common.load_source("vllm_lora_shrink")
    utils = _common.load_source("vllm_lora_kernel_utils")
    # The extracted shrink kernel calls do_shrink_kernel (and it mm_k) by global name.
    shrink.do_shrink_kernel = utils.do_shrink_kernel
    if x.dim() != 2 or lora_a.dim() != 4 or not lora_a.is_contiguous():
        raise ValueError("x must be [tokens, hidden], lora_a [slices, loras, rank, hidden]")
    tokens, hidden = x.shape
    slices, loras, rank, _ = lora_a.shape
    if lora_a.shape[-1] != hidden or mapping.shape != (tokens,):
        raise ValueError("lora_a's last axis must be the hidden size, mapping [tokens]")
    x = x.contiguous()
    order, lora_ids, per_lora, start = kernel_meta(mapping, loras)
    weights = lora_a[0]
    if slices > 1:  # vLLM's table of the slices' weight pointers (cached across steps)
        ptrs = [lora_a[s].data_ptr() for s in range(slices)]
        weights = torch.tensor(ptrs, dtype=torch.uint64, device=x.device)
    out = torch.empty(slices, tokens, rank, dtype=torch.float32, device=x.device)
    c = {**vllm_default_config(tokens), **{k: v for k, v in vars(cfg).items() if v is not None}}
    even_k = hidden % (c["block_k"] * c["split_k"]) == 0
    grid = (
        c["split_k"] * -(-tokens // c["block_m"]) * -(-rank // c["block_n"]),
        slices,
        loras + 1,
    )
    d0, d1, d2 = lora_a[0].stride()
    programs = grid[0] * grid[1] * grid[2]
    live = live_programs(mapping, c["block_m"], [c["split_k"] * -(-rank // c["block_n"])] * slices)

    def launch() -> torch.Tensor:
        out.zero_()
        handle = shrink._lora_shrink_kernel[grid](
            x, weights, out, tokens, rank, hidden, order, per_lora, start, lora_ids, scale,
            x.stride(0), x.stride(1), d0, d1, d2, out.stride(0), out.stride(1), out.stride(2),
            c["block_m"], c["block_n"], c["block_k"], even_k, c["split_k"], c["group_size_m"],
            slices, False,
            num_warps=c["num_warps"], num_stages=c["num_stages"], launch_pdl=False,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["zero_", "_lora_shrink_kernel"],
            **c, even_k=even_k, programs=programs,
            metrics={"live_program_fraction": live / programs},
        )  # fmt: skip
        return out

    return launch
