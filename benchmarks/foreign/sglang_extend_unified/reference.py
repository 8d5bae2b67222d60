"""SGLang's unified extend attention (the Triton backend's deterministic prefill with a cached
prefix and attention sinks, page size 1): inputs, fp32 reference, torch baseline.

q is [tokens, heads, headdim] (the new tokens of every sequence, packed); k_buffer and
v_buffer are the KV pool [slots, kvheads, headdim], into which SGLang has already written the
new tokens' keys and values; kv_indices (int64, as `build_unified_kv_indices` makes them)
lists each sequence's prefix slots followed by its new tokens' slots, kv_indptr (int64, a
cumsum) their offsets, qo_indptr (int32) the new tokens' offsets and prefix_lens (int32) the
cached length of each sequence; sinks [heads] are the per-head learned sink logits (GPT-OSS,
in the model dtype).  Query i of a sequence attends to its whole prefix and to its new tokens
0..i (causal), GQA (head h reads kv head h // (heads / kvheads)), softmax scale
1 / sqrt(headdim), the sink's exp(sink) added to each row's denominator."""

from __future__ import annotations

import torch

Q_CHUNK = 1024  # query rows scored at a time (a 4k x 8k x 64-head score block is 8 GB in fp32)


def make_inputs(
    seqs: int, prefix: int, extend: int, heads: int, kvheads: int, headdim: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Normal q and pool in the dtype, drawn on the device; a pool of twice the tokens
    needed plus one slot (slot 0 padding), each sequence's prefix and new tokens at a random
    choice of its slots (SGLang's allocator hands them out in no order after some traffic);
    every sequence `prefix` cached and `extend` new tokens; sinks N(0, 1) in the dtype."""
    if heads % kvheads:
        raise ValueError("heads must be a multiple of kvheads")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * extend
    per_seq = prefix + extend
    slots = 2 * seqs * per_seq + 1

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, device=device, dtype=torch.float32).to(dtype)

    q = randn(tokens, heads, headdim)
    k_buffer = randn(slots, kvheads, headdim)
    v_buffer = randn(slots, kvheads, headdim)
    sinks = randn(heads)
    perm = torch.randperm(slots - 1, generator=gen, device=device)
    kv_indices = perm[: seqs * per_seq].to(torch.int64) + 1
    qo_indptr = torch.arange(seqs + 1, dtype=torch.int32, device=device) * extend
    kv_indptr = torch.arange(seqs + 1, dtype=torch.int64, device=device) * per_seq
    prefix_lens = torch.full((seqs,), prefix, dtype=torch.int32, device=device)
    return q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, sinks


def _attention(
    q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, prefix_lens: torch.Tensor,
    sinks: torch.Tensor, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    heads, headdim = q.shape[1], q.shape[2]
    rep = heads // k_buffer.shape[1]
    out = torch.empty((*q.shape[:2], v_buffer.shape[2]), dtype=torch.float32, device=q.device)
    qo, kv, pre = qo_indptr.tolist(), kv_indptr.tolist(), prefix_lens.tolist()
    sink = sinks.float()[:, None, None]  # [H, 1, 1]
    for s in range(len(qo) - 1):
        idx = kv_indices[kv[s] : kv[s + 1]].long()
        n_kv, n_pre = kv[s + 1] - kv[s], pre[s]
        keys = k_buffer[idx].repeat_interleave(rep, dim=1).permute(1, 2, 0).to(acc)  # [H, D, N]
        vals = v_buffer[idx].repeat_interleave(rep, dim=1).transpose(0, 1).to(acc)  # [H, N, Dv]
        key_pos = torch.arange(n_kv, device=q.device)
        for c0 in range(0, qo[s + 1] - qo[s], Q_CHUNK):
            c1 = min(c0 + Q_CHUNK, qo[s + 1] - qo[s])
            qs = q[qo[s] + c0 : qo[s] + c1].transpose(0, 1).to(acc)  # [H, C, D]
            scores = (qs @ keys).float() * headdim**-0.5
            q_pos = torch.arange(c0, c1, device=q.device)[:, None]
            allowed = (key_pos[None, :] < n_pre) | (q_pos >= key_pos[None, :] - n_pre)
            scores = scores.masked_fill(~allowed, float("-inf"))
            top = torch.maximum(scores.amax(dim=-1, keepdim=True), sink)
            p = torch.exp(scores - top)
            deno = p.sum(dim=-1, keepdim=True) + torch.exp(sink - top)
            o = (p.to(acc) @ vals).float() / deno
            out[qo[s] + c0 : qo[s] + c1] = o.transpose(0, 1)
    return out.to(q.dtype)


def reference(
    q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, prefix_lens: torch.Tensor,
    sinks: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    return _attention(
        q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, sinks,
        torch.float32,
    )  # fmt: skip


def torch_extend_attention_unified(
    q: torch.Tensor, k_buffer: torch.Tensor, v_buffer: torch.Tensor, qo_indptr: torch.Tensor,
    kv_indptr: torch.Tensor, kv_indices: torch.Tensor, prefix_lens: torch.Tensor,
    sinks: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """The same by torch, sequence by sequence and 1024 queries at a time: the keys and values
    gathered from the pool, the two products in the input dtype, the masked softmax with the
    sink in fp32."""
    return _attention(
        q, k_buffer, v_buffer, qo_indptr, kv_indptr, kv_indices, prefix_lens, sinks, q.dtype
    )
