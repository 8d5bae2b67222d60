"""vLLM's split-vocabulary greedy argmax (vllm/v1/worker/gpu/sample/greedy_argmax.py,
v0.34.0: `_argmax_partial` then `_argmax_finish`), launched as vLLM's `greedy_argmax`
launches them, so that its launch choices are knobs.

The partial kernel's grid is (rows, splits): each program loads one BLOCK-column slice of
its row (masked past the vocabulary to -inf), upcasts to fp32, turns NaN into -inf, and
stores the slice's maximum and the column of its leftmost maximum into an fp32 and an int32
[rows, splits] scratch.  No loop: one tile a program.  The finish kernel, one program per
row, loads the row's `splits` partial maxima (padded to the next power of two), takes the
leftmost best split and stores its column as int64.

vLLM's launch: BLOCK 4096 (splits = cdiv(vocab, 4096)), 4 warps for the partial kernel and
1 for the finish, Triton's default stages (vLLM passes none; neither kernel loops).  Knobs:
the block (which sets the splits), both kernels' warps, None keeping vLLM's.  vLLM's
per-call output and scratch (torch.empty) are made in `prepare`.  vLLM sends fp16 logits,
vocabularies under 4096 and CPU tensors to torch's argmax; this launcher takes any float
dtype so that the interpreter can check fp16 too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
VLLM_BLOCK = 4096
VLLM_PARTIAL_WARPS = 4
VLLM_FINISH_WARPS = 1


@dataclass(frozen=True)
class GreedyArgmaxConfig:
    block: int | None = None  # None: vLLM's 4096 columns a partial program
    num_warps: int | None = None  # None: vLLM's 4 for the partial kernel
    finish_warps: int | None = None  # None: vLLM's 1 for the finish kernel


def prepare(cfg: GreedyArgmaxConfig, logits: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("vllm_greedy_argmax")
    if logits.ndim != 2 or logits.stride(1) != 1:
        raise ValueError("logits must be [rows, vocab] with unit column stride")
    rows, vocab = logits.shape
    block = cfg.block or VLLM_BLOCK
    warps = cfg.num_warps or VLLM_PARTIAL_WARPS
    finish_warps = cfg.finish_warps or VLLM_FINISH_WARPS
    splits = triton.cdiv(vocab, block)
    finish_block = triton.next_power_of_2(splits)
    device = logits.device
    out = torch.empty(rows, dtype=torch.int64, device=device)
    values = torch.empty((rows, splits), dtype=torch.float32, device=device)
    indices = torch.empty((rows, splits), dtype=torch.int32, device=device)
    stride = logits.stride(0)

    def launch() -> torch.Tensor:
        handle = mod._argmax_partial[(rows, splits)](
            logits, values, indices, vocab, stride, splits, block, num_warps=warps
        )
        mod._argmax_finish[(rows,)](
            values, indices, out, splits, finish_block, num_warps=finish_warps
        )
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["_argmax_partial", "_argmax_finish"],
            block=block, splits=splits, num_warps=warps, finish_warps=finish_warps,
            finish_block=finish_block, programs=rows * splits + rows,
        )  # fmt: skip
        return out

    return launch
