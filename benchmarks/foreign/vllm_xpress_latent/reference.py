"""vLLM's XPress latent pass (`_xpress_latent_kernel`): inputs, reference, torch baseline.

One Jacobi pass of the XPress speculator head (a Qwen3 target): N blocks of B draft slots
(slot 0 the verified anchor), rank R, SwiGLU hidden size H, vocabulary V.  blk [N, B] and
am1 [N] are int64 token ids; xh [N, B, R] the pass-invariant hidden cache; w1 [V, R] the
token embedding; wlat_t [R, R] the embedding-to-latent projection (transposed); mix
[B, B, R] the folded causal mixer (L * tril + I per channel, mix[b, j, r]); wg_t and wu_t
[R, H] and wd_t [H, R] the MLP, transposed; all floats in the spec's dtype.  The output is
the latent of slots 1..B-1, [N, B - 1, R]:
    x[n, b] = xh[n, b] + w1[prev[n, b]] @ wlat_t      (prev: blk[n, b - 1], am1[n] at 0)
    u[n, b, r] = sum_j mix[b, j, r] * x[n, j, r]
    out[n, b] = u[n, b] + (silu(u[n, b] @ wg_t) * (u[n, b] @ wu_t)) @ wd_t
"""

from __future__ import annotations

import torch


def make_inputs(
    reqs: int, block: int, rank: int, mlp_hidden: int, vocab: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Random tokens; weights scaled by 1 / sqrt(fan-in), as a trained head's are in
    size; a lower-triangular mixer of 0.1-scaled weights plus the identity."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    blk = torch.randint(0, vocab, (reqs, block), generator=gen, dtype=torch.int64)
    am1 = torch.randint(0, vocab, (reqs,), generator=gen, dtype=torch.int64)
    xh = torch.randn(reqs, block, rank, generator=gen)
    w1 = torch.randn(vocab, rank, generator=gen)
    wlat_t = torch.randn(rank, rank, generator=gen) / rank**0.5
    tril = torch.tril(torch.ones(block, block))
    raw = torch.randn(block, block, rank, generator=gen) * 0.1
    mix = raw * tril[:, :, None] + torch.eye(block)[:, :, None]
    wg_t = torch.randn(rank, mlp_hidden, generator=gen) / rank**0.5
    wu_t = torch.randn(rank, mlp_hidden, generator=gen) / rank**0.5
    wd_t = torch.randn(mlp_hidden, rank, generator=gen) / mlp_hidden**0.5
    floats = [x.to(dtype=dtype, device=device) for x in (xh, w1, wlat_t, mix, wg_t, wu_t, wd_t)]
    xh, w1, wlat_t, mix, wg_t, wu_t, wd_t = floats
    return blk.to(device), am1.to(device), xh, w1, wlat_t, mix, wg_t, wu_t, wd_t


def _prev_tokens(blk: torch.Tensor, am1: torch.Tensor) -> torch.Tensor:
    return torch.cat([am1[:, None], blk[:, :-1]], dim=1)


def reference(
    blk: torch.Tensor, am1: torch.Tensor, xh: torch.Tensor, w1: torch.Tensor,
    wlat_t: torch.Tensor, mix: torch.Tensor, wg_t: torch.Tensor, wu_t: torch.Tensor,
    wd_t: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """In fp64 on the CPU, then rounded to the dtype."""
    d = [t.double().cpu() for t in (xh, w1, wlat_t, mix, wg_t, wu_t, wd_t)]
    xh64, w164, wlat64, mix64, wg64, wu64, wd64 = d
    prev = _prev_tokens(blk.cpu(), am1.cpu())
    x = xh64 + w164[prev] @ wlat64
    u = torch.einsum("bjr,njr->nbr", mix64, x)
    g = u @ wg64
    out = u + (g * torch.sigmoid(g) * (u @ wu64)) @ wd64
    return out[:, 1:].to(dtype=xh.dtype, device=xh.device)


def torch_latent(
    blk: torch.Tensor, am1: torch.Tensor, xh: torch.Tensor, w1: torch.Tensor,
    wlat_t: torch.Tensor, mix: torch.Tensor, wg_t: torch.Tensor, wu_t: torch.Tensor,
    wd_t: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch ops in the dtype (the head's eager path): the embedding gather,
    one GEMM, the mixer as a batched matmul over channels, the MLP as three GEMMs."""
    n, b, r = xh.shape
    prev = _prev_tokens(blk, am1)
    x = xh + torch.nn.functional.embedding(prev, w1) @ wlat_t
    u = torch.bmm(mix.permute(2, 0, 1), x.permute(2, 1, 0)).permute(2, 1, 0)
    flat = u.reshape(n * b, r)
    mlp = (torch.nn.functional.silu(flat @ wg_t) * (flat @ wu_t)) @ wd_t
    return (u + mlp.view(n, b, r))[:, 1:].contiguous()
