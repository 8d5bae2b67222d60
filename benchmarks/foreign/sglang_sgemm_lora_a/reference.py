"""SGLang's segmented LoRA A GEMM (`sgemm_lora_a_fwd`, the triton LoRA backend's A product,
as its fused QKV, gate-up and plain LoRA layers call it): inputs, fp32 reference, torch
baseline.

The inputs are the csgmv shrink's (`sglang_lora_shrink`), the same product by another
backend: a batch of `tokens` tokens from `seqs` requests of equal length (the last takes
the rest), request i served by adapter i % loras; x the layer's input [tokens, hidden] in
the spec's dtype, weights the adapters' stacked A matrices [loras, slices * rank, hidden],
every adapter at the full rank.  The output [tokens, slices * rank] is, on token t, x[t] @
weights[a_t]^T, rounded to the dtype (the kernel's fp32 sum rounded once).  The scaling is
the B kernel's, not applied here."""

from __future__ import annotations

import torch

from foreign.sglang_lora_shrink.reference import _shrink
from foreign.sglang_lora_shrink.reference import make_inputs as make_inputs

__all__ = ["make_inputs", "reference", "torch_sgemm_lora_a"]


def reference(
    x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, seqs: int, slices: int,
) -> torch.Tensor:  # fmt: skip
    """In fp32, rounded to the dtype once."""
    return _shrink(x, weights, token_lora, torch.float32)


def torch_sgemm_lora_a(
    x: torch.Tensor, weights: torch.Tensor, token_lora: torch.Tensor,
    lora_ranks: torch.Tensor, seqs: int, slices: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch: per adapter, its tokens' rows of x times its A^T in the input
    dtype."""
    return _shrink(x, weights, token_lora, x.dtype)
