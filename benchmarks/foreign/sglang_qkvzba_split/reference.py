"""SGLang's Qwen3-Next projection split (`fused_qkvzba_split_reshape_cat`): inputs,
reference, torch baseline.

mixed_qkvz [tokens, k_heads x (2 head_k + 2 r head_v)] and mixed_ba [tokens, 2 v_heads]
are the gated delta net's two input projections (`in_proj_qkvz`, `in_proj_ba`) in the
spec's dtype, grouped per key head ([q, k, v, z] and [b, a], r = v_heads / k_heads value
heads each).  The outputs: mixed_qkv [tokens, 2 k_heads head_k + v_heads head_v] (all q,
then all k, then all v), z [tokens, v_heads, head_v], b and a [tokens, v_heads]."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, k_heads: int, v_heads: int, head_k: int, head_v: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int, int, int]:  # fmt: skip
    """Normal projections (a copy: any values do), then the head counts and sizes."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    r = v_heads // k_heads
    qkvz = torch.randn(tokens, k_heads * (2 * head_k + 2 * r * head_v), generator=gen)
    ba = torch.randn(tokens, 2 * v_heads, generator=gen)
    return (
        qkvz.to(dtype=dtype, device=device), ba.to(dtype=dtype, device=device),
        k_heads, v_heads, head_k, head_v,
    )  # fmt: skip


def reference(
    mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, k_heads: int, v_heads: int,
    head_k: int, head_v: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Element by element through index arithmetic in int64 (gathers from flat offsets,
    not the reshapes the baseline uses)."""
    tokens = mixed_qkvz.shape[0]
    r = v_heads // k_heads
    dev = mixed_qkvz.device
    per_head = 2 * head_k + 2 * r * head_v
    qkvz = mixed_qkvz.float().reshape(tokens, -1)
    h = torch.arange(k_heads, device=dev)[:, None]
    q_src = (h * per_head + torch.arange(head_k, device=dev)).reshape(-1)
    k_src = q_src + head_k
    e = torch.arange(r * head_v, device=dev)
    v_src = (h * per_head + 2 * head_k + e).reshape(-1)
    z_src = v_src + r * head_v
    mixed_qkv = torch.cat([qkvz[:, q_src], qkvz[:, k_src], qkvz[:, v_src]], dim=1)
    z = qkvz[:, z_src].reshape(tokens, v_heads, head_v)
    j = torch.arange(r, device=dev)
    b_src = (h * 2 * r + j).reshape(-1)
    ba = mixed_ba.float()
    b, a = ba[:, b_src], ba[:, b_src + r]
    return (
        mixed_qkv.to(mixed_qkvz.dtype), z.to(mixed_qkvz.dtype), b.to(mixed_ba.dtype),
        a.to(mixed_ba.dtype),
    )  # fmt: skip


def torch_split(
    mixed_qkvz: torch.Tensor, mixed_ba: torch.Tensor, k_heads: int, v_heads: int,
    head_k: int, head_v: int,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """SGLang's fallback (`fix_query_key_value_ordering`, then torch.cat): views and
    torch.split per key head, reshapes, one cat."""
    tokens = mixed_qkvz.shape[0]
    r = v_heads // k_heads
    qkvz = mixed_qkvz.view(tokens, k_heads, 2 * head_k + 2 * r * head_v)
    q, k, v, z = torch.split(qkvz, [head_k, head_k, r * head_v, r * head_v], dim=2)
    ba = mixed_ba.view(tokens, k_heads, 2 * r)
    b, a = torch.split(ba, [r, r], dim=2)
    mixed_qkv = torch.cat(
        (q.reshape(tokens, -1), k.reshape(tokens, -1), v.reshape(tokens, -1)), dim=-1
    )
    return (
        mixed_qkv, z.reshape(tokens, v_heads, head_v), b.reshape(tokens, v_heads),
        a.reshape(tokens, v_heads),
    )  # fmt: skip
