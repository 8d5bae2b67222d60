"""vLLM's fused sigmoid gate (`fused_sigmoid_gate_mul` without an fp8 scale, as the gated
full-attention layer calls it): inputs, reference, torch baseline.

attn is the attention output [tokens, heads * head_dim] and gate the pre-sigmoid gate of
the same shape, both contiguous in the spec's dtype (vLLM's Qwen3NextAttention splits the
gate from the query projection per head and reshapes it, a contiguous copy).  The output is
attn * sigmoid(gate), a new tensor in the same dtype, which o_proj then reads."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A normal attention output and a normal gate with a standard deviation of 3 (gates
    from nearly shut to nearly open)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    attn = torch.randn(tokens, hidden, generator=gen)
    gate = torch.randn(tokens, hidden, generator=gen) * 3.0
    return attn.to(dtype=dtype, device=device), gate.to(dtype=dtype, device=device)


def reference(attn: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    """1 / (1 + exp(-gate)) times attn in fp64, rounded to the inputs' dtype."""
    g = gate.double()
    return (attn.double() / (1.0 + torch.exp(-g))).to(attn.dtype)


def torch_sigmoid_gate_mul(attn: torch.Tensor, gate: torch.Tensor) -> torch.Tensor:
    """vLLM's unfused path: attn * torch.sigmoid(gate) (two launches)."""
    return attn * torch.sigmoid(gate)
