"""FlagGems' quantile of short rows (percentile clipping of quantization groups): inputs,
fp64 reference, torch baseline.

groups is [tokens * hidden / group, group] in the spec's dtype (hidden states viewed as
quantization groups); q is the [quantiles] list of probabilities, in the same dtype (FlagGems
casts q to the input's dtype, so the kernel and the reference both use the rounded values);
the output is [groups, quantiles] in the input dtype, linear interpolation between order
statistics (torch.quantile's default)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    hidden: int,
    group: int,
    quantiles: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Normal hidden states with a few outlier channels (x20, as LLM activations have),
    viewed as groups; q evenly spaced from the 1st to the 99th percentile."""
    if hidden % group:
        raise ValueError("the hidden size must be a multiple of the group")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    scale = torch.ones(hidden)
    scale[torch.randperm(hidden, generator=gen)[: max(1, hidden // 256)]] = 20.0
    x = torch.randn(tokens, hidden, generator=gen) * scale
    q = torch.linspace(0.01, 0.99, quantiles) if quantiles > 1 else torch.tensor([0.99])
    groups = x.reshape(-1, group)
    return groups.to(dtype).to(device), q.to(dtype).to(device)


def reference(groups: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Each row sorted in fp64; q * (n - 1) split into its floor and fraction; the two
    order statistics interpolated, rounded once to the input dtype."""
    n = groups.shape[-1]
    ordered = groups.double().sort(dim=-1).values
    pos = q.double() * (n - 1)
    lo = pos.floor().long()
    hi = pos.ceil().long()
    frac = pos - lo
    low, high = ordered[:, lo], ordered[:, hi]
    return (low + (high - low) * frac).to(groups.dtype)


def torch_quantile(groups: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """The same by torch.quantile in fp32 (it takes no 16-bit input), as [groups, q]."""
    return torch.quantile(groups.float(), q.float(), dim=-1).T.to(groups.dtype)
