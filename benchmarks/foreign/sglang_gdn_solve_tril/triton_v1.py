"""SGLang's chunk-wise (I + A)^-1 with SGLang's own launches: the 16 x 16 diagonal blocks by
forward substitution (one 1-warp program per 16-token block and head, 4 stages), then the
64 x 64 merge (one 4-warp program per 64-token chunk and head, 3 stages), varlen block
indices, the fp32 scratch and the output made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.sglang_gdn_solve_tril.launcher import SolveTrilConfig
from foreign.sglang_gdn_solve_tril.launcher import prepare as _prepare

CONFIG = SolveTrilConfig(diag_warps=None, diag_stages=None, merge_warps=None)


def prepare(
    a: torch.Tensor, cu_seqlens: torch.Tensor, out_dtype: torch.dtype
) -> Callable[[], torch.Tensor]:
    """The block and chunk index pairs, the scratch and the output, outside the timed call."""
    return _prepare(CONFIG, a, cu_seqlens, out_dtype)


def solve_tril(a: torch.Tensor, cu_seqlens: torch.Tensor, out_dtype: torch.dtype) -> torch.Tensor:
    return prepare(a, cu_seqlens, out_dtype)()
