"""FlagGems' index_select along the last dimension (a target model's logits restricted to a
draft vocabulary): inputs, reference, torch baseline.

logits is [tokens, vocab] in the spec's dtype; draft_ids is the [draft_vocab] int64 list of
target-vocabulary ids that the draft vocabulary keeps, ascending (EAGLE-3's draft-to-target
map is sorted); the output is [tokens, draft_vocab], each row's logits at those ids."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    vocab: int,
    draft_vocab: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Normal logits; the draft ids a sorted random subset of the vocabulary, weighted
    towards low ids (BPE vocabularies put frequent tokens first, and EAGLE-3 keeps the
    most frequent)."""
    if draft_vocab > vocab:
        raise ValueError("the draft vocabulary is a subset of the vocabulary")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    logits = torch.randn(tokens, vocab, generator=gen)
    weight = 1.0 / (1.0 + torch.arange(vocab, dtype=torch.float64) / 1000.0)
    ids = torch.multinomial(weight, draft_vocab, replacement=False, generator=gen)
    ids = ids.sort().values.to(torch.int64)
    return logits.to(dtype).to(device), ids.to(device)


def reference(logits: torch.Tensor, draft_ids: torch.Tensor) -> torch.Tensor:
    """The selected columns by advanced indexing."""
    return logits[:, draft_ids]


def torch_index_select(logits: torch.Tensor, draft_ids: torch.Tensor) -> torch.Tensor:
    """The same columns by torch.index_select."""
    return torch.index_select(logits, -1, draft_ids)
