"""FlagGems' embedding backward (src/flag_gems/ops/embedding_dense_backward.py, v5.0.2:
`_embedding_dense_backward_kernel`), launched as FlagGems' `embedding_dense_backward`
launches it so that its launch choices are knobs.

One program per token and BLOCK_D columns of the hidden size: it loads its token id and
BLOCK_D values of the token's gradient row, converts them to fp32 and adds them with
`tl.atomic_add` into the token's row of an fp32 gradient table (ids equal to the padding
index, or out of range, are skipped).  Tokens that repeat add into the same row, so
frequent tokens' rows see many atomic adds.

FlagGems' call: it zero-fills a [vocab, hidden] fp32 table, launches the kernel with
BLOCK_D = 128 and Triton's default 4 warps (no autotuning), and casts the table to the
gradient's dtype.  The table is allocated in `prepare`; its zeroing, the kernel and the
cast are the timed call (three launches; two in fp32, where FlagGems returns the table).
nn.Embedding's defaults are used: no padding index (FlagGems passes -1), no frequency
scaling (its other two kernels).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
FLAGGEMS_BLOCK_D = 128  # fixed in FlagGems' embedding_dense_backward
TRITON_DEFAULT_WARPS = 4  # FlagGems passes no num_warps
NO_PADDING = -1  # what FlagGems passes for padding_idx=None


@dataclass(frozen=True)
class EmbeddingBackwardConfig:
    block_d: int | None = None  # None: FlagGems' 128 hidden columns per program
    num_warps: int | None = None  # None: Triton's default 4


def prepare(
    cfg: EmbeddingBackwardConfig, grad_output: torch.Tensor, indices: torch.Tensor, vocab: int
) -> Callable[[], Any]:
    mod = _common.load_source("flaggems_embedding_backward")
    if grad_output.dim() != 2 or not grad_output.is_contiguous():
        raise ValueError("grad_output must be a contiguous [tokens, hidden] tensor")
    tokens, hidden = grad_output.shape
    block_d = cfg.block_d or FLAGGEMS_BLOCK_D
    warps = cfg.num_warps or TRITON_DEFAULT_WARPS
    table = torch.empty(vocab, hidden, device=grad_output.device, dtype=torch.float32)
    grid = (tokens, triton.cdiv(hidden, block_d))
    cast = grad_output.dtype != torch.float32

    def launch() -> torch.Tensor:
        table.zero_()
        handle = mod._embedding_dense_backward_kernel[grid](
            grad_output, indices, table, vocab, NO_PADDING, BLOCK_D=block_d, EMBED_DIM=hidden,
            num_warps=warps,
        )  # fmt: skip
        out = table.to(grad_output.dtype) if cast else table
        _common.record(
            LAST_INFO, handle, kernels=3 if cast else 2,
            kernel_names=["zero_", "_embedding_dense_backward_kernel"] + (["to"] if cast else []),
            block_d=block_d, num_warps=warps, programs=grid[0] * grid[1],
        )  # fmt: skip
        return out

    return launch
