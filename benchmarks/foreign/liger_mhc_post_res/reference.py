"""The mHC stream update after a wrapped layer (Liger's `LigerMHCPostResFunction`): inputs,
fp32 reference, torch baseline.  Per token, with HC streams x [HC, C], the layer's output
f [C] and the coefficients h_post [HC], h_res [HC, HC] (fp32):
out[o] = h_post[o] * f + sum_i h_res[o, i] * x[i], returned in x's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, hc: int, c: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Streams and layer output (unit normal, the streams' dtype); h_post in (0, 2) and a
    row-stochastic h_res (fp32), as the coefficients come out of mHC's sigmoid and
    Sinkhorn."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hc, c, generator=gen)
    f_out = torch.randn(tokens, c, generator=gen)
    h_post = 2.0 * torch.sigmoid(torch.randn(tokens, hc, generator=gen))
    h_res = torch.softmax(torch.randn(tokens, hc, hc, generator=gen), dim=-1)
    return (
        x.to(dtype=dtype, device=device),
        f_out.to(dtype=dtype, device=device),
        h_post.to(device),
        h_res.to(device),
    )


def reference(
    x: torch.Tensor, f_out: torch.Tensor, h_post: torch.Tensor, h_res: torch.Tensor
) -> torch.Tensor:
    out = h_post[:, :, None] * f_out.float()[:, None, :] + torch.bmm(h_res, x.float())
    return out.to(x.dtype)


def torch_mhc_post_res(
    x: torch.Tensor, f_out: torch.Tensor, h_post: torch.Tensor, h_res: torch.Tensor
) -> torch.Tensor:
    """Plain torch in the streams' dtype: a batched [HC, HC] x [HC, C] matmul per token and
    a broadcast multiply-add."""
    mixed = torch.bmm(h_res.to(x.dtype), x)
    return torch.addcmul(mixed, h_post.to(x.dtype)[:, :, None], f_out[:, None, :])
