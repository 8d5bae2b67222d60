"""Llama 4's rotary position embedding (complex form) on q and k for Liger's kernel:
inputs, fp32 reference, torch baseline.  q [b, s, hq, d] and k [b, s, hk, d] as the
projections write them, each head's d values read as d/2 interleaved (real, imaginary)
pairs; the frequencies [s, d/2, 2] are the real view of Llama 4's complex64 freqs_cis for
the chunk's positions (one start position, shared by the batch, as Liger indexes them)."""

from __future__ import annotations

import torch

HEAD_DIM = 128
THETA = 500000.0  # Llama 4's rope_theta


def make_inputs(
    b: int, s: int, hq: int, hk: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(b, s, hq, HEAD_DIM, generator=gen)
    k = torch.randn(b, s, hk, HEAD_DIM, generator=gen)
    start = int(torch.randint(0, 8192, (1,), generator=gen))
    pos = torch.arange(start, start + s, dtype=torch.float64)
    inv_freq = THETA ** (-torch.arange(0, HEAD_DIM, 2, dtype=torch.float64) / HEAD_DIM)
    angles = pos[:, None] * inv_freq  # [s, d/2]
    freqs = torch.stack((angles.cos(), angles.sin()), dim=-1).float()  # [s, d/2, 2]
    return q.to(dtype=dtype, device=device), k.to(dtype=dtype, device=device), freqs.to(device)


def _apply(x: torch.Tensor, freqs: torch.Tensor) -> torch.Tensor:
    xc = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2).contiguous())
    fc = torch.view_as_complex(freqs.contiguous())[None, :, None, :]  # over batch and heads
    return torch.view_as_real(xc * fc).flatten(-2)


def reference(
    q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    f = freqs.float()
    return _apply(q.float(), f).to(q.dtype), _apply(k.float(), f).to(k.dtype)


def torch_rope(
    q: torch.Tensor, k: torch.Tensor, freqs: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """HF Llama 4's apply_rotary_emb: view as complex in fp32, multiply, back (new tensors)."""
    return _apply(q.float(), freqs).type_as(q), _apply(k.float(), freqs).type_as(k)
