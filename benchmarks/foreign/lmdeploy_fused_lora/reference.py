"""LMDeploy's fused LoRA (`fused_lora`, its PyTorch engine's Triton LoRA, as
`TritonLoRAImpl.forward` runs it after a LoRA-wrapped linear whose base output is
contiguous): inputs, fp32 reference, torch baseline.

A batch of `tokens` tokens from `seqs` requests of equal length (the last takes the rest),
packed one after the other, request i served by adapter i % loras.  x is the layer's input
[tokens, hidden] in the spec's dtype; the adapters' A's are stacked by rank rows into one
[loras x rank, hidden] matrix and their B's into one [loras x rank, n] (adapter a's rows at
a x rank, as LMDeploy's adapter manager packs them, every adapter at the full rank); each
adapter has an fp32 scaling (alpha / rank: 2, 1, 0.5, 2, ...); base is the linear's own
output [tokens, n], which the kernel adds into (cum).  The output is, on token t, base[t]
+ scaling[a_t] x (x[t] @ A_a^T) @ B_a, rounded to the dtype."""

from __future__ import annotations

import torch

__all__ = ["make_inputs", "reference", "torch_fused_lora"]

SCALINGS = (2.0, 1.0, 0.5)


def make_inputs(
    tokens: int, seqs: int, loras: int, rank: int, hidden: int, n: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[object, ...]:  # fmt: skip
    """(x, lora_a, lora_b, base, scalings fp32, token_lora int64, seqs, rank): x and base at
    unit scale (a normed hidden state, a linear's output), A at 1 / sqrt(hidden) and B at
    1 / sqrt(rank) (products of unit scale), drawn on the device."""
    if seqs > tokens:
        raise ValueError("seqs must not exceed tokens")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def draw(*shape: int, scale: float = 1.0) -> torch.Tensor:
        t = torch.randn(*shape, generator=gen, device=device, dtype=torch.float32) * scale
        return t.to(dtype).contiguous()

    x = draw(tokens, hidden)
    lora_a = draw(loras * rank, hidden, scale=hidden**-0.5)
    lora_b = draw(loras * rank, n, scale=rank**-0.5)
    base = draw(tokens, n)
    scalings = torch.tensor(
        [SCALINGS[a % len(SCALINGS)] for a in range(loras)], dtype=torch.float32, device=device
    )
    per = tokens // seqs
    lens = [per] * (seqs - 1) + [tokens - per * (seqs - 1)]
    token_lora = torch.cat(
        [torch.full((ln,), i % loras, dtype=torch.int64) for i, ln in enumerate(lens)]
    ).to(device)
    return x, lora_a, lora_b, base, scalings, token_lora, seqs, rank


def _fused_lora(
    x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor,
    scalings: torch.Tensor, token_lora: torch.Tensor, rank: int, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    out = base.to(acc).clone()
    for a in range(scalings.numel()):
        rows = (token_lora == a).nonzero().squeeze(1)
        if rows.numel():
            la = lora_a[a * rank : (a + 1) * rank].to(acc)
            lb = lora_b[a * rank : (a + 1) * rank].to(acc)
            out[rows] += (x[rows].to(acc) @ la.T * scalings[a].to(acc)) @ lb
    return out.to(x.dtype)


def reference(
    x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor,
    scalings: torch.Tensor, token_lora: torch.Tensor, seqs: int, rank: int,
) -> torch.Tensor:  # fmt: skip
    """In fp32, rounded to the dtype once."""
    return _fused_lora(x, lora_a, lora_b, base, scalings, token_lora, rank, torch.float32)


def torch_fused_lora(
    x: torch.Tensor, lora_a: torch.Tensor, lora_b: torch.Tensor, base: torch.Tensor,
    scalings: torch.Tensor, token_lora: torch.Tensor, seqs: int, rank: int,
) -> torch.Tensor:  # fmt: skip
    """The same by torch: per adapter, its tokens' rows of x times its A^T, scaled, times
    its B, added to the base output, in the input dtype (the unfused shrink and expand a
    PEFT-style LoRA layer runs)."""
    return _fused_lora(x, lora_a, lora_b, base, scalings, token_lora, rank, x.dtype)
