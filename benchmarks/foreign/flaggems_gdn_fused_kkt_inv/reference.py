"""The gated delta rule's fused chunk prologue, for FlagGems' kernel: inputs, fp64
reference, torch baseline.

g [b, t, h] fp32 log gates, k [b, t, hg, kd] unit-norm keys (hg key heads, each shared by
h // hg value heads), beta [b, t, h] in the spec's dtype.  Per 64-token chunk and head the
outputs are g_out = the chunk-local cumsum of g (fp32) and A_inv [b, t, h, 64] = (I + A)^-1
with A = tril(beta_i k_i . k_j exp(g_out_i - g_out_j), -1), in k's dtype; columns past a cut
chunk's end are 0."""

from __future__ import annotations

import torch

CHUNK = 64


def make_inputs(
    b: int, t: int, h: int, hg: int, kd: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Drawn on the target device: L2-normed randn keys (as the model's qk l2norm leaves
    them), beta = sigmoid(randn), Qwen3-Next-like log decays -a * softplus(x - 4)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    k = torch.randn(b, t, hg, kd, generator=gen, device=device)
    k = torch.nn.functional.normalize(k, dim=-1).to(dtype)
    beta = torch.sigmoid(torch.randn(b, t, h, generator=gen, device=device)).to(dtype)
    decay = torch.rand(h, generator=gen, device=device) * 4 + 1
    x = torch.randn(b, t, h, generator=gen, device=device)
    g = -decay * torch.nn.functional.softplus(x - 4.0)
    return g, k, beta


def _solve(
    g: torch.Tensor, k: torch.Tensor, beta: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    b, t, h = g.shape
    hg = k.shape[2]
    nc = -(-t // CHUNK)
    pad = nc * CHUNK - t
    # padded tokens have g = 0, k = 0, beta = 0: their rows of A are 0, and the inverse of a
    # lower-triangular block's leading part is the leading part of its inverse
    gp = torch.nn.functional.pad(g.to(acc), (0, 0, 0, pad)).view(b, nc, CHUNK, h)
    kp = torch.nn.functional.pad(k.to(acc), (0, 0, 0, 0, 0, pad)).view(b, nc, CHUNK, hg, -1)
    bp = torch.nn.functional.pad(beta.to(acc), (0, 0, 0, pad)).view(b, nc, CHUNK, h)
    kp = kp.repeat_interleave(h // hg, dim=3)  # [b, nc, C, h, kd]
    gc = gp.cumsum(2)  # [b, nc, C, h]
    kk = torch.einsum("bnihd,bnjhd->bnhij", kp, kp)
    gh = gc.permute(0, 1, 3, 2)  # [b, nc, h, C]
    a = kk * bp.permute(0, 1, 3, 2)[..., None] * torch.exp(gh[..., :, None] - gh[..., None, :])
    a = torch.tril(a, -1)
    eye = torch.eye(CHUNK, dtype=acc, device=g.device).expand_as(a)
    inv = torch.linalg.solve_triangular(a + eye, eye, upper=False)  # [b, nc, h, C, C]
    inv = inv.permute(0, 1, 3, 2, 4).reshape(b, nc * CHUNK, h, CHUNK)[:, :t]
    if pad:  # columns past a cut chunk's end are 0
        last = t - (nc - 1) * CHUNK
        inv[:, (nc - 1) * CHUNK :, :, last:] = 0
    g_out = gc.reshape(b, nc * CHUNK, h)[:, :t]
    return g_out.float(), inv


def reference(
    g: torch.Tensor, k: torch.Tensor, beta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    g_out, inv = _solve(g, k, beta, torch.float64)
    return g_out, inv.float()


def torch_fused_kkt_inv(
    g: torch.Tensor, k: torch.Tensor, beta: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same in plain torch in fp32: a chunked cumsum, one batched einsum for K K^T and a
    batched triangular solve, the inverse cast to k's dtype."""
    g_out, inv = _solve(g, k, beta, torch.float32)
    return g_out, inv.to(k.dtype)
