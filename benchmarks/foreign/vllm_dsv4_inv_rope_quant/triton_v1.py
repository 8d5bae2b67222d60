"""DeepSeek-V4's fused inverse RoPE and block fp8 quantization with vLLM's own launch
(`fused_inv_rope_fp8_quant` before the grouped `wo_a` fp8 einsum on Hopper): gcd(heads per
group, 4) heads a program (4 for DeepSeek-V4), 4 warps below 2048 programs and 1 from there,
1 stage, fp32 MN-major scales over the tokens rounded up to 4, launch_pdl on Hopper and
later as vLLM sets it (a size rule in the launcher; no autotuner or table); both output
buffers made outside the timed call."""

from __future__ import annotations

from collections.abc import Callable

import torch

from foreign.vllm_dsv4_inv_rope_quant.launcher import InvRopeQuantConfig
from foreign.vllm_dsv4_inv_rope_quant.launcher import prepare as _prepare

CONFIG = InvRopeQuantConfig(block_h=None, num_warps=None)


def prepare(
    o: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, groups: int,
    group_size: int,
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:  # fmt: skip
    """The group-major values and the MN-major scale buffer, outside the timed call."""
    return _prepare(CONFIG, o, positions, cos_sin_cache, groups, group_size)


def fused_inv_rope_fp8_quant(
    o: torch.Tensor, positions: torch.Tensor, cos_sin_cache: torch.Tensor, groups: int,
    group_size: int,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return prepare(o, positions, cos_sin_cache, groups, group_size)()
