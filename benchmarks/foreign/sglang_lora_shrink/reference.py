"""SGLang's chunked-SGMV LoRA shrink (`chunked_sgmv_lora_shrink_forward`, the csgmv LoRA
backend's A product, as its fused QKV, gate-up and plain LoRA layers call it): inputs, fp32
reference, torch baseline.

A batch of `tokens` tokens from `seqs` requests of equal length (the last takes the rest),
request i served by adapter i % loras.  x is the layer's input [tokens, hidden] in the
spec's dtype; weights are the adapters' stacked A matrices [loras, slices * rank, hidden]
(slice j's rank rows at j * rank: q, k, v of a fused QKV projection share the input, so
their A's are stacked).  Every adapter has the full rank.  The output [tokens, slices *
rank] is, on token t, x[t] @ weights[a_t]^T, rounded to the dtype (the kernel's fp32 sum
rounded once).  The scaling is the expand's, not applied here."""

from __future__ import annotations

import torch

# The same requests on the same adapters as the expand's.
from foreign.sglang_lora_expand.reference import token_loras


def make_inputs(
    tokens: int, seqs: int, loras: int, rank: int, slices: int, hidden: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[object, ...]:  # fmt: skip
    """(x, weights, token_lora int32, lora_ranks int32, seqs, slices): x at unit scale (a
    normed hidden state), weights at 1 / sqrt(hidden) (a product of unit scale), drawn on
    the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen, device=device, dtype=torch.float32)
    weights = torch.randn(
        loras, slices * rank, hidden, generator=gen, device=device, dtype=torch.float32
    )
    weights *= hidden**-0.5
    ranks = torch.full((loras,), rank, dtype=torch.int32, device=device)
    return (
        x.to(dtype).contiguous(),
        weights.to(dtype).contiguous(),
        token_loras(tokens, seqs, loras).to(device),
        ranks,
        seqs,
        slices,
    )


def _shrink(
    x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor, acc: torch.dtype
) -> torch.Tensor:
    out = torch.zeros(x.shape[0], weights.shape[1], dtype=acc, device=x.device)
    for a in range(weights.shape[0]):
        rows = (token_lora == a).nonzero().squeeze(1)
        if rows.numel():
            out[rows] = x[rows].to(acc) @ weights[a].to(acc).T
    return out.to(x.dtype)


def reference(
    x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, seqs: int, slices: int,
) -> torch.Tensor:  # fmt: skip
    """In fp32, rounded to the dtype once."""
    return _shrink(x, weights, token_lora, torch.float32)


def torch_lora_shrink(
    x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, seqs: int, slices: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch: per adapter, its tokens' rows of x times its A^T in the input
    dtype."""
    return _shrink(x, weights, token_lora, x.dtype)
