"""vLLM's multi-LoRA shrink (`lora_shrink`, as a LoRA-wrapped linear layer calls it with
scale 1.0): inputs, fp32 reference, torch baseline.

x is [tokens, hidden] in the spec's dtype; lora_a is [slices, loras, rank, hidden] (one A
matrix per output slice of the layer and per adapter slot, as vLLM stacks them); mapping is
the int32 adapter of each token.  The output is fp32 [slices, tokens, rank]: for slice s
and token t, scale * (x[t] @ lora_a[s, mapping[t]]^T)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, hidden: int, rank: int, loras: int, slices: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:  # fmt: skip
    """Unit-variance hidden states, A matrices at Kaiming-uniform scale (as PEFT initializes
    them), every adapter slot in use: the tokens dealt round-robin to the adapters, then
    shuffled (requests of different adapters interleave in a batch)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen)
    bound = 1.0 / hidden**0.5
    lora_a = (torch.rand(slices, loras, rank, hidden, generator=gen) * 2 - 1) * bound
    mapping = (torch.arange(tokens) % loras)[torch.randperm(tokens, generator=gen)]
    return (
        x.to(dtype=dtype, device=device),
        lora_a.to(dtype=dtype, device=device),
        mapping.to(dtype=torch.int32, device=device),
        1.0,
    )


def reference(
    x: torch.Tensor, lora_a: torch.Tensor, mapping: torch.Tensor, scale: float
) -> torch.Tensor:
    """Per token, its adapter's A matrices gathered and applied in fp32 (no grouping)."""
    slices, _, rank, _ = lora_a.shape
    out = torch.zeros(slices, x.shape[0], rank, dtype=torch.float32, device=x.device)
    ids = mapping.long()
    for s in range(slices):
        for a in ids.unique().tolist():
            rows = (ids == a).nonzero().squeeze(1)
            out[s, rows] = x[rows].float() @ lora_a[s, a].float().t() * scale
    return out


def torch_lora_shrink(
    x: torch.Tensor, lora_a: torch.Tensor, mapping: torch.Tensor, scale: float
) -> torch.Tensor:
    """The same projections by torch: the tokens sorted by adapter, one matmul per (slice,
    adapter) over its contiguous rows in the input dtype (the counts read back to the host
    once), scattered back, fp32 out."""
    slices, loras, rank, _ = lora_a.shape
    order = torch.argsort(mapping, stable=True)
    counts = torch.bincount(mapping.long(), minlength=loras).tolist()
    xs = x[order]
    out = torch.empty(slices, x.shape[0], rank, dtype=torch.float32, device=x.device)
    for s in range(slices):
        parts = [
            xs[i : i + n] @ lora_a[s, a].t()
            for a, (i, n) in enumerate(zip(_starts(counts), counts, strict=True))
            if n
        ]
        out[s, order] = torch.cat(parts).float() * scale
    return out


def _starts(counts: list[int]) -> list[int]:
    starts, at = [], 0
    for n in counts:
        starts.append(at)
        at += n
    return starts
