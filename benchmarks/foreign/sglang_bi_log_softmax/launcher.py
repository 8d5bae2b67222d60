"""SGLang's batch-invariant log-softmax (python/sglang/srt/batch_invariant_ops/
batch_invariant_ops.py, v0.5.9: `_log_softmax_kernel`), launched as SGLang's `log_softmax`
launches it, so that its launch choices are knobs.

With `--enable-deterministic-inference` SGLang replaces aten::_log_softmax by this kernel
(its RL on-policy sampler takes a log-softmax of the bf16 temperature-divided logits on
every decode step).  The input is viewed as contiguous [rows, vocab]; one program per row
walks the row three times in BLOCK_SIZE-lane masked blocks: the running maximum (in the
input dtype), then the sum of exp(x - max) (accumulated in the input dtype: tl.sum does not
widen 16-bit floats), then x - max - log(sum), stored in the input dtype.  Each row is read
three times and written once; the grid is only as large as the batch.

SGLang's launch: BLOCK_SIZE 1024 ("based on the number of columns", but fixed), Triton's
default 4 warps and 3 stages (SGLang passes none), grid (rows,); no autotune.  Knobs: the
block, warps and stages, None keeping SGLang's.  Blocks of more than 256 values per thread
are refused (see MAX_PER_THREAD).  The output (allocated by SGLang's wrapper on every call)
is made in `prepare`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SGLANG_BLOCK = 1024
TRITON_DEFAULT_WARPS = 4
TRITON_DEFAULT_STAGES = 3
# As in sglang_dit_scale_shift: blocks of more than 256 values per thread spill or take
# minutes to compile, and SGLang's launch (8 per thread) comes nowhere near them.
MAX_PER_THREAD = 256


@dataclass(frozen=True)
class LogSoftmaxConfig:
    block_size: int | None = None  # None: SGLang's 1024
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3 (SGLang passes none)


def prepare(cfg: LogSoftmaxConfig, logits: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_bi_log_softmax")
    kernel = mod._log_softmax_kernel
    block = cfg.block_size or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    if block > MAX_PER_THREAD * 32 * warps:
        raise ValueError(
            f"a {block}-lane block over {warps} warps holds more than {MAX_PER_THREAD} "
            "values per thread"
        )
    # SGLang's wrapper: the input flattened to [rows, vocab] and made contiguous (a no-op
    # here), the output a fresh tensor of the same shape and dtype.
    x = logits.reshape(-1, logits.shape[-1]).contiguous()
    rows, vocab = x.shape
    out = torch.empty_like(x)
    grid = (rows,)

    def launch() -> torch.Tensor:
        handle = kernel[grid](
            x, out, x.stride(0), out.stride(0), vocab,
            BLOCK_SIZE=block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["_log_softmax_kernel"],
            block_size=block, num_warps=warps, num_stages=stages, programs=rows,
        )  # fmt: skip
        return out.view(logits.shape)

    return launch
