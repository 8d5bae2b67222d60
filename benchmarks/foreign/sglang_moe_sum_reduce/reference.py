"""The MoE layer's top-k combine (SGLang's `moe_sum_reduce_triton`, as its Triton MoE runner
calls it after the down projection): inputs, fp32 reference, torch baseline.

x is [tokens, topk, hidden] in the spec's dtype: each token's down-projection outputs from
its top-k experts, already weighted by the router (the second GEMM multiplies them in).
The output is [tokens, hidden] in the same dtype: the sum over the top-k times the model's
routed scaling factor, accumulated in fp32."""

from __future__ import annotations

import torch

# DeepSeek-V3's routed_scaling_factor (Qwen3's MoE uses 1.0 and takes the same kernel
# whenever topk > 2 and there are more than 32 tokens): a constexpr multiply, no traffic.
ROUTED_SCALING = 2.5


def make_inputs(
    tokens: int, topk: int, hidden: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, float]:  # fmt: skip
    """Router-weighted expert outputs (unit-scale activations times weights that sum to 1
    over the top-k), and the routed scaling factor."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    weights = torch.softmax(torch.randn(tokens, topk, 1, generator=gen), dim=1)
    x = torch.randn(tokens, topk, hidden, generator=gen) * weights
    return x.to(dtype=dtype, device=device), ROUTED_SCALING


def reference(x: torch.Tensor, routed_scaling_factor: float) -> torch.Tensor:
    return x.float().sum(dim=1) * routed_scaling_factor


def torch_moe_sum(x: torch.Tensor, routed_scaling_factor: float) -> torch.Tensor:
    """The same combine as SGLang's eager fallback: torch.sum over the top-k in the input
    dtype, then the scale."""
    return torch.sum(x, dim=1) * routed_scaling_factor
