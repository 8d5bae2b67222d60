"""SGLang's fused QKV LoRA B (`qkv_lora_b_fwd`, the triton LoRA backend's B product for a
fused QKV projection, called with the base layer's output): inputs, fp32 reference, torch
baseline.

A batch of `tokens` tokens from `seqs` requests of equal length (the last takes the rest),
each request one contiguous segment, request i on adapter i % loras.  x is the QKV shrink's
output [tokens, 3 * rank] in the spec's dtype (q's rank columns, then k's, then v's);
weights are the adapters' stacked B matrices [loras, q_out + 2 * kv_out, rank]; base is the
base QKV output [tokens, q_out + 2 * kv_out], which the kernel adds to in place.  Every
adapter has the full rank and its own scaling (alpha / rank).  The output is base with, on
slice j's columns (q, k, v) of token t,

    scaling[a_t] * x[t, j * rank : (j + 1) * rank] @ weights[a_t, slice j's rows, :]^T

rounded to the dtype before it is added (as the kernel rounds its fp32 sum)."""

from __future__ import annotations

import torch

SCALINGS = (2.0, 1.0, 0.5, 0.25)  # alpha / rank of the adapters, in turn


def seq_lens_of(tokens: int, seqs: int) -> list[int]:
    """`seqs` equal requests, the last taking the rest."""
    per = max(1, tokens // seqs)
    lens = [per] * (seqs - 1)
    return [*lens, tokens - sum(lens)]


def make_inputs(
    tokens: int, seqs: int, loras: int, rank: int, q_out: int, kv_out: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(x, weights, base, seg_lens int32, weight_indices int32, lora_ranks int32, scalings
    fp32, output_offset int32): x at unit scale (a shrink output), weights at 1 / sqrt(rank),
    base at unit scale, all drawn on the device."""
    if tokens < seqs:
        raise ValueError("at least one token per request")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    out = q_out + 2 * kv_out
    x = torch.randn(tokens, 3 * rank, generator=dev, device=device, dtype=dtype)
    weights = torch.randn(loras, out, rank, generator=dev, device=device, dtype=torch.float32)
    weights = (weights * rank**-0.5).to(dtype)
    base = torch.randn(tokens, out, generator=dev, device=device, dtype=dtype)
    lens = torch.tensor(seq_lens_of(tokens, seqs), dtype=torch.int32)
    w_idx = (torch.arange(seqs) % loras).to(torch.int32)
    ranks = torch.full((loras,), rank, dtype=torch.int32)
    scalings = torch.tensor([SCALINGS[i % len(SCALINGS)] for i in range(loras)])
    offsets = torch.tensor([0, q_out, q_out + kv_out, out], dtype=torch.int32)
    return (
        x.contiguous(),
        weights.contiguous(),
        base.contiguous(),
        lens.to(device),
        w_idx.to(device),
        ranks.to(device),
        scalings.to(device),
        offsets.to(device),
    )


def _qkv_b(
    x: torch.Tensor, weights: torch.Tensor, base: torch.Tensor, seg_lens: torch.Tensor,
    weight_indices: torch.Tensor, lora_ranks: torch.Tensor, scalings: torch.Tensor,
    output_offset: torch.Tensor, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    rank = weights.shape[2]
    offs = output_offset.tolist()
    delta = torch.zeros(base.shape, dtype=acc, device=base.device)
    start = 0
    for n, a in zip(seg_lens.tolist(), weight_indices.tolist(), strict=True):
        r = min(rank, int(lora_ranks[a]))
        if r > 0:
            w = weights[a].to(acc)
            for j in range(3):
                lo, hi = offs[j], offs[j + 1]
                xs = x[start : start + n, j * rank : j * rank + r].to(acc)
                delta[start : start + n, lo:hi] = (xs @ w[lo:hi, :r].T) * scalings[a].to(acc)
        start += n
    return (base.float() + delta.to(base.dtype).float()).to(base.dtype)


def reference(*inputs: torch.Tensor) -> torch.Tensor:
    """In fp32, the LoRA term rounded to the dtype, added to the base in fp32, rounded."""
    return _qkv_b(*inputs, torch.float32)


def torch_qkv_lora_b(*inputs: torch.Tensor) -> torch.Tensor:
    """The same by torch (per request and slice, its rows times its adapter's B^T in the
    input dtype), written into the base in place as SGLang's kernel does."""
    x, base = inputs[0], inputs[2]
    out = _qkv_b(*inputs, x.dtype)
    return base.copy_(out)
