"""triton_v3 — triton_v2 with num_stages None (launched as 3) -> 4 (pipeline_stages +1) (catalog move of keep-enough-bytes-in-flight).

A copy of triton_v2 with only knob values changed (the catalog designer); triton_v2's notes follow.

triton_v2 — triton_v1 with num_warps None (launched as 8) -> 16 (warps x2) (catalog move of triton-register-budget-num-warps-maxnreg).

A copy of triton_v1 with only knob values changed (the catalog designer); triton_v1's notes follow.

Liger-Kernel's mHC stream update (h_post * f + h_res @ x, fp32 out, then torch's cast)
with Liger's own launch, picked from the width: at 4096 columns and above, 32 tokens x 128
columns per program, 8 warps, 3 stages.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.liger_mhc_post_res.launcher import LigerMhcPostResConfig
from foreign.liger_mhc_post_res.launcher import prepare as _prepare

CONFIG = LigerMhcPostResConfig(block_n=None, block_c=None, num_warps=16, num_stages=4)


def prepare(
    x: torch.Tensor, f_out: torch.Tensor, h_post: torch.Tensor, h_res: torch.Tensor
) -> Callable[[], torch.Tensor]:
    """The fp32 output buffer, outside the timed call."""
    return _prepare(CONFIG, x, f_out, h_post, h_res)


def mhc_post_res(
    x: torch.Tensor, f_out: torch.Tensor, h_post: torch.Tensor, h_res: torch.Tensor
) -> torch.Tensor:
    return prepare(x, f_out, h_post, h_res)()
