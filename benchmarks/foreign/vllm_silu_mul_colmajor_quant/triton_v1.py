"""vLLM's fused SiLU-and-mul with fp8 group quantization into column-major scales with
vLLM's own launch (`silu_mul_per_token_group_quant_fp8_colmajor` on Hopper's DeepGEMM MoE
path): 8-row x 128-column tiles, the expert grid under a budget of 8192 programs, Triton's
default 4 warps and 3 stages (vLLM passes neither), UE8M0 scales (no heuristic, autotuner
or tuned table)."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_silu_mul_colmajor_quant.launcher import SiluMulColmajorQuantConfig
from foreign.vllm_silu_mul_colmajor_quant.launcher import prepare as _prepare

CONFIG = SiluMulColmajorQuantConfig(block_m=None, max_ctas=None, num_warps=None, num_stages=None)


def prepare(
    x: torch.Tensor, ends: torch.Tensor, group: int, align: int
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    """The fp8 rows and the column-major scales (zero-filled once), outside the timed
    call."""
    return _prepare(CONFIG, x, ends, group, align)


def silu_mul_per_token_group_quant_fp8_colmajor(
    x: torch.Tensor, ends: torch.Tensor, group: int, align: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return prepare(x, ends, group, align)()
