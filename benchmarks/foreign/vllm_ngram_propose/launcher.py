"""vLLM's GPU n-gram speculator (vllm/v1/worker/gpu/spec_decode/ngram/speculator.py,
v0.34.0: `_ngram_scan_kernel` then `_ngram_finalize_kernel`), launched as
`NgramGPUSpeculator.propose` launches them, so that their launch choices are knobs.

The scan's grid is (requests, blocks of BLOCK_L history positions over max_model_len).  A
program of an eligible request (it sampled this step, and its history holds at least min_n
tokens) whose block starts before the last candidate position loads the history's last
max_n tokens once, then for each n from min_n to max_n compares the n tokens starting at
each of its BLOCK_L positions with the last n (n loads per position, unrolled), packs the
longest match and its rightmost position into one int64 score, n * (L + 1) + pos + 1, and
stores the block's maximum into the scratch row; every other program stores 0 and exits
(most of them when max_model_len is far above the histories).  The finalize, one program
per request, takes the maximum over the request's scratch row (a tile of the next power of
two of the block count), decodes it and gathers the spec_tokens tokens after the match,
falling back to the last sampled token.

vLLM's launch: BLOCK_L from max_model_len (256 from 1024 on, 128 from 256, 64 from 64), the
scan with 4 warps and 2 stages, the finalize with 2 warps and 1 stage; no autotune.  Knobs:
the block and both launches' warps, None keeping vLLM's.  The scan's n and j loops are
`tl.static_range` (unrolled) and the finalize has none, so the stages are no knob (vLLM's
2 and 1 are passed).  The scratch [requests, blocks] and the drafts [requests, spec_tokens],
allocated once by the speculator, are made in `prepare`; the timed call is both launches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_SCAN_WARPS, VLLM_SCAN_STAGES = 4, 2
VLLM_FINALIZE_WARPS, VLLM_FINALIZE_STAGES = 2, 1


def vllm_block_l(max_model_len: int) -> int:
    """NgramGPUSpeculator.__init__'s block from max_model_len."""
    if max_model_len >= 1024:
        return 256
    if max_model_len >= 256:
        return 128
    if max_model_len >= 64:
        return 64
    return max(16, triton.next_power_of_2(max(max_model_len, 1)))


@dataclass(frozen=True)
class NgramConfig:
    block_l: int | None = None  # None: vLLM's rule from max_model_len (256 from 1024 on)
    scan_warps: int | None = None  # None: vLLM's 4
    finalize_warps: int | None = None  # None: vLLM's 2


def prepare(
    cfg: NgramConfig, token_ids: torch.Tensor, total_len: torch.Tensor,
    idx_mapping: torch.Tensor, num_sampled: torch.Tensor, last_sampled: torch.Tensor,
    min_n: int, max_n: int, spec_tokens: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_ngram_propose")
    if token_ids.dtype != torch.int32 or token_ids.stride(1) != 1:
        raise ValueError("token_ids must be int32 with unit column stride")
    max_model_len = token_ids.shape[1]
    block_l = cfg.block_l or vllm_block_l(max_model_len)
    if block_l & (block_l - 1):
        raise ValueError(f"block_l {block_l} must be a power of two")
    scan_warps = cfg.scan_warps or VLLM_SCAN_WARPS
    finalize_warps = cfg.finalize_warps or VLLM_FINALIZE_WARPS
    reqs = idx_mapping.numel()
    n_blocks = triton.cdiv(max_model_len, block_l)
    dev = token_ids.device
    scratch = torch.zeros(reqs, n_blocks, dtype=torch.int64, device=dev)
    drafts = torch.zeros(reqs, spec_tokens, dtype=torch.int64, device=dev)
    last = last_sampled.view(-1)
    max_n_po2 = max(1, triton.next_power_of_2(max_n))
    k_po2 = max(1, triton.next_power_of_2(spec_tokens))
    nb_po2 = max(1, triton.next_power_of_2(n_blocks))

    def launch() -> torch.Tensor:
        handle = mod._ngram_scan_kernel[(reqs, n_blocks)](
            token_ids, token_ids.stride(0), idx_mapping, total_len, num_sampled, scratch,
            scratch.stride(0), max_model_len, min_n, max_n, max_n_po2, block_l,
            num_warps=scan_warps, num_stages=VLLM_SCAN_STAGES,
        )  # fmt: skip
        mod._ngram_finalize_kernel[(reqs,)](
            token_ids, token_ids.stride(0), idx_mapping, total_len, num_sampled, last,
            scratch, scratch.stride(0), drafts, max_model_len, n_blocks, spec_tokens, k_po2,
            nb_po2, num_warps=finalize_warps, num_stages=VLLM_FINALIZE_STAGES,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2,
            kernel_names=["_ngram_scan_kernel", "_ngram_finalize_kernel"], block_l=block_l,
            scan_warps=scan_warps, scan_stages=VLLM_SCAN_STAGES,
            finalize_warps=finalize_warps, finalize_stages=VLLM_FINALIZE_STAGES,
            programs=reqs * n_blocks + reqs,
        )  # fmt: skip
        return drafts

    return launch
