"""SGLang's sparse-linear attention, sparse branch (`_attn_fwd` as `_attention.forward`
launches it): inputs, reference, torch baseline.

q, k and v are [1, heads, tokens, head_dim] in the spec's dtype (SGLang casts them to bf16
with `use_bf16`, its default), contiguous, as SLA's forward makes them after its transpose.
The LUT [1, heads, cdiv(tokens, 128), topk] (int64) is SGLang's block map: `get_block_map`
mean-pools q over 128-token blocks and the smoothed keys (k less its mean over the tokens)
over 64-token blocks, scores the pooled blocks against each other and keeps each query
block's topk best key blocks (torch.topk, unsorted); it is made with the inputs, on the
device.  The output is [1, heads, tokens, head_dim] in the dtype: for each query, softmax
attention (scale head_dim^-1/2) over the keys of its query block's kept key blocks only."""

from __future__ import annotations

import torch

BLKQ = 128
BLKK = 64


def _mean_pool(x: torch.Tensor, blk: int) -> torch.Tensor:
    """[.., tokens, d] -> [.., cdiv(tokens, blk), d]: each block's mean over its own tokens
    (the last block's too), as SGLang's compress_kernel takes it."""
    length = x.shape[-2]
    nblk = (length + blk - 1) // blk
    pad = nblk * blk - length
    xf = torch.nn.functional.pad(x.float(), (0, 0, 0, pad))
    sums = xf.unflatten(-2, (nblk, blk)).sum(dim=-2)
    counts = torch.full((nblk,), blk, dtype=torch.float32, device=x.device)
    counts[-1] = blk - pad
    return sums / counts[:, None]


def make_inputs(
    heads: int,
    tokens: int,
    head_dim: int,
    topk: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """Normal q, k and v plus a smooth component along the tokens (a video's neighbouring
    latents look alike, so the pooled scores have structure), then SGLang's block map."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shape = (1, heads, tokens, head_dim)
    pos = torch.arange(tokens, dtype=torch.float32)[:, None]
    freq = torch.rand(1, heads, 1, head_dim, generator=gen) * 0.05
    phase = torch.rand(1, heads, 1, head_dim, generator=gen) * 6.283
    smooth = torch.sin(pos * freq + phase)
    q = (torch.randn(shape, generator=gen) + 2 * smooth).to(dtype).to(device)
    k = (torch.randn(shape, generator=gen) + 2 * smooth).to(dtype).to(device)
    v = torch.randn(shape, generator=gen).to(dtype).to(device)
    kblocks = (tokens + BLKK - 1) // BLKK
    if not 1 <= topk <= kblocks:
        raise ValueError(f"topk must be between 1 and the {kblocks} key blocks")
    arg_k = k.float() - k.float().mean(dim=-2, keepdim=True)  # SageAttention's smooth-k
    score = _mean_pool(q, BLKQ) @ _mean_pool(arg_k, BLKK).transpose(-1, -2)
    lut = torch.topk(score, topk, dim=-1, sorted=False).indices.contiguous()
    return q, k, v, lut


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lut: torch.Tensor) -> torch.Tensor:
    """Per head and 16 query blocks at a time in fp32: the kept key and value blocks
    gathered (padded keys past the sequence masked), softmax(q k^T / sqrt(d)) v, rounded to
    the dtype."""
    b, h, length, d = q.shape
    mq, topk = lut.shape[2], lut.shape[3]
    nk = (length + BLKK - 1) // BLKK
    pad_k = nk * BLKK - length
    pad_q = mq * BLKQ - length
    out = torch.empty_like(q)
    valid = torch.arange(nk * BLKK, device=q.device) < length
    valid_blocks = valid.view(nk, BLKK)
    for bi in range(b):
        for hi in range(h):
            qh = torch.nn.functional.pad(q[bi, hi].float(), (0, 0, 0, pad_q)).view(mq, BLKQ, d)
            kh = torch.nn.functional.pad(k[bi, hi].float(), (0, 0, 0, pad_k)).view(nk, BLKK, d)
            vh = torch.nn.functional.pad(v[bi, hi].float(), (0, 0, 0, pad_k)).view(nk, BLKK, d)
            res = torch.empty(mq, BLKQ, d, device=q.device, dtype=torch.float32)
            for m0 in range(0, mq, 16):
                idx = lut[bi, hi, m0 : m0 + 16]  # [c, topk]
                ks = kh[idx].reshape(idx.shape[0], topk * BLKK, d)
                vs = vh[idx].reshape(idx.shape[0], topk * BLKK, d)
                mask = valid_blocks[idx].reshape(idx.shape[0], 1, topk * BLKK)
                s = (qh[m0 : m0 + 16] @ ks.transpose(-1, -2)) * d**-0.5
                s = s.masked_fill(~mask, float("-inf"))
                res[m0 : m0 + 16] = torch.softmax(s, dim=-1) @ vs
            out[bi, hi] = res.reshape(mq * BLKQ, d)[:length].to(q.dtype)
    return out


def torch_sla_attention(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, lut: torch.Tensor
) -> torch.Tensor:
    """The same by torch ops in the input dtype: per head and 64 query blocks at a time, the
    kept key and value blocks gathered by advanced indexing, then
    scaled_dot_product_attention with a mask over the padded keys."""
    b, h, length, d = q.shape
    mq, topk = lut.shape[2], lut.shape[3]
    nk = (length + BLKK - 1) // BLKK
    pad_k = nk * BLKK - length
    pad_q = mq * BLKQ - length
    out = torch.empty_like(q)
    valid_blocks = (torch.arange(nk * BLKK, device=q.device) < length).view(nk, BLKK)
    for bi in range(b):
        for hi in range(h):
            qh = torch.nn.functional.pad(q[bi, hi], (0, 0, 0, pad_q)).view(mq, BLKQ, d)
            kh = torch.nn.functional.pad(k[bi, hi], (0, 0, 0, pad_k)).view(nk, BLKK, d)
            vh = torch.nn.functional.pad(v[bi, hi], (0, 0, 0, pad_k)).view(nk, BLKK, d)
            res = torch.empty(mq, BLKQ, d, device=q.device, dtype=q.dtype)
            for m0 in range(0, mq, 64):
                idx = lut[bi, hi, m0 : m0 + 64]
                ks = kh[idx].reshape(idx.shape[0], topk * BLKK, d)
                vs = vh[idx].reshape(idx.shape[0], topk * BLKK, d)
                mask = valid_blocks[idx].reshape(idx.shape[0], 1, topk * BLKK)
                res[m0 : m0 + 64] = torch.nn.functional.scaled_dot_product_attention(
                    qh[m0 : m0 + 64], ks, vs, attn_mask=mask
                )
            out[bi, hi] = res.reshape(mq * BLKQ, d)[:length]
    return out
