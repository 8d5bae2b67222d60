"""SGLang's Double Sparsity approximate attention (`sparse_flash_decode_stage1`, the
heavy-channel label scores before torch.topk): inputs, reference, torch baseline.

A decode step of `batch` requests, request b attending to its first seq_lens[b] tokens
(the first request the longest, `ctx`; the others between 3/4 of it and all of it).  The
KV pool's label buffer holds, per token slot and KV head, the `channels` heavy channels of
the key (Double Sparsity's offline-calibrated channels, gathered by SGLang when the key is
stored); q_label holds the same channels of each query head (gathered by torch before the
kernel).  req_to_token is SGLang's `ds_req_to_token` (the request-to-token table's rows of
the batch, int32, one row per request as wide as the longest context), each request's
tokens on slots drawn from a permutation of the pool (slot 0, SGLang's padding slot,
unused).  The output is [heads, batch, ctx] in fp16 (SGLang's reduce dtype with
`--triton-attention-reduce-in-fp32` off) whatever the dtype: q_label . k_label * sm_scale
for each head and context token, -inf past the request's length (torch.topk's input)."""

from __future__ import annotations

import torch

SM_SCALE = 128**-0.5  # Llama 3.1 8B's head dim (layer.scaling)


def seq_lens_of(batch: int, ctx: int) -> list[int]:
    """The first request `ctx` tokens long, request b shorter by (b * 997) % (ctx // 4)."""
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(batch)]


def make_inputs(
    batch: int,
    ctx: int,
    heads: int,
    kv_heads: int,
    channels: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """(q_label [batch, heads, channels], k_label [slots, kv_heads, channels], req_to_token
    [batch, ctx] int32, seq_lens [batch] int64, sm_scale); normal labels."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    lens = seq_lens_of(batch, ctx)
    slots = sum(lens) + 1
    perm = torch.randperm(slots - 1, generator=gen).to(torch.int32) + 1
    req_to_token = torch.zeros(batch, ctx, dtype=torch.int32)
    start = 0
    for b, n in enumerate(lens):
        req_to_token[b, :n] = perm[start : start + n]
        start += n
    q_label = torch.randn(batch, heads, channels, generator=gen)
    k_label = torch.randn(slots, kv_heads, channels, generator=gen)
    seq_lens = torch.tensor(lens, dtype=torch.int64)
    return (
        q_label.to(dtype=dtype, device=device),
        k_label.to(dtype=dtype, device=device),
        req_to_token.to(device),
        seq_lens.to(device),
        SM_SCALE,
    )


def reference(
    q_label: torch.Tensor,
    k_label: torch.Tensor,
    req_to_token: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    """Per request in fp32: its tokens' label rows gathered through req_to_token, each
    query head against its KV head's rows, scaled; -inf past the length; then fp16."""
    batch, heads, _ = q_label.shape
    ctx = req_to_token.shape[1]
    group = heads // k_label.shape[1]
    out = torch.full((heads, batch, ctx), float("-inf"), dtype=torch.float32, device=q_label.device)
    for b in range(batch):
        n = int(seq_lens[b])
        rows = k_label[req_to_token[b, :n].long()].float()  # [n, kv_heads, channels]
        rows = rows.repeat_interleave(group, dim=1)  # [n, heads, channels]
        out[:, b, :n] = torch.einsum("hc,nhc->hn", q_label[b].float(), rows) * sm_scale
    return out.to(torch.float16)


def torch_label_scores(
    q_label: torch.Tensor,
    k_label: torch.Tensor,
    req_to_token: torch.Tensor,
    seq_lens: torch.Tensor,
    sm_scale: float,
) -> torch.Tensor:
    """The same by torch ops in the batch: every request's row gathered over the whole
    width, one batched matmul per KV-head group, the tail masked."""
    batch, heads, channels = q_label.shape
    ctx = req_to_token.shape[1]
    kv_heads = k_label.shape[1]
    rows = k_label[req_to_token.long()].to(torch.float16)  # [batch, ctx, kv_heads, channels]
    q = q_label.to(torch.float16).view(batch, kv_heads, heads // kv_heads, channels)
    att = torch.einsum("bkgc,bnkc->kgbn", q, rows).reshape(heads, batch, ctx) * sm_scale
    past = torch.arange(ctx, device=q_label.device)[None, :] >= seq_lens[:, None]
    return att.masked_fill(past[None], float("-inf"))
