"""FlagGems' quantile of short rows (src/flag_gems/ops/quantile.py, v5.0.2:
`quantile_bitonic_kernel`, with `argsort` and `_get_finfo_val` from topk.py), launched as
FlagGems' `quantile` launches it so that its launch choices are knobs.

FlagGems takes this kernel when the rows (the reduced dimension, moved last) hold at most
1024 values: one program per row loads it padded to BLOCK_M = next_pow2(n) with the dtype's
largest finite value, sorts it in registers as fp32 with topk.py's bitonic argsort, then
for each of BLOCK_Q quantiles scales q by n - 1, picks the order statistics at its floor and
ceiling by masked sums over the sorted row, interpolates (linear here, a constexpr) and
stores them in the input dtype.

FlagGems' launch: BLOCK_M = next_pow2(n), BLOCK_Q = next_pow2(min(Q, 16)), Triton's default
warps (4) and stages, no autotuning; FlagGems casts q to the input's dtype and allocates the
output per call.  The only tuning parameter is the warps, a knob (None keeping Triton's
default).  Here the output is made in `prepare`, and topk.py's helpers (fetched as
flaggems_topk, from the same release) are set on the fetched quantile module, which
imports them relatively in FlagGems.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
MAX_BITONIC_M = 1024  # FlagGems' bound for this path
MAX_Q = 16  # BLOCK_Q = next_pow2(min(Q, 16)): more quantiles would be dropped
INTERPOLATION = "linear"  # torch.quantile's default


@dataclass(frozen=True)
class QuantileConfig:
    num_warps: int | None = None  # None: Triton's default 4 (FlagGems passes none)


def load_kernel() -> Any:
    """The fetched quantile module with topk.py's argsort and _get_finfo_val set on it."""
    mod = _common.load_source("flaggems_quantile")
    topk = _common.load_source("flaggems_topk")
    mod.argsort = topk.argsort
    mod._get_finfo_val = topk._get_finfo_val
    return mod


def prepare(cfg: QuantileConfig, groups: torch.Tensor, q: torch.Tensor) -> Callable[[], Any]:
    mod = load_kernel()
    if groups.dim() != 2 or not groups.is_contiguous():
        raise ValueError("groups must be a contiguous [rows, group] tensor")
    rows, m = groups.shape
    n_q = q.numel()
    if m > MAX_BITONIC_M:
        raise ValueError(f"rows of {m} take FlagGems' sort-then-gather path (over 1024)")
    if n_q > MAX_Q or q.dtype != groups.dtype:
        raise ValueError("at most 16 quantiles, in the input's dtype (FlagGems casts q)")
    block_m = triton.next_power_of_2(m)
    block_q = triton.next_power_of_2(min(n_q, MAX_Q))
    warps = cfg.num_warps or 4
    out = torch.empty(rows, n_q, dtype=groups.dtype, device=groups.device)

    def launch() -> torch.Tensor:
        handle = mod.quantile_bitonic_kernel[(rows,)](
            groups, q, out, rows, m, n_q, BLOCK_Q=block_q, BLOCK_M=block_m,
            interpolation=INTERPOLATION, num_warps=warps,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=["quantile_bitonic_kernel"],
            block_m=block_m, block_q=block_q, num_warps=warps, programs=rows,
        )  # fmt: skip
        return out

    return launch
