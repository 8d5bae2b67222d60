"""vLLM's multi-LoRA expand (`lora_expand`, as `PunicaWrapperGPU.add_lora_linear` calls it
with `add_inputs=True` after the shrink): inputs, fp32 reference, torch baseline.

x is the shrink's fp32 buffer [slices, tokens, rank] (fp32 whatever the spec's dtype, as
vLLM allocates it); lora_b holds the slices' B matrices packed one after another in one
buffer of the spec's dtype, slice j's block a contiguous [loras, width_j, rank] (as vLLM's
per-slice `lora_b_stacked` tensors are), the widths `first_out` then `other_out` for each
later slice (q then k and v of a fused QKV projection, gate then up of a gate-up one); base
is the base layer's output [tokens, sum of widths], which the kernel adds to in place;
mapping is the int32 adapter of each token.  The output is base with, on slice j's columns
of token t,

    (x[j, t] rounded to the dtype) @ lora_b_j[mapping[t]]^T

rounded to the dtype before it is added (vLLM casts the fp32 buffer to the weights' dtype
before each tl.dot and rounds the fp32 sum before the add; the LoRA scaling is already in
the shrink's buffer)."""

from __future__ import annotations

import torch


def slice_widths(slices: int, first_out: int, other_out: int) -> list[int]:
    """The slices' output widths: the first, then the others alike."""
    if slices < 1:
        raise ValueError("at least one slice")
    return [first_out] + [other_out] * (slices - 1)


def split_weights(
    lora_b: torch.Tensor, loras: int, rank: int, widths: list[int]
) -> list[torch.Tensor]:
    """The per-slice [loras, width, rank] views of the packed buffer (each contiguous)."""
    views, at = [], 0
    for w in widths:
        n = loras * w * rank
        views.append(lora_b[at : at + n].view(loras, w, rank))
        at += n
    return views


def make_inputs(
    tokens: int, loras: int, rank: int, slices: int, first_out: int, other_out: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int]:  # fmt: skip
    """(x fp32, lora_b packed, base, mapping int32, first_out, other_out): x at the scale of
    a shrink output (unit), B matrices at 1 / sqrt(rank), base at unit scale; every adapter
    slot in use, the tokens dealt round-robin to the adapters, then shuffled (requests of
    different adapters interleave in a batch)."""
    widths = slice_widths(slices, first_out, other_out)
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(slices, tokens, rank, generator=gen)
    lora_b = torch.randn(loras * sum(widths) * rank, generator=gen) * rank**-0.5
    base = torch.randn(tokens, sum(widths), generator=gen)
    mapping = (torch.arange(tokens) % loras)[torch.randperm(tokens, generator=gen)]
    return (
        x.to(device=device),
        lora_b.to(dtype=dtype, device=device),
        base.to(dtype=dtype, device=device),
        mapping.to(dtype=torch.int32, device=device),
        first_out,
        other_out,
    )


def _expand(
    x: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor, mapping: torch.Tensor,
    first_out: int, other_out: int, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    slices, _, rank = x.shape
    widths = slice_widths(slices, first_out, other_out)
    loras = lora_b.numel() // (sum(widths) * rank)
    weights = split_weights(lora_b, loras, rank, widths)
    delta = torch.zeros(base.shape, dtype=acc, device=base.device)
    ids = mapping.long()
    lo = 0
    for j, w in enumerate(widths):
        for a in ids.unique().tolist():
            rows = (ids == a).nonzero().squeeze(1)
            xs = x[j, rows].to(lora_b.dtype).to(acc)
            delta[rows, lo : lo + w] = xs @ weights[j][a].to(acc).t()
        lo += w
    return (base.float() + delta.to(base.dtype).float()).to(base.dtype)


def reference(
    x: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor, mapping: torch.Tensor,
    first_out: int, other_out: int,
) -> torch.Tensor:  # fmt: skip
    """In fp32 (the buffer rounded to the dtype first), the LoRA term rounded to the dtype,
    added to the base in fp32, rounded."""
    return _expand(x, lora_b, base, mapping, first_out, other_out, torch.float32)


def torch_lora_expand(
    x: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor, mapping: torch.Tensor,
    first_out: int, other_out: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch (per slice and adapter, its tokens' rows times its B^T in the
    weights' dtype), written into the base in place as vLLM's kernel does."""
    out = _expand(x, lora_b, base, mapping, first_out, other_out, lora_b.dtype)
    return base.copy_(out)
