"""vLLM's Hadamard transform by MMA (the Triton tier of `fast_hadamard_transform`, which
`single_rht` runs on the keys and values written to an INT4 per-token-head KV cache and on
the queries read against it): inputs, reference, torch baseline.

x is [tokens, heads, head_dim] in the spec's dtype: one row per token and head, head_dim a
power of two from 16 to 128 (the Triton tier's range).  The output is H x over the last
axis, unnormalized (H H = head_dim I), in x's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    heads: int,
    head_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:
    """Normal rows (already sign-flipped by the RHT's +-1 diagonal in vLLM, which leaves
    them normal), drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, heads, head_dim, generator=gen, device=device).to(dtype)
    return (x,)


def _hadamard(d: int, device: torch.device) -> torch.Tensor:
    h = torch.ones(1, 1, dtype=torch.float32, device=device)
    while h.shape[0] < d:
        h = torch.cat([torch.cat([h, h], dim=1), torch.cat([h, -h], dim=1)], dim=0)
    return h


def reference(x: torch.Tensor) -> torch.Tensor:
    """x times the Sylvester Hadamard matrix in fp64, in x's dtype."""
    h = _hadamard(x.shape[-1], x.device).double()
    return (x.double() @ h).to(x.dtype)


def torch_hadamard(x: torch.Tensor) -> torch.Tensor:
    """vLLM's tier-3 fallback: log2(head_dim) torch butterfly stages in x's dtype."""
    d = x.shape[-1]
    h = 1
    while h < d:
        xv = x.reshape(*x.shape[:-1], d // (2 * h), 2, h)
        x = torch.stack([xv[..., 0, :] + xv[..., 1, :], xv[..., 0, :] - xv[..., 1, :]], dim=-2)
        x = x.reshape(*xv.shape[:-3], d)
        h <<= 1
    return x
