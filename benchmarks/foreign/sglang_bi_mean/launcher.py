"""SGLang's batch-invariant mean over one dimension (python/sglang/srt/batch_invariant_ops/
batch_invariant_ops.py, v0.5.9: `mean_kernel`), launched as SGLang's `mean_dim` launches it,
so that its launch choices are knobs.

With `--enable-deterministic-inference` SGLang replaces aten::mean.dim by this kernel.  The
input is viewed as [outer, reduced, inner]; one program per output element (outer x inner
programs) walks its `reduced` elements, `inner` elements apart, BLOCK_SIZE at a time
(masked past the end), sums each block with tl.sum into a scalar and stores the sum over
`reduced` in the input dtype.  When the reduced dimension is short (Gemma 3n's four
streams) nearly every lane of the block is masked; when it is not the last dimension, the
lanes of one program are `inner` elements apart and neighbouring programs read neighbouring
elements.

SGLang's launch: BLOCK_SIZE 1024, Triton's default 4 warps and 3 stages (SGLang passes
none).  Knobs: the block, warps and stages, None keeping SGLang's.  The output (allocated by
SGLang's wrapper on every call) is made in `prepare`.
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


@dataclass(frozen=True)
class MeanConfig:
    block_size: int | None = None  # None: SGLang's 1024
    num_warps: int | None = None  # None: Triton's default 4 (SGLang passes none)
    num_stages: int | None = None  # None: Triton's default 3 (SGLang passes none)


def prepare(cfg: MeanConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    mod = _common.load_source("sglang_bi_mean")
    m, n, k = x.shape
    block = cfg.block_size or SGLANG_BLOCK
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    stages = cfg.num_stages or TRITON_DEFAULT_STAGES
    out = torch.empty((m, k), dtype=x.dtype, device=x.device)
    grid = (m * k,)

    def launch() -> torch.Tensor:
        handle = mod.mean_kernel[grid](
            x, out, x.stride(0), x.stride(1), x.stride(2), out.stride(0), out.stride(1),
            m, n, k, block, num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["mean_kernel"], block_size=block,
            num_warps=warps, num_stages=stages, programs=grid[0],
        )  # fmt: skip
        return out

    return launch
