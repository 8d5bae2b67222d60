"""SGLang's extend attention (the Triton backend's prefill with a cached prefix, page size
1): inputs, fp32 reference, torch baseline.

q_extend is [tokens, heads, headdim] (the new tokens of every sequence, packed), k_extend
and v_extend [tokens, kvheads, headdim]; k_buffer and v_buffer are the KV pool [slots,
kvheads, headdim], each sequence's cached prefix scattered over it at kv_indices (int64, as
SGLang's req_to_token gather leaves them); qo_indptr and kv_indptr the int32 offsets of the
sequences' new tokens and prefixes.  Query i of a sequence attends to its whole prefix and to
its new tokens 0..i (causal), GQA (head h reads kv head h // (heads / kvheads)), softmax
scale 1 / sqrt(headdim)."""

from __future__ import annotations

import torch


def make_inputs(
    seqs: int, prefix: int, extend: int, heads: int, kvheads: int, headdim: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Normal q, k and v in the dtype; a pool of twice the tokens needed plus one slot,
    each sequence's prefix at a random choice of its slots (SGLang's allocator hands them
    out in no order after some traffic); every sequence `prefix` cached and `extend` new
    tokens."""
    if heads % kvheads:
        raise ValueError("heads must be a multiple of kvheads")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * extend
    q = torch.randn(tokens, heads, headdim, generator=gen)
    k = torch.randn(tokens, kvheads, headdim, generator=gen)
    v = torch.randn(tokens, kvheads, headdim, generator=gen)
    slots = 2 * seqs * (prefix + extend) + 1
    k_buffer = torch.randn(slots, kvheads, headdim, generator=gen)
    v_buffer = torch.randn(slots, kvheads, headdim, generator=gen)
    kv_indices = torch.randperm(slots - 1, generator=gen)[: seqs * prefix] + 1  # slot 0 padding
    qo_indptr = torch.arange(seqs + 1, dtype=torch.int32) * extend
    kv_indptr = torch.arange(seqs + 1, dtype=torch.int32) * prefix
    return (
        q.to(dtype=dtype, device=device), k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device), k_buffer.to(dtype=dtype, device=device),
        v_buffer.to(dtype=dtype, device=device), qo_indptr.to(device), kv_indptr.to(device),
        kv_indices.to(device),
    )  # fmt: skip


def _attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_buffer: torch.Tensor,
    v_buffer: torch.Tensor, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    heads, headdim = q.shape[1], q.shape[2]
    rep = heads // k.shape[1]
    out = torch.empty(q.shape, dtype=torch.float32, device=q.device)
    qo, kv = qo_indptr.tolist(), kv_indptr.tolist()
    for s in range(len(qo) - 1):
        idx = kv_indices[kv[s] : kv[s + 1]].long()
        n_pre, n_ext = kv[s + 1] - kv[s], qo[s + 1] - qo[s]
        keys = torch.cat([k_buffer[idx], k[qo[s] : qo[s + 1]]]).repeat_interleave(rep, dim=1)
        vals = torch.cat([v_buffer[idx], v[qo[s] : qo[s + 1]]]).repeat_interleave(rep, dim=1)
        qs = q[qo[s] : qo[s + 1]].transpose(0, 1).to(acc)  # [H, E, D]
        scores = (qs @ keys.permute(1, 2, 0).to(acc)).float() * headdim**-0.5
        allowed = torch.ones(n_ext, n_pre + n_ext, dtype=torch.bool, device=q.device)
        allowed[:, n_pre:] = torch.tril(allowed[:, n_pre:])
        p = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=-1)
        out[qo[s] : qo[s + 1]] = (p.to(acc) @ vals.transpose(0, 1).to(acc)).float().transpose(0, 1)
    return out.to(q.dtype)


def reference(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_buffer: torch.Tensor,
    v_buffer: torch.Tensor, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return _attention(q, k, v, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, torch.float32)


def torch_extend_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, k_buffer: torch.Tensor,
    v_buffer: torch.Tensor, qo_indptr: torch.Tensor, kv_indptr: torch.Tensor,
    kv_indices: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch, sequence by sequence: the prefix gathered from the pool and the
    two products in the input dtype, the softmax in fp32."""
    return _attention(q, k, v, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, q.dtype)
