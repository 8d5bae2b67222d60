"""SGLang's chunked-SGMV LoRA expand (`chunked_sgmv_lora_expand_forward`, the csgmv LoRA
backend's B product, as its fused QKV and gate-up LoRA layers call it with the base
layer's output): inputs, fp32 reference, torch baseline.

A batch of `tokens` tokens from `seqs` requests of equal length (the last takes the rest),
request i served by adapter i % loras.  x is the shrink's output [tokens, slices * rank] in
the spec's dtype (slice j's rank columns at j * rank); weights are the adapters' stacked B
matrices [loras, out, rank] with out = first_out + (slices - 1) * other_out (the slices'
output widths: q, k, v of a fused QKV projection, gate and up of a gate-up one);
base is the base layer's output [tokens, out], which the kernel adds to in place.  Every
adapter has the full rank; each has its own scaling (alpha / rank).  The output is base
with, on slice j's columns of token t,

    scaling[a_t] * x[t, j * rank : (j + 1) * rank] @ weights[a_t, slice j's rows, :]^T

rounded to the dtype before it is added (as the kernel rounds its fp32 sum)."""

from __future__ import annotations

import torch

SCALINGS = (2.0, 1.0, 0.5, 0.25)  # alpha / rank of the adapters, in turn


def slice_widths(slices: int, first_out: int, other_out: int) -> list[int]:
    """The slices' output widths: the first, then the others alike (SGLang's kernel takes
    at most three)."""
    if not 1 <= slices <= 3:
        raise ValueError("one to three slices")
    return [first_out] + [other_out] * (slices - 1)


def token_loras(tokens: int, seqs: int, loras: int) -> torch.Tensor:
    """The adapter of every token: `seqs` equal requests (the last takes the rest), request
    i on adapter i % loras."""
    per = max(1, tokens // seqs)
    req = (torch.arange(tokens) // per).clamp_max(seqs - 1)
    return (req % loras).to(torch.int32)


def make_inputs(
    tokens: int, seqs: int, loras: int, rank: int, slices: int, first_out: int, other_out: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(x, weights, base, token_lora int32, lora_ranks int32, scalings fp32,
    slice_offsets int32): x at unit scale (a shrink output), weights at 1 / sqrt(rank),
    base at unit scale."""
    widths = slice_widths(slices, first_out, other_out)
    out = sum(widths)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, len(widths) * rank, generator=gen)
    weights = torch.randn(loras, out, rank, generator=gen) * rank**-0.5
    base = torch.randn(tokens, out, generator=gen)
    ranks = torch.full((loras,), rank, dtype=torch.int32)
    scalings = torch.tensor([SCALINGS[i % len(SCALINGS)] for i in range(loras)])
    offsets = torch.tensor([0, *torch.tensor(widths).cumsum(0).tolist()], dtype=torch.int32)
    return (
        x.to(dtype=dtype, device=device).contiguous(),
        weights.to(dtype=dtype, device=device).contiguous(),
        base.to(dtype=dtype, device=device).contiguous(),
        token_loras(tokens, seqs, loras).to(device),
        ranks.to(device),
        scalings.to(device),
        offsets.to(device),
    )


def _expand(
    x: torch.Tensor, weights: torch.Tensor, base: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, scalings: torch.Tensor, slice_offsets: torch.Tensor,
    acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    rank = weights.shape[2]
    offsets = slice_offsets.tolist()
    delta = torch.zeros(base.shape, dtype=acc, device=base.device)
    for a in range(weights.shape[0]):
        rows = (token_lora == a).nonzero().squeeze(1)
        if rows.numel() == 0 or int(lora_ranks[a]) == 0:
            continue
        w = weights[a].to(acc)  # [out, rank]
        for j in range(len(offsets) - 1):
            lo, hi = offsets[j], offsets[j + 1]
            xs = x[rows, j * rank : (j + 1) * rank].to(acc)
            delta[rows, lo:hi] = (xs @ w[lo:hi].T) * scalings[a].to(acc)
    return (base.float() + delta.to(base.dtype).float()).to(base.dtype)


def reference(*inputs: torch.Tensor) -> torch.Tensor:
    """In fp32, the LoRA term rounded to the dtype, added to the base in fp32, rounded."""
    return _expand(*inputs, torch.float32)


def torch_lora_expand(*inputs: torch.Tensor) -> torch.Tensor:
    """The same by torch (per adapter and slice, its tokens' rows times its B^T in the input
    dtype), written into the base in place as SGLang's kernel does."""
    x, base = inputs[0], inputs[2]
    out = _expand(*inputs, x.dtype)
    return base.copy_(out)
