"""vLLM's structured-output grammar bitmask (vllm/v1/worker/gpu/structured_outputs.py,
v0.34.0: `_apply_grammar_bitmask_kernel`, adapted from xgrammar's in-place Triton kernel),
launched as vLLM's `StructuredOutputsWorker.apply_grammar_bitmask` launches it, so that its
launch choices are knobs.

The grid is (mask rows, vocabulary blocks).  Each program loads its mask row's mapping,
finds the request's first logits row and row count in `cu_num_logits` (a position past the
count, a trimmed draft, stores nothing), loads BLOCK_SIZE / 32 packed int32 words, unpacks
them into BLOCK_SIZE bits with a [words, 32] shift and a reshape, and stores -inf into the
logits of the block's disallowed tokens with one masked store.

vLLM's launch: 8192-token blocks (GRAMMAR_BITMASK_BLOCK_SIZE, overridden only on the CPU
backend) with Triton's default 4 warps; MASK_STRIDE is the worker's decode query length
(1 + the speculative tokens).  Knobs: the block and the warps, None keeping vLLM's.  The
host-to-device copies of the bitmask and the mapping (on vLLM's side stream) are made with
the inputs; the timed call is the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 8192  # GRAMMAR_BITMASK_BLOCK_SIZE
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class BitmaskConfig:
    block_size: int | None = None  # None: vLLM's 8192 tokens per program
    num_warps: int | None = None  # None: Triton's default 4 (vLLM passes none)


def prepare(
    cfg: BitmaskConfig, logits: torch.Tensor, logits_indices: torch.Tensor,
    cu_num_logits: torch.Tensor, bitmask: torch.Tensor, positions: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = _common.load_source("vllm_grammar_bitmask")
    if logits.stride(1) != 1 or bitmask.stride(1) != 1:
        raise ValueError("logits and bitmask need unit column strides")
    block = cfg.block_size or VLLM_BLOCK
    if block % 32:
        raise ValueError(f"block_size {block} must be a multiple of 32 (one word of bits)")
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    vocab = logits.shape[-1]
    masks = bitmask.shape[0]
    grid = (masks, triton.cdiv(vocab, block))

    def launch() -> torch.Tensor:
        handle = mod._apply_grammar_bitmask_kernel[grid](
            logits, logits.stride(0), logits_indices, cu_num_logits, bitmask,
            bitmask.stride(0), vocab, MASK_STRIDE=positions, BLOCK_SIZE=block,
            num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_apply_grammar_bitmask_kernel"],
            block_size=block, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return logits

    return launch
