"""Lightning attention's diagonal blocks (the first launch of vLLM's `lightning_attention`
prefill, as MiniMax-Text-01's linear-attention layers call it): inputs, fp32 reference,
torch baseline.

q and k are [batch, heads, seqlen, d], v [batch, heads, seqlen, e] in the spec's dtype, s
[heads] the fp32 decay rate of each head.  The sequence is cut into 256-token blocks; within
a block, query i attends to keys j <= i of the same block with weight exp(-s (i - j)) q_i .
k_j, no softmax: o_i = sum_j exp(-s (i - j)) (q_i . k_j) v_j.  The later launches add the
earlier blocks through a running K^T V state; this one's output is the intra-block part,
[batch, heads, seqlen, e] in the spec's dtype."""

from __future__ import annotations

import torch

BLOCK = 256  # the diagonal block of vLLM's lightning attention (BLOCK in its forward)


def slopes(heads: int, total_heads: int = 64) -> torch.Tensor:
    """MiniMax-Text-01's decay rates (ALiBi's slopes over its 64 heads, first layer), for
    the first `heads` of them (one tensor-parallel rank's share)."""
    return 2.0 ** (-8.0 * (torch.arange(heads, dtype=torch.float64) + 1) / total_heads)


def make_inputs(
    batch: int, heads: int, seqlen: int, d: int, e: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit-normal q, k and v, q scaled by d^-1/2 (so q . k is about unit size); the heads'
    decay rates from MiniMax-Text-01's slopes, fp32."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(batch, heads, seqlen, d, generator=gen) * d**-0.5
    k = torch.randn(batch, heads, seqlen, d, generator=gen)
    v = torch.randn(batch, heads, seqlen, e, generator=gen)
    s = slopes(heads).float()
    return (
        q.to(dtype=dtype, device=device),
        k.to(dtype=dtype, device=device),
        v.to(dtype=dtype, device=device),
        s.to(device),
    )


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, s: torch.Tensor) -> torch.Tensor:
    """Block by block in fp64: the causal decay mask times Q K^T, times V."""
    b, h, n, _ = q.shape
    out = torch.empty(b, h, n, v.shape[-1], dtype=torch.float64, device=q.device)
    rate = s.double().view(1, h, 1, 1)
    for start in range(0, n, BLOCK):
        stop = min(start + BLOCK, n)
        idx = torch.arange(stop - start, device=q.device, dtype=torch.float64)
        diff = idx[:, None] - idx[None, :]
        decay = torch.where(diff >= 0, torch.exp(-rate * diff.clamp(min=0)), 0.0)
        qk = q[:, :, start:stop].double() @ k[:, :, start:stop].double().transpose(-1, -2)
        out[:, :, start:stop] = (qk * decay) @ v[:, :, start:stop].double()
    return out.to(q.dtype)


def torch_lightning_diag(
    q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, s: torch.Tensor
) -> torch.Tensor:
    """The same by torch in fp32 over all blocks at once: the sequence padded to whole
    blocks, one batched Q K^T, the decay mask, one batched product with V."""
    b, h, n, _ = q.shape
    e = v.shape[-1]
    nb = -(-n // BLOCK)
    pad = nb * BLOCK - n

    def blocks(x: torch.Tensor) -> torch.Tensor:
        x = torch.nn.functional.pad(x.float(), (0, 0, 0, pad))
        return x.view(b, h, nb, BLOCK, x.shape[-1])

    idx = torch.arange(BLOCK, device=q.device, dtype=torch.float32)
    diff = idx[:, None] - idx[None, :]
    decay = torch.where(
        diff >= 0, torch.exp(-s.float().view(1, h, 1, 1, 1) * diff.clamp(min=0)), 0.0
    )
    qk = blocks(q) @ blocks(k).transpose(-1, -2)
    out = (qk * decay) @ blocks(v)
    return out.view(b, h, nb * BLOCK, e)[:, :, :n].to(q.dtype)
