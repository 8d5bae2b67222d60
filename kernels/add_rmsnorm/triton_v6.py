"""triton_v6 — cache-eviction hints: streamed tensors evict first, the weight stays.

One change from triton_v5: x and residual are loaded, and residual_out and y stored, with
``eviction_policy="evict_first"`` (each of their bytes is touched once and should not push
anything else out of the L2), while the weight row, read by every program, is loaded with
``evict_last`` so that it stays in the L2.  In the PTX for sm_90 (compile_check), the
stores become ``st.global.L1::evict_first.L2::cache_hint.v4`` and the weight load
``ld.global.L1::evict_last``; the pipelined x and residual loads stay ``cp.async.cg`` (which
bypasses L1 and carries no hint), so on this version the hint acts on the stores.  No
catalog entry covers streaming eviction hints: "evict-first hints on the streamed tensors
of a memory-bound kernel" is a candidate.
"""

from __future__ import annotations

import torch

from kernels.add_rmsnorm import triton_common as tc
from kernels.add_rmsnorm.triton_common import AddRmsNormConfig

DESCRIPTION = "evict_first on streamed loads and stores, evict_last on the weight"

CONFIG = AddRmsNormConfig(
    num_warps=None,
    vectors_per_thread=4,
    persistent=True,
    programs_per_sm=None,
    num_stages=3,
    evict=True,
)


def add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    return tc.launch(x, residual, weight, eps, CONFIG)
