"""FlagGems' count_nonzero along the last dimension (the active neurons of each token of a
ReLU MLP): inputs, reference, torch baseline.

h is [tokens, inter] in the spec's dtype, the ReLU activations of an MLP's intermediate
layer (about 89% exact zeros, ProSparse-Llama-2-7B's sparsity); the output is the [tokens]
int64 count of non-zero activations per token."""

from __future__ import annotations

import torch

SPARSITY = 0.89  # ProSparse-Llama-2-7B's average share of zero activations


def make_inputs(
    tokens: int, inter: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """ReLU of normals shifted so that about 89% fall below zero, each token's share of
    active neurons varying (a per-token shift)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shift = 1.23 + 0.3 * torch.randn(tokens, 1, generator=gen)  # P(N(0,1) > 1.23) ~ 0.11
    h = torch.relu(torch.randn(tokens, inter, generator=gen) - shift)
    return (h.to(dtype).to(device),)


def reference(h: torch.Tensor) -> torch.Tensor:
    """The non-zero count per row, as an int64 sum of a comparison."""
    return (h != 0).sum(dim=-1, dtype=torch.int64)


def torch_count_nonzero(h: torch.Tensor) -> torch.Tensor:
    """The same counts by torch.count_nonzero."""
    return torch.count_nonzero(h, dim=-1)
