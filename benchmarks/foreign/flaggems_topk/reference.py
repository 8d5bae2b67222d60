"""FlagGems' top-k over the last axis (largest, sorted): inputs, reference, torch baseline.

x is [rows, columns] in the spec's dtype (a batch of next-token logits over a vocabulary);
the outputs are the k largest values of each row in descending order, in the dtype, and
their columns as int64.  Picking values is exact, so the check is exact: the inputs have no
ties among the values that can reach the top k (on a tie the order of equal values, and so
their columns, is not defined for either side)."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, columns: int, k: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Logit-like rows: standard normal values clamped to 4 (ties among them are harmless),
    and 2k columns per row, drawn at random, that stand out with distinct values 5 + i / 8
    (exact in bf16 and fp16 up to k = 80), so the top k is unique."""
    if 2 * k > columns or k > 80:
        raise ValueError("need 2k <= columns and k <= 80")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, columns, generator=gen).clamp_(max=4.0)
    for r in range(rows):
        cols = torch.randperm(columns, generator=gen)[: 2 * k]
        x[r, cols] = 5.0 + torch.randperm(2 * k, generator=gen).float() / 8.0
    return x.to(dtype=dtype, device=device), k


def reference(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The k largest by sorting the fp32 row (descending, stable), values back in the dtype."""
    vals, idx = torch.sort(x.float(), dim=-1, descending=True, stable=True)
    return vals[:, :k].to(x.dtype), idx[:, :k].contiguous()


def torch_topk(x: torch.Tensor, k: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The same selection by torch.topk in the input dtype."""
    vals, idx = torch.topk(x, k, dim=-1, largest=True, sorted=True)
    return vals, idx
