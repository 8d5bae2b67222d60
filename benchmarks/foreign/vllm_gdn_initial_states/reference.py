"""vLLM's GDN prefill initial-state gather (`gather_initial_states`, as
`QwenGatedDeltaNetAttention`'s prefill calls it for Qwen3-Next's and Qwen3.5's GDN layers
ahead of the chunked gated delta rule): inputs, reference, torch baseline.

state is the layer's SSM state pool [slots, v_heads, head_v, head_k] in the spec's dtype
(vLLM's mamba_ssm_cache_dtype "auto": the model's), one recurrent state per cache slot.
indices [sequences] int32 are the prefill sequences' state slots, has_initial_state
[sequences] bool whether a sequence continues a state (a chunked prefill's later chunk or a
prefix-cache hit) or starts fresh.  The output is [sequences, v_heads, head_v, head_k]: the
slot's state, or zeros."""

from __future__ import annotations

import torch


def make_inputs(
    seqs: int, slots: int, v_heads: int, head_k: int, head_v: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Normal values in every slot (the copy does not look at them), distinct slots drawn
    from the pool, and about half the sequences with an initial state (at least one with
    and one without when there are two).  Drawn on the device."""
    if seqs > slots:
        raise ValueError("each prefill sequence has its own slot: seqs <= slots")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    state = torch.randn(slots, v_heads, head_v, head_k, generator=gen, device=device).to(dtype)
    perm = torch.randperm(slots, generator=gen, device=device)
    indices = perm[:seqs].to(torch.int32)
    has = torch.rand(seqs, generator=gen, device=device) < 0.5
    if seqs >= 2:
        has[0], has[1] = True, False
    return state, indices, has


def reference(
    state: torch.Tensor, indices: torch.Tensor, has_initial_state: torch.Tensor
) -> torch.Tensor:
    """Indexing and a select: the slots' rows where a state exists, zeros elsewhere."""
    rows = state[indices.long()]
    keep = has_initial_state.view(-1, *([1] * (state.dim() - 1)))
    return torch.where(keep, rows, torch.zeros_like(rows))


def torch_gather(
    state: torch.Tensor, indices: torch.Tensor, has_initial_state: torch.Tensor
) -> torch.Tensor:
    """vLLM's former path by torch ops: an index_select of the slots' rows, then the fresh
    sequences' rows zeroed by a masked assignment (two launches and a boolean index)."""
    out = state.index_select(0, indices.long())
    out[~has_initial_state] = 0
    return out
