"""Token embedding lookup (a gather of table rows by token id) for Liger's kernel: inputs,
reference, torch baseline.  The table is [vocab, dim] in the model dtype, the token ids
[tokens] int64; the output is [tokens, dim], the rows copied exactly."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    tokens: int,
    vocab: int,
    dim: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """A randn table (0.02 scale, as models initialise it) and uniformly random token ids,
    drawn on the target device: a real table is 1-2 GB, which the CPU would take seconds to
    fill on every profiling run."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    table = torch.randn(vocab, dim, generator=gen, device=device, dtype=dtype).mul_(0.02)
    ids = torch.randint(0, vocab, (tokens,), generator=gen, device=device)
    return table, ids


def reference(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    return table.float()[ids].to(table.dtype)


def torch_embedding(table: torch.Tensor, ids: torch.Tensor) -> torch.Tensor:
    """torch's F.embedding (one gather kernel), as nn.Embedding calls it."""
    return F.embedding(ids, table)
