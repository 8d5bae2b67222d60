"""vLLM's DeepEncoder relative-position attention (`deepencoder_rel_pos_attention`, its
`_deepencoder_rel_pos_attention_kernel`): inputs, reference, torch baseline.

q, k and v are [images, heads, tokens, head_dim] in the spec's dtype, tokens = grid_h x
grid_w patches in row-major order (what the SAM encoder's qkv projection gives after its
permute and reshape).  rel_h [images, heads, tokens, grid_h] and rel_w [images, heads,
tokens, grid_w] are the decomposed relative-position terms (`add_decomposed_rel_pos`: each
query against the height and the width tables of its relative offsets), in the same dtype,
made here with the inputs as the layer makes them before the kernel.  The output is
softmax(q k^T * head_dim^-0.5 + rel_h[key's row] + rel_w[key's column]) v, non-causal, in q's
dtype."""

from __future__ import annotations

import torch


def make_inputs(
    images: int,
    heads: int,
    grid_h: int,
    grid_w: int,
    head_dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int]:
    """Normal q, k, v; rel_h and rel_w from a normal query against relative-position tables
    of SAM's initialisation scale (0.02), as get_rel_pos and the einsums build them; the
    grid's width (the kernel's key_width)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = grid_h * grid_w
    q, k, v = (torch.randn(images, heads, tokens, head_dim, generator=gen) for _ in range(3))
    table_h = torch.randn(2 * grid_h - 1, head_dim, generator=gen) * 0.02
    table_w = torch.randn(2 * grid_w - 1, head_dim, generator=gen) * 0.02
    rows = torch.arange(grid_h)
    cols = torch.arange(grid_w)
    rh = table_h[rows[:, None] - rows[None, :] + grid_h - 1]  # [grid_h (q), grid_h (k), D]
    rw = table_w[cols[:, None] - cols[None, :] + grid_w - 1]  # [grid_w (q), grid_w (k), D]
    rq = q.reshape(images, heads, grid_h, grid_w, head_dim)
    rel_h = torch.einsum("bnhwc,hkc->bnhwk", rq, rh).reshape(images, heads, tokens, grid_h)
    rel_w = torch.einsum("bnhwc,wkc->bnhwk", rq, rw).reshape(images, heads, tokens, grid_w)
    return (
        q.to(dtype=dtype, device=device), k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device), rel_h.contiguous().to(dtype=dtype, device=device),
        rel_w.contiguous().to(dtype=dtype, device=device), grid_w,
    )  # fmt: skip


def _bias(rel_h: torch.Tensor, rel_w: torch.Tensor) -> torch.Tensor:
    """[images, heads, tokens, tokens]: rel_h at each key's row plus rel_w at its column."""
    b, n, t, gh = rel_h.shape
    gw = rel_w.shape[-1]
    return (rel_h[..., :, None] + rel_w[..., None, :]).reshape(b, n, t, gh * gw)


def reference(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    rel_h: torch.Tensor,
    rel_w: torch.Tensor,
    width: int,
) -> torch.Tensor:
    """In fp64: the scaled scores plus the bias, softmax over the keys, times v; cast."""
    del width
    scale = q.shape[-1] ** -0.5
    s = torch.matmul(q.double(), k.double().transpose(-1, -2)) * scale
    s = s + _bias(rel_h.double(), rel_w.double())
    return torch.matmul(torch.softmax(s, dim=-1), v.double()).to(q.dtype)


def torch_sdpa(
    q: torch.Tensor,
    k: torch.Tensor,
    v: torch.Tensor,
    rel_h: torch.Tensor,
    rel_w: torch.Tensor,
    width: int,
) -> torch.Tensor:
    """vLLM's own fallback off CUDA: the bias materialised as a [tokens, tokens] mask per
    image and head, then torch's scaled_dot_product_attention."""
    del width
    return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=_bias(rel_h, rel_w))
