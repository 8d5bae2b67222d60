"""vLLM's one-shot fused MoE-LoRA kernel (vllm/lora/ops/triton_ops/fused_moe_lora_op.py,
v0.34.0: `_fused_moe_lora_one_shot_kernel`), launched as vLLM's
`_run_fused_moe_lora_one_shot` launches it for the gate/up (w13) LoRA of a MoE layer (two
slices, output not scaled by the routing weights, added into the base intermediate in
place), so that its launch choices are knobs.

The grid is (M blocks x NPID, slices, active adapters).  The (token, expert) pairs of each
adapter are grouped by expert and padded to BLOCK_M per expert (vLLM's
`moe_lora_align_block_size`); a program resolves its adapter, returns for a disabled one or
a block past the adapter's padded count, reads its block's expert, gathers its BLOCK_M
pairs' hidden rows (pair // top_k), and multiplies them by the expert's A matrix of its
slice in BLOCK_K-deep tl.dot steps into a [BLOCK_M, rank padded to >= 16] fp32 tile kept in
registers (shrink), rounds it to the dtype, then walks its share (one of NPID) of the
slice's N columns in BLOCK_N tiles: tile times the expert's B matrix, added into the
output rows of its pairs (expand).  A and B of both slices are reached through uint64
tables of per-slice base addresses.

vLLM's launch: BLOCK_M = the alignment's block size (the fused-MoE default heuristic
without a tuned table: 16 up to 32 tokens, 32 up to 96, 64 up to 512, else 128), BLOCK_R =
max(next_power_of_2(rank), 16), BLOCK_K 128 when hidden >= 256 (else 128 or 64 by pairs per
expert), BLOCK_N 128, NPID by an occupancy heuristic over the SM count (1 when the base
grid already has 1.5 programs per SM), 4 warps (8 when NPID > 1), 3 stages.  The kernel's
@triton.heuristics EVEN_K (hidden % BLOCK_K == 0) is passed as it sets it.  Knobs:
BLOCK_M, BLOCK_N, BLOCK_K, NPID, the warps and the stages, None keeping vLLM's.  The
alignment (a separate CUDA op upstream, rebuilt here for the knob's BLOCK_M), the pointer
tables (cached by vLLM) and a copy of the base output that the timed calls add into are
made in `prepare`; repeated timed calls keep adding the LoRA delta.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK_N = 128
VLLM_STAGES = 3
DEFAULT_SMS = 132  # an H100 SXM's SM count, for the CPU interpreter


@dataclass(frozen=True)
class MoeLoraConfig:
    block_m: int | None = None  # None: the fused-MoE default heuristic's BLOCK_SIZE_M
    block_n: int | None = None  # None: vLLM's 128
    block_k: int | None = None  # None: vLLM's 128 for hidden >= 256
    npid: int | None = None  # None: vLLM's occupancy heuristic
    num_warps: int | None = None  # None: vLLM's 4, or 8 when NPID > 1
    num_stages: int | None = None  # None: vLLM's 3


def vllm_block_m(tokens: int) -> int:
    """BLOCK_SIZE_M of `get_default_config` for bf16/fp16 (no tuned table), which
    `add_lora_w13` passes to the alignment and the kernel."""
    if tokens <= 32:
        return 16
    if tokens <= 96:
        return 32
    if tokens <= 512:
        return 64
    return 128


def align(
    topk_ids: torch.Tensor, mapping: torch.Tensor, experts: int, loras: int, block_m: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """What vLLM's `moe_lora_align_block_size` builds: per adapter, the flat (token, slot)
    pair ids grouped by expert, each expert's group padded to a multiple of block_m with
    the pair count (an invalid id); per block its expert (-1 past the used blocks); per
    adapter its padded count.  Pairs of tokens without an adapter (-1) are in no group."""
    device = topk_ids.device
    pairs = topk_ids.numel()
    top_k = topk_ids.shape[1]
    padded_len = pairs + experts * (block_m - 1) if pairs >= experts else pairs * block_m
    blocks = triton.cdiv(padded_len, block_m)
    pair_lora = mapping.long().repeat_interleave(top_k)
    pair_expert = topk_ids.reshape(-1).long()
    valid = (pair_lora >= 0).nonzero().squeeze(1)
    key = pair_lora[valid] * experts + pair_expert[valid]
    counts = torch.bincount(key, minlength=loras * experts)
    padded = (counts + block_m - 1) // block_m * block_m
    grid = padded.view(loras, experts)
    start = torch.cumsum(grid, 1) - grid  # exclusive, within each adapter
    key_sorted, order = torch.sort(key, stable=True)
    group_first = torch.cumsum(counts, 0) - counts
    rank_in_group = torch.arange(key.numel(), device=device) - group_first[key_sorted]
    row = key_sorted // experts
    col = start.view(-1)[key_sorted] + rank_in_group
    sorted_ids = torch.full((loras, padded_len), pairs, dtype=torch.int32, device=device)
    sorted_ids[row, col] = valid[order].to(torch.int32)
    expert_ids = torch.full((loras, blocks), -1, dtype=torch.int32, device=device)
    for lora in range(loras):
        eids = torch.repeat_interleave(torch.arange(experts, device=device), grid[lora] // block_m)
        expert_ids[lora, : eids.numel()] = eids.to(torch.int32)
    return sorted_ids, expert_ids, grid.sum(1).to(torch.int32)


def sm_count(device: torch.device) -> int:
    if device.type == "cuda":
        return torch.cuda.get_device_properties(device).multi_processor_count
    return DEFAULT_SMS


def prepare(
    cfg: MoeLoraConfig, out_base: torch.Tensor, x: torch.Tensor, lora_a: torch.Tensor,
    lora_b: torch.Tensor, topk_ids: torch.Tensor, topk_weights: torch.Tensor,
    mapping: torch.Tensor,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_moe_lora")
    if lora_a.dim() != 5 or lora_b.dim() != 5:
        raise ValueError(
            "lora_a must be [slices, loras, experts, rank, hidden], lora_b [slices, loras, "
            "experts, n, rank]"
        )
    slices, loras, experts, rank, hidden = lora_a.shape
    n = lora_b.shape[3]
    tokens, top_k = topk_ids.shape
    if x.shape != (tokens, hidden) or out_base.shape != (tokens, top_k, slices * n):
        raise ValueError("x must be [tokens, hidden] and out_base [tokens, top_k, slices n]")
    if rank > 128:
        raise ValueError("the one-shot kernel takes ranks up to 128")
    device = x.device
    block_m = cfg.block_m or vllm_block_m(tokens)
    sorted_ids, expert_ids, post_padded = align(topk_ids, mapping, experts, loras, block_m)
    lora_ids = torch.arange(loras, dtype=torch.int32, device=device)  # all adapters active
    enabled = torch.ones(loras + 1, dtype=torch.int32, device=device)
    a_ptrs = torch.tensor([lora_a[s].data_ptr() for s in range(slices)], dtype=torch.uint64)
    b_ptrs = torch.tensor([lora_b[s].data_ptr() for s in range(slices)], dtype=torch.uint64)
    a_ptrs, b_ptrs = a_ptrs.to(device), b_ptrs.to(device)
    out = out_base.clone()
    out_view = out.view(-1, slices * n)
    block_r = max(triton.next_power_of_2(rank), 16)
    m_blocks = triton.cdiv(sorted_ids.shape[1], block_m)
    # vLLM's NPID heuristic
    base = max(m_blocks * slices * loras, 1)
    shrink_ratio = hidden / max(hidden + n, 1)
    budget = max(1, int(1.5 / max(shrink_ratio, 1e-3)) + 1)
    sms = sm_count(device)
    if base >= int(1.5 * sms):
        npid = 1
    else:
        npid = min(max(1, min(16, (2 * sms + base - 1) // base)), budget)
    npid = max(1, min(npid, max(1, n // 128)))
    npid = cfg.npid or npid
    warps = cfg.num_warps or (8 if npid > 1 else 4)
    stages = cfg.num_stages or VLLM_STAGES
    block_n = cfg.block_n or VLLM_BLOCK_N
    if cfg.block_k:
        block_k = cfg.block_k
    elif hidden >= 256:
        block_k = 128
    else:
        block_k = 128 if topk_weights.numel() / max(experts, 1) >= 16 else 64
    even_k = hidden % block_k == 0
    grid = (m_blocks * npid, slices, loras)
    a0, b0 = lora_a[0], lora_b[0]

    def launch() -> torch.Tensor:
        handle = mod._fused_moe_lora_one_shot_kernel[grid](
            x, a_ptrs, b_ptrs, out_view, topk_weights, sorted_ids, expert_ids, post_padded,
            mapping, lora_ids, enabled, n, hidden, topk_weights.numel(), top_k, loras,
            x.stride(0), x.stride(1), *a0.stride(), *b0.stride(), out_view.stride(0),
            out_view.stride(1), sorted_ids.stride(0), expert_ids.stride(0), n,
            token_mapping_factor=top_k, naive_block_assignment=False,
            MUL_ROUTED_WEIGHT=False, BLOCK_M=block_m, BLOCK_R=block_r, actual_rank=rank,
            NPID_FACTOR=npid, BLOCK_N=block_n, BLOCK_K=block_k, EVEN_K=even_k,
            ADD_INPUTS=True, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_fused_moe_lora_one_shot_kernel"],
            block_m=block_m, block_r=block_r, block_n=block_n, block_k=block_k,
            even_k=even_k, npid=npid, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1] * grid[2],
        )  # fmt: skip
        return out

    return launch
