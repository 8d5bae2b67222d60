"""LMDeploy's fused LoRA (lmdeploy/pytorch/kernels/cuda/fused_lora.py, v0.18.0:
`_fused_lora_kernel` with its `_atomic_store` helper), launched as LMDeploy's `fused_lora`
launches it for its PyTorch engine's `TritonLoRAImpl` so that its launch choices are knobs.

The whole LoRA branch of a LoRA-wrapped linear in one kernel (LMDeploy's multi-adapter
serving, `adapters=` on the PyTorch backend): per request (grid axis 1) and BLOCK_SIZE_M of
its packed tokens (axis 0), the shrink x @ A^T over the whole hidden size in BLOCK_SIZE_K-
deep fp32 tl.dot steps into a [BLOCK_SIZE_M, BLOCK_SIZE_R] accumulator (the adapter's rank
rows of the stacked A, BLOCK_SIZE_R = max(16, max_rank), rows past the rank read modulo the
rank and zeroed after), rounded to the dtype and scaled by the adapter's scaling, then,
without leaving the program, the expand against the adapter's rows of the stacked B in
BLOCK_SIZE_N-wide column steps across the whole output width (one tl.dot each), each
[BLOCK_SIZE_M, BLOCK_SIZE_N] tile added into the linear's base output (CUM: the base
output is contiguous, so the kernel writes into it).  `_atomic_store` means a relaxed
atomic add for fp16 and fp32 outputs and a load-add-store for bf16, but its test compares
the pointer's Triton dtype with torch's dtypes, which Triton 3.6 never finds equal: every
dtype takes the load-add-store (each output element has one writer, so either is right).
The rows of a tile past its request's length are read modulo the length and masked on the
store.  The shrink's rank never leaves registers: the expand re-reads nothing but B.

LMDeploy's launch: grid (cdiv(max_seqlen, BLOCK_SIZE_M), requests), where
`_make_packed_lora_input` passes as max_seqlen the batch's whole token count (x.numel() /
hidden), not the longest request: a request's programs past its own length return at once
(recorded as the launch's `live_program_fraction`, the tl.dot operands' width as
`matmul_operand_bits`).  Its tiles come from a @triton.autotune over two configurations
keyed by (N, K), 32 x 128 x 128 and 16 x 256 x 128 (M x N x K), both 4 warps and 4 stages;
the first is the default here, as the other wrapped autotuned kernels take theirs (the
autotuner's pick is not known without the GPU).  Knobs: block_m, block_n, block_k, num_warps,
num_stages, None keeping LMDeploy's first configuration; BLOCK_SIZE_R is not a knob (it
must hold the largest rank).  The request table (starts, lengths, adapters as int64, as
LMDeploy's step context holds them) is built in `prepare`; the timed call is the copy of
the base output into the output buffer (the caller's base output, added into in place by
LMDeploy) and the kernel: two launches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "lmdeploy_fused_lora"
KERNEL = "_fused_lora_kernel"
# LMDeploy 0.18.0's get_autotune_config(): (BLOCK_SIZE_M, BLOCK_SIZE_N, BLOCK_SIZE_K,
# num_warps, num_stages); the first is the default
AUTOTUNE_CONFIGS = ((32, 128, 128, 4, 4), (16, 256, 128, 4, 4))


@dataclass(frozen=True)
class FusedLoraConfig:
    block_m: int | None = None  # None: LMDeploy's first autotune config, 32 tokens
    block_n: int | None = None  # None: 128 output columns per expand step
    block_k: int | None = None  # None: 128 hidden per shrink step
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 4


def request_table(
    token_lora: torch.Tensor, seqs: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, list[int]]:
    """The step context's q_start_loc, q_seqlens and local_adapter_ids (int64) for `seqs`
    requests of equal length (the last takes the rest), as the reference packs them, and
    the lengths."""
    tokens = token_lora.numel()
    per = tokens // seqs
    lens = [per] * (seqs - 1) + [tokens - per * (seqs - 1)]
    starts = [0]
    for ln in lens[:-1]:
        starts.append(starts[-1] + ln)
    device = token_lora.device
    return (
        torch.tensor(starts, dtype=torch.int64, device=device),
        torch.tensor(lens, dtype=torch.int64, device=device),
        token_lora[torch.tensor(starts, device=device)].to(torch.int64).contiguous(),
        lens,
    )


def prepare(
    cfg: FusedLoraConfig, x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor,
    base: torch.Tensor, scalings: torch.Tensor, token_lora: torch.Tensor, seqs: int,
    rank: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source(SOURCE)
    if x.dim() != 2 or lora_a.dim() != 2 or lora_b.dim() != 2:
        raise ValueError("x [tokens, hidden], lora_a [loras*rank, hidden], lora_b [loras*rank, n]")
    tokens, hidden = x.shape
    n = lora_b.shape[1]
    loras = scalings.numel()
    if lora_a.shape != (loras * rank, hidden) or lora_b.shape[0] != loras * rank:
        raise ValueError("the stacked A and B must hold `loras` adapters of `rank` rows")
    if base.shape != (tokens, n):
        raise ValueError("base must be [tokens, n]")
    d_m, d_n, d_k, d_w, d_s = AUTOTUNE_CONFIGS[0]
    bm = cfg.block_m or d_m
    bn = cfg.block_n or d_n
    bk = cfg.block_k or d_k
    warps = cfg.num_warps or d_w
    stages = cfg.num_stages or d_s
    block_r = max(16, rank)  # fused_lora's BLOCK_SIZE_R = max(16, max_rank)
    seq_start, seq_lens, adapter_ids, lens = request_table(token_lora, seqs)
    rank_start = torch.arange(loras, dtype=torch.int64, device=x.device) * rank
    ranks = torch.full((loras,), rank, dtype=torch.int64, device=x.device)
    max_seqlen = tokens  # TritonLoRAImpl: x.numel() // x.size(-1), the whole batch
    grid = (triton.cdiv(max_seqlen, bm), seqs)
    out = torch.empty_like(base)
    live = sum(triton.cdiv(ln, bm) for ln in lens) / (grid[0] * grid[1])

    def launch() -> torch.Tensor:
        out.copy_(base)
        handle = mod._fused_lora_kernel[grid](
            x, lora_a, lora_b, out, scalings, rank_start, ranks, seq_start, seq_lens,
            adapter_ids, n, hidden, stride_am=x.stride(0), stride_ak=x.stride(1),
            stride_lar=lora_a.stride(0), stride_lak=lora_a.stride(1),
            stride_lbr=lora_b.stride(0), stride_lbn=lora_b.stride(1),
            stride_cm=out.stride(0), stride_cn=out.stride(1), BLOCK_SIZE_R=block_r,
            BLOCK_SIZE_M=bm, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, CUM=True, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["copy", KERNEL], block_m=bm,
            block_n=bn, block_k=bk, block_r=block_r, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1], k_steps=triton.cdiv(hidden, bk),
            n_steps=triton.cdiv(n, bn),
            metrics={"live_program_fraction": live, "matmul_operand_bits": 8 * x.element_size()},
        )  # fmt: skip
        return out

    return launch
