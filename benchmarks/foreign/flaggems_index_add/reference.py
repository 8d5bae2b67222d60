"""FlagGems' index_add over dim 0 (`index_add(inp, 0, index, src)`, a rank-2 source):
inputs, reference, torch baseline.

The MoE combine of Hugging Face transformers' eager MoE blocks (Mixtral, Qwen2-MoE,
Qwen3-MoE): each expert's output rows are added into the layer's output at the rows of the
tokens routed to it, `final_hidden_states.index_add_(0, top_x, expert_out)`.  inp is the
layer's output so far [tokens, hidden], index the tokens routed to one expert (distinct,
ascending, as `torch.where` gives them), src that expert's weighted output [rows, hidden];
all but the index in the spec's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    rows: int,
    hidden: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """The output so far (normal, scaled by 0.5), `rows` distinct tokens of `tokens` drawn
    at random and sorted (int64), the expert's output (normal, scaled by 0.5)."""
    if rows > tokens:
        raise ValueError("an expert takes at most every token once")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    inp = torch.randn(tokens, hidden, generator=gen) * 0.5
    index = torch.randperm(tokens, generator=gen)[:rows].sort().values
    src = torch.randn(rows, hidden, generator=gen) * 0.5
    return (
        inp.to(dtype=dtype, device=device), index.to(device),
        src.to(dtype=dtype, device=device),
    )  # fmt: skip


def reference(inp: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """Row by row in fp32 (each index distinct: one sum per element), then rounded to the
    input's dtype."""
    out = inp.float().clone()
    out[index] = out[index] + src.float()
    return out.to(inp.dtype)


def torch_index_add(inp: torch.Tensor, index: torch.Tensor, src: torch.Tensor) -> torch.Tensor:
    """torch.index_add."""
    return torch.index_add(inp, 0, index, src)
