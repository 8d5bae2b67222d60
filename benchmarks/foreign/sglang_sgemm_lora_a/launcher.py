"""SGLang's segmented LoRA A GEMM (python/sglang/srt/lora/triton_ops/sgemm_lora_a.py,
v0.5.9: `_sgemm_lora_a_kernel`), launched as SGLang's `sgemm_lora_a_fwd` launches it so that
its launch choices are knobs.

The first half of every LoRA-wrapped linear layer under SGLang's `--lora-backend triton`
(`TritonLoRABackend.run_lora_a_sgemm`, for a fused QKV with 3 stacked A's, a gate-up with
2, an o or down projection with 1): the layer's input [tokens, hidden] times its request's
adapter's stacked A (hidden -> stack x rank), into a narrow [tokens, stack x rank] buffer
that the B kernels then read.  Unlike the csgmv backend's chunked shrink
(`sglang_lora_shrink`), nothing is sorted or gathered: each request's tokens are one
contiguous segment of x (`seg_indptr`, `seg_lens`), its adapter is `weight_indices[req]`,
and the grid is (cdiv(max_len, BLOCK_S) x cdiv(R, BLOCK_R), requests): the first axis sized
by the longest request, so a shorter request's programs past its length load and store
nothing but still walk the whole hidden size (every load masked), and each program computes
one BLOCK_S x BLOCK_R output tile over the hidden size in BLOCK_K-deep fp32 tl.dot steps (no
split-K), reading its rows of x once per column block.  An adapter of rank 0 returns at
once; columns past the adapter's rank x stack are masked.  The share of programs with a
live row and column is recorded as the launch's `live_program_fraction` (all of them when
the requests are of equal length and every adapter at the full rank, as in the trials).

SGLang's choices: BLOCK_S 16, BLOCK_R 16, BLOCK_K 256, Triton's default 4 warps and 3
stages (it passes none).  Under a CUDA graph (a decode batch) every request is one token,
max_len is 1 and the grid's second axis the graph's batch size.  Knobs: BLOCK_S, BLOCK_R,
BLOCK_K, `num_warps`, `num_stages`, None keeping SGLang's.  The segments (built by SGLang
on the host and copied per batch in `prepare_lora_batch`) and the output buffer are made in
`prepare`, outside the timed call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK_S = 16
SGLANG_BLOCK_R = 16
SGLANG_BLOCK_K = 256
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3


@dataclass(frozen=True)
class SgemmLoraAConfig:
    block_s: int | None = None  # None: SGLang's 16 (token rows per program)
    block_r: int | None = None  # None: SGLang's 16 (output columns per program)
    block_k: int | None = None  # None: SGLang's 256 (hidden per tl.dot step)
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3


def request_segments(
    token_lora: torch.Tensor, seqs: int
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """What the triton backend's `prepare_lora_batch` gives the kernel for `seqs` requests
    of equal length (the last takes the rest, as the reference lays them out): each
    request's token count, the CSR start of each, its adapter (int32 all) and the longest
    request's length."""
    tokens = token_lora.numel()
    per = max(1, tokens // seqs)
    lens = [per] * (seqs - 1) + [tokens - per * (seqs - 1)]
    indptr = torch.zeros(seqs + 1, dtype=torch.int32)
    indptr[1:] = torch.tensor(lens).cumsum(0)
    device = token_lora.device
    first = indptr[:-1].long().to(device)
    return (
        torch.tensor(lens, dtype=torch.int32, device=device),
        indptr.to(device),
        token_lora[first].to(torch.int32).contiguous(),
        max(lens),
    )


def prepare(
    cfg: SgemmLoraAConfig, x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, seqs: int, slices: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("sglang_sgemm_lora_a")
    if x.dim() != 2 or weights.dim() != 3 or not (x.is_contiguous() and weights.is_contiguous()):
        raise ValueError(
            "x must be contiguous [tokens, hidden], weights [loras, slices*rank, hidden]"
        )
    tokens, hidden = x.shape
    r = weights.shape[1]
    if weights.shape[2] != hidden or r % slices:
        raise ValueError("weights must be [loras, slices * rank, hidden]")
    bs_ = cfg.block_s or SGLANG_BLOCK_S
    br = cfg.block_r or SGLANG_BLOCK_R
    bk = cfg.block_k or SGLANG_BLOCK_K
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    seg_lens, seg_indptr, weight_indices, max_len = request_segments(token_lora, seqs)
    grid = (triton.cdiv(max_len, bs_) * triton.cdiv(r, br), seqs)
    out = torch.empty(tokens, r, device=x.device, dtype=x.dtype)
    # programs with a live row and column: a row tile past its request's length, or a
    # column tile past its adapter's rank x slices, walks the hidden size with every load
    # masked (only a rank-0 adapter's programs return at once)
    ranks = lora_ranks.tolist()
    live = sum(
        triton.cdiv(n, bs_) * triton.cdiv(min(r, ranks[a] * slices), br)
        for n, a in zip(seg_lens.tolist(), weight_indices.tolist(), strict=True)
    )

    def launch() -> torch.Tensor:
        handle = mod._sgemm_lora_a_kernel[grid](
            x, weights, out, r, hidden, slices, x.stride(0), x.stride(1), weights.stride(0),
            weights.stride(1), weights.stride(2), out.stride(0), out.stride(1), seg_lens,
            seg_indptr, weight_indices, lora_ranks, bs_, br, bk, num_warps=warps,
            num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_sgemm_lora_a_kernel"],
            block_s=bs_, block_r=br, block_k=bk, num_warps=warps, num_stages=stages,
            segments=seqs, max_len=max_len, programs=grid[0] * grid[1],
            k_steps=triton.cdiv(hidden, bk),
            metrics={"live_program_fraction": live / (grid[0] * grid[1])},
        )  # fmt: skip
        return out

    return launch
