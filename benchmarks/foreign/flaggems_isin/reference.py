"""FlagGems' isin by binary search (token ids checked against a large id set): inputs,
reference, torch baseline.

ids is [tokens] int64 (token ids of Llama-3.1-8B's 128,256-token vocabulary), id_set is
[set_size] int64 distinct ids in no order (a banned-token or allowed-vocabulary list as a
user gives it), both whatever the spec's dtype; the output is the [tokens] bool mask of
the ids found in the set."""

from __future__ import annotations

import torch

VOCAB = 128256  # Llama-3.1-8B


def make_inputs(
    tokens: int, set_size: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """A random set of distinct ids and ids drawn from the vocabulary (each in the set with
    probability set_size / vocabulary, about a quarter: the vocabulary is cut to 4 x the
    set where the set is smaller than a quarter of Llama's)."""
    del dtype  # int64 ids whatever the dtype
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    vocab = min(VOCAB, 4 * set_size)
    id_set = torch.randperm(vocab, generator=gen)[:set_size]
    ids = torch.randint(0, vocab, (tokens,), generator=gen)
    return ids.to(device), id_set.to(device)


def reference(ids: torch.Tensor, id_set: torch.Tensor) -> torch.Tensor:
    """Membership through a dense table over the vocabulary (no search, no sort)."""
    size = int(max(int(ids.max()), int(id_set.max()))) + 1
    table = torch.zeros(size, dtype=torch.bool, device=ids.device)
    table[id_set] = True
    return table[ids]


def torch_isin(ids: torch.Tensor, id_set: torch.Tensor) -> torch.Tensor:
    """The same mask by torch.isin."""
    return torch.isin(ids, id_set)
