"""SGLang's final-logit soft-capping (python/sglang/srt/layers/logits_processor.py, v0.5.9:
`fused_softcap_kernel`), launched as SGLang's `fused_softcap` launches it from the logits
processor (in place on the LM head's logits) so that its launch choices are knobs.

Each program takes BLOCK_SIZE consecutive logits of the flattened [rows, vocab] tensor,
divides them by the cap (an fp32 argument, so the arithmetic is fp32), computes tanh as
(e^2x - 1) / (e^2x + 1) with one exp, multiplies by the cap and stores them back in the
logits' dtype.

SGLang's launch: 1024 elements per program with Triton's default 4 warps (no loop, so the
stages do not matter).  Knobs: the block and the warps, None keeping SGLang's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 1024  # fused_softcap's BLOCK_SIZE
TRITON_DEFAULT_WARPS = 4


@dataclass(frozen=True)
class SoftcapConfig:
    block_size: int | None = None  # None: SGLang's 1024
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)


def prepare(cfg: SoftcapConfig, logits: torch.Tensor, cap: float) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_logit_softcap")
    if not logits.is_contiguous():
        raise ValueError("logits must be contiguous (the kernel walks the flat tensor)")
    n = logits.numel()
    block = cfg.block_size or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    grid = (triton.cdiv(n, block), 1, 1)  # SGLang's 3-D grid
    cap = float(cap)

    def launch() -> torch.Tensor:
        # compiled Triton passes the cap as an fp32 scalar; so does the interpreter here
        with _common.interpreter_float_scalars():
            handle = mod.fused_softcap_kernel[grid](
                full_logits_ptr=logits, softcapping_value=cap, n_elements=n,
                BLOCK_SIZE=block, num_warps=warps,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["fused_softcap_kernel"],
            block_size=block, num_warps=warps, programs=grid[0],
        )  # fmt: skip
        return logits

    return launch
