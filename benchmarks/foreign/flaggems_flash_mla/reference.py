"""MLA decode over a paged latent KV cache, for FlagGems' flash_mla kernel: inputs, fp32
reference, torch baseline.

q [b, h, d] (one decode token per sequence, d = 576: the 512 latent columns then the 64
rope columns), kv_cache [pages, page, d] (the one latent KV head every query head shares),
block_table [b, n / page] int32 (each sequence's pages, a random permutation of the pool)
and cache_seqlens [b] int32 (n each).  The output o [b, h, dv] = softmax(q . k * d^-1/2) v
over the sequence's n rows, k the whole row and v its first dv = 512 columns."""

from __future__ import annotations

import torch

DV = 512  # the latent (value) width; the rest of each row is the rope part


def make_inputs(
    b: int,
    h: int,
    n: int,
    d: int,
    page: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """randn q and cache rows, every sequence n long over n / page pages of a shuffled pool.
    Drawn on the target device (the serving trial's pool is 151 M values)."""
    if n % page:
        raise ValueError("n must be a multiple of page")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    per_seq = n // page
    q = torch.randn(b, h, d, generator=gen, device=device, dtype=dtype)
    kv = torch.randn(b * per_seq, page, d, generator=gen, device=device, dtype=dtype)
    perm = torch.randperm(b * per_seq, generator=gen, device=device)
    block_table = perm.view(b, per_seq).to(torch.int32)
    seqlens = torch.full((b,), n, device=device, dtype=torch.int32)
    return q, kv, block_table, seqlens


def _attend(
    q: torch.Tensor,
    kv: torch.Tensor,
    block_table: torch.Tensor,
    seqlens: torch.Tensor,
    acc: torch.dtype,
) -> torch.Tensor:
    b, _, d = q.shape
    n = int(seqlens.max())
    rows = kv[block_table.long()].reshape(b, -1, d)[:, :n].to(acc)  # [b, n, d]
    s = torch.einsum("bhd,bnd->bhn", q.to(acc), rows).float() * d**-0.5
    valid = torch.arange(n, device=q.device)[None, :] < seqlens[:, None]
    s = s.masked_fill(~valid[:, None, :], float("-inf"))
    p = torch.softmax(s, dim=-1)
    o = torch.einsum("bhn,bnd->bhd", p.to(acc), rows[..., :DV]).float()
    return o.to(q.dtype)


def reference(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seqlens: torch.Tensor
) -> torch.Tensor:
    return _attend(q, kv, block_table, seqlens, torch.float32)


def torch_flash_mla(
    q: torch.Tensor, kv: torch.Tensor, block_table: torch.Tensor, seqlens: torch.Tensor
) -> torch.Tensor:
    """The gather-then-dense formulation in plain torch: each sequence's pages gathered into
    contiguous rows, two einsums in the input dtype around an fp32 softmax."""
    return _attend(q, kv, block_table, seqlens, q.dtype)
