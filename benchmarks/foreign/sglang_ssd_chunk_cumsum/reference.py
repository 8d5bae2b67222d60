"""Mamba-2's dt preparation and chunk-local dA cumsum (SGLang's `_chunk_cumsum_fwd`, as its
SSD prefill calls it for `MambaMixer2`: dt_bias on, softplus on, dt_limit (0, inf)):
inputs, fp32 reference, torch baseline.

dt is [batch, seqlen, nheads] in the spec's dtype (the in_proj's dt columns of the packed
prefill tokens), A [nheads] fp32 (-exp(A_log), as SGLang's loader stores it), dt_bias
[nheads] in the spec's dtype.  With the tokens cut into chunks of `chunk` (the last padded):

    dt'[b, h, c, l] = clamp(softplus(dt[b, c * chunk + l, h] + dt_bias[h]), 0, inf)
                      (softplus(x) = log(1 + exp(x)) for x <= 20, else x; 0 past seqlen)
    dA_cumsum[b, h, c, l] = sum over l' <= l of dt'[b, h, c, l'] * A[h]

Outputs: (dA_cumsum, dt'), both [batch, nheads, nchunks, chunk] fp32."""

from __future__ import annotations

import math

import torch


def make_inputs(
    batch: int, seqlen: int, nheads: int, chunk: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """(dt, A, dt_bias, chunk): dt at unit scale drawn on the device (a projection's
    output); Mamba-2's initialisation for the rest: dt_bias the inverse softplus of a dt
    log-uniform in [1e-3, 0.1], A = -U[1, 16]."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    dt = torch.randn(batch, seqlen, nheads, generator=dev, device=device, dtype=dtype)
    lo, hi = math.log(1e-3), math.log(0.1)
    dt0 = torch.exp(torch.rand(nheads, generator=gen) * (hi - lo) + lo)
    dt_bias = dt0 + torch.log(-torch.expm1(-dt0))  # softplus^-1
    a = -(torch.rand(nheads, generator=gen) * 15.0 + 1.0)
    return dt, a.to(device), dt_bias.to(dtype=dtype, device=device), chunk


def _cumsum(
    dt: torch.Tensor, a: torch.Tensor, dt_bias: torch.Tensor, chunk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    batch, seqlen, nheads = dt.shape
    nchunks = -(-seqlen // chunk)
    x = dt.float() + dt_bias.float()
    x = torch.where(x <= 20.0, torch.log1p(torch.exp(x)), x).clamp_min(0.0)
    x = torch.nn.functional.pad(x, (0, 0, 0, nchunks * chunk - seqlen))  # 0 past seqlen
    dt_out = x.view(batch, nchunks, chunk, nheads).permute(0, 3, 1, 2).contiguous()
    da_cumsum = torch.cumsum(dt_out * a.float()[None, :, None, None], dim=-1)
    return da_cumsum, dt_out


def reference(
    dt: torch.Tensor, a: torch.Tensor, dt_bias: torch.Tensor, chunk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    return _cumsum(dt, a, dt_bias, chunk)


def torch_chunk_cumsum(
    dt: torch.Tensor, a: torch.Tensor, dt_bias: torch.Tensor, chunk: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same by torch's kernels in fp32: the bias add, softplus (threshold 20) and
    clamp, the pad and transpose to chunk rows, the product with A and torch.cumsum."""
    batch, seqlen, nheads = dt.shape
    nchunks = -(-seqlen // chunk)
    x = torch.nn.functional.softplus(dt.float() + dt_bias.float(), threshold=20.0)
    x = torch.nn.functional.pad(x.clamp_min(0.0), (0, 0, 0, nchunks * chunk - seqlen))
    dt_out = x.view(batch, nchunks, chunk, nheads).permute(0, 3, 1, 2).contiguous()
    return torch.cumsum(dt_out * a[None, :, None, None], dim=-1), dt_out
