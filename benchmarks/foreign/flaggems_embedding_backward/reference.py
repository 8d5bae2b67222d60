"""FlagGems' embedding backward (the table's gradient from the looked-up rows'
gradients): inputs, fp32 reference, torch baseline.

grad_output is [tokens, hidden] in the spec's dtype, indices [tokens] int64 (token ids in
[0, vocab)); the output is the [vocab, hidden] gradient of the embedding table in the
dtype: row v is the sum of grad_output's rows whose token is v, zero for tokens unseen."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, vocab: int, hidden: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:  # fmt: skip
    """Gradients of a standard normal's scale 1e-2; token ids Zipf-like (a word's rank r
    drawn with weight 1 / (r + 1), ranks shuffled over the vocabulary), so frequent tokens
    repeat many times and their rows take many atomic adds, as in text."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    go = 1e-2 * torch.randn(tokens, hidden, generator=gen)
    weights = 1.0 / torch.arange(1, vocab + 1, dtype=torch.float64)
    ranks = torch.multinomial(weights, tokens, replacement=True, generator=gen)
    ids = torch.randperm(vocab, generator=gen)[ranks]
    return go.to(dtype=dtype, device=device), ids.to(device), vocab


def reference(grad_output: torch.Tensor, indices: torch.Tensor, vocab: int) -> torch.Tensor:
    """An fp64 index_add of the rows, independent of the kernel's atomics."""
    gw = torch.zeros(vocab, grad_output.shape[1], dtype=torch.float64, device=grad_output.device)
    gw.index_add_(0, indices, grad_output.double())
    return gw.to(grad_output.dtype)


def torch_embedding_backward(
    grad_output: torch.Tensor, indices: torch.Tensor, vocab: int
) -> torch.Tensor:
    """The same gradient by torch (aten's embedding_dense_backward, what nn.Embedding's
    backward calls: no padding index, no frequency scaling)."""
    return torch.ops.aten.embedding_dense_backward(grad_output, indices, vocab, -1, False)
