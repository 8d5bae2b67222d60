"""Liger-Kernel's sparsemax forward (liger_kernel.ops.sparsemax, 0.8.5), launched by our copy
of Liger's `_sparsemax_forward` so that its launch choice is a knob.

Liger's forward is two steps, both timed here: torch sorts an fp32 copy of the rows in
descending order (`torch.sort(x.float(), descending=True)`: a cast and torch's sort
kernels, whose number depends on the row length and torch's sort path), then one Triton
program per row holds the whole sorted row and the row itself (BLOCK_SIZE =
next_pow2(cols), masked), takes the cumulative sum of the sorted row, counts the support,
derives tau and writes max(x - tau, 0).  Liger's num_warps comes from `calculate_settings`
(4, 8 from 2048 columns, 16 from 8192, 32 from 32768); it is the knob (None: Liger's); the
block must hold the row, so it is not a knob.  The output is allocated in `prepare`.

Because the count of torch's sort launches is not known here, the spec declares no
launch_info: kbopt then treats the call as one that launches kernels it cannot count, as
it does a plain-torch baseline.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from kbopt.bench.interpreter import fix_scalar_index_if_interpreting


@dataclass(frozen=True)
class LigerSparsemaxConfig:
    num_warps: int | None = None  # None: liger's calculate_settings


def prepare(cfg: LigerSparsemaxConfig, x: torch.Tensor) -> Callable[[], torch.Tensor]:
    fix_scalar_index_if_interpreting()
    from liger_kernel.ops import sparsemax as liger
    from liger_kernel.ops.utils import calculate_settings

    if not x.is_contiguous():
        raise ValueError("x must be contiguous (Liger's wrapper makes a contiguous copy)")
    shape = x.shape
    x2 = x.view(-1, shape[-1])
    n_rows, n_cols = x2.shape
    block, warps = calculate_settings(n_cols)
    warps = cfg.num_warps or warps
    out = torch.empty_like(x2)

    def launch() -> torch.Tensor:
        x_sorted = torch.sort(x2.float(), dim=-1, descending=True).values
        liger._sparsemax_forward_kernel[(n_rows,)](
            x2, x2.stride(0), x_sorted, x_sorted.stride(0), out, out.stride(0), n_cols,
            BLOCK_SIZE=block, num_warps=warps,
        )  # fmt: skip
        return out.view(*shape)

    return launch
