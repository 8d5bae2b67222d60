"""FlagGems' cat (its `cat_copy_func_kernel_4`) on MLA's query halves: inputs, reference,
torch baseline.

q_nope is [tokens, heads, nope_dim] and q_pe [tokens, heads, rope_dim], both contiguous and
in the spec's dtype: DeepSeek-V3's per-head query without and with rotary position
embedding.  The output is [tokens, heads, nope_dim + rope_dim], q_nope's columns then
q_pe's, as `torch.cat([q_nope, q_pe], dim=-1)` builds MLA's query."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    heads: int,
    nope_dim: int,
    rope_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Normal query halves (the no-position part and the rotated part)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q_nope = torch.randn(tokens, heads, nope_dim, generator=gen)
    q_pe = torch.randn(tokens, heads, rope_dim, generator=gen)
    return q_nope.to(dtype=dtype, device=device), q_pe.to(dtype=dtype, device=device)


def reference(q_nope: torch.Tensor, q_pe: torch.Tensor) -> torch.Tensor:
    """An empty output whose two column ranges are assigned by slicing (no torch.cat)."""
    nope = q_nope.shape[-1]
    out = torch.empty(
        (*q_nope.shape[:-1], nope + q_pe.shape[-1]), dtype=q_nope.dtype, device=q_nope.device
    )
    out[..., :nope] = q_nope
    out[..., nope:] = q_pe
    return out


def torch_cat(q_nope: torch.Tensor, q_pe: torch.Tensor) -> torch.Tensor:
    """torch.cat over the last dimension (what the attention layer calls)."""
    return torch.cat([q_nope, q_pe], dim=-1)
