"""vLLM's Gemma 3n activation-sparsity GELU-and-mul (the `_gelu_and_mul_sparse_kernel`
launch of `gelu_and_mul_sparse_triton`, which `GeluAndMulSparse` runs in the MLP of Gemma
3n's first ten layers, activation_sparsity 0.95): inputs, reference, torch baseline.

x is [rows, 2 * d] in the spec's dtype: the fused gate_up projection's output, the gate in
the first d columns and the up projection in the last d.  std_multiplier is a Python float,
the standard normal's 0.95 quantile (vLLM's `Normal(0, 1).icdf(0.95)`, 1.6449).  The output
is [rows, d]: gelu_tanh(relu(gate - (mean(gate) + std(gate) x multiplier))) x up."""

from __future__ import annotations

import torch
import torch.nn.functional as F

GEMMA3N_SPARSITY = 0.95


def std_multiplier(sparsity: float = GEMMA3N_SPARSITY) -> float:
    normal = torch.distributions.normal.Normal(0, 1)
    return float(normal.icdf(torch.tensor(sparsity, dtype=torch.float32)).item())


def make_inputs(
    rows: int,
    d: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, float]:
    """Normal gate and up values (a projection's output), drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, 2 * d, generator=gen, device=device).to(dtype)
    return x, std_multiplier()


def _gelu_sparse(x: torch.Tensor, multiplier: float) -> torch.Tensor:
    d = x.shape[-1] // 2
    gate, up = x[..., :d], x[..., d:]
    mean = gate.mean(dim=-1, keepdim=True)
    std = gate.std(dim=-1, keepdim=True, unbiased=False)
    cutoff = mean + std * multiplier
    return F.gelu(F.relu(gate - cutoff), approximate="tanh") * up


def reference(x: torch.Tensor, multiplier: float) -> torch.Tensor:
    """In fp32 (the kernel reduces and activates in fp32), cast to the input dtype."""
    return _gelu_sparse(x.float(), multiplier).to(x.dtype)


def torch_gelu_sparse(x: torch.Tensor, multiplier: float) -> torch.Tensor:
    """vLLM's native path: the same op by op in the input dtype (mean, std, relu, gelu
    tanh, mul: several launches and [rows, d] temporaries)."""
    return _gelu_sparse(x, multiplier)
