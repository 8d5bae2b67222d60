"""vLLM's causal depthwise conv1d prefill (`causal_conv1d_fn` with SiLU, as Qwen3-Next's
gated-delta-net layers call it): inputs, fp32 reference, torch baseline.

x is [tokens, dim] (the packed prompts' mixed q, k and v channels) in the spec's dtype,
weight [dim, width] (one short filter per channel), conv_states the pool of states, stored
[lines, width - 1, dim] as vLLM's cache holds them (line 0 is the null line); per sequence
its int32 bounds in query_start_loc, its int32 state line and whether it continues a cached
prefix.  Outputs: y [tokens, dim] with y[t, c] = silu(sum_j weight[c, j] * u[t + j, c]),
u being the sequence's inputs after width - 1 leading ones (its state line when it
continues a prefix, zeros otherwise); and the pool with each sequence's line replaced by
the last width - 1 rows of u."""

from __future__ import annotations

import itertools

import torch


def make_inputs(
    seqs: int, seqlen: int, dim: int, width: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """`seqs` prompts of `seqlen` tokens packed; unit-variance channels; filter weights at
    a depthwise conv's default init scale (1 / sqrt(width)); a pool of 2 * seqs + 1 state
    lines holding random states, each sequence on a random line past the null one, every
    other sequence (the odd ones) continuing a cached prefix."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = seqs * seqlen
    x = torch.randn(tokens, dim, generator=gen)
    bound = 1.0 / width**0.5
    weight = (torch.rand(dim, width, generator=gen) * 2 - 1) * bound
    states = torch.randn(2 * seqs + 1, width - 1, dim, generator=gen)
    lines = (torch.randperm(2 * seqs, generator=gen)[:seqs] + 1).to(torch.int32)
    bounds = torch.arange(0, tokens + 1, seqlen, dtype=torch.int32)
    initial = torch.arange(seqs) % 2 == 1
    return (
        x.to(dtype=dtype, device=device),
        weight.to(dtype=dtype, device=device),
        states.to(dtype=dtype, device=device),
        bounds.to(device),
        lines.to(device),
        initial.to(device),
    )


def reference(
    x: torch.Tensor, weight: torch.Tensor, conv_states: torch.Tensor,
    query_start_loc: torch.Tensor, cache_indices: torch.Tensor, has_initial_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Per sequence, the window sum over u in fp32 (the kernel's accumulator), then SiLU."""
    width = weight.shape[1]
    w = weight.float()
    y = torch.empty_like(x)
    states = conv_states.clone()
    bounds = itertools.pairwise(query_start_loc.tolist())
    for s, (start, end) in enumerate(bounds):
        line = int(cache_indices[s])
        if bool(has_initial_state[s]):
            prefix = conv_states[line].float()
        else:
            prefix = torch.zeros(width - 1, x.shape[1], device=x.device)
        u = torch.cat([prefix, x[start:end].float()])
        acc = sum(w[:, j] * u[j : j + end - start] for j in range(width))
        y[start:end] = torch.nn.functional.silu(acc).to(x.dtype)
        states[line] = u[-(width - 1) :].to(conv_states.dtype)
    return y, states


def torch_causal_conv1d(
    x: torch.Tensor, weight: torch.Tensor, conv_states: torch.Tensor,
    query_start_loc: torch.Tensor, cache_indices: torch.Tensor, has_initial_state: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same by torch on equal-length sequences: the prefixes (states or zeros)
    prepended, one grouped F.conv1d over [seqs, dim, width - 1 + seqlen], SiLU, and the
    last width - 1 rows written back to the pool in place."""
    seqs = cache_indices.numel()
    width = weight.shape[1]
    dim = x.shape[1]
    lines = cache_indices.long()
    keep = has_initial_state.view(seqs, 1, 1).to(x.dtype)
    prefix = conv_states[lines] * keep  # [seqs, width - 1, dim]
    u = torch.cat([prefix, x.view(seqs, -1, dim)], dim=1)  # [seqs, width - 1 + seqlen, dim]
    y = torch.nn.functional.conv1d(u.transpose(1, 2), weight.unsqueeze(1), groups=dim)
    conv_states[lines] = u[:, -(width - 1) :]
    return torch.nn.functional.silu(y).transpose(1, 2).reshape(-1, dim), conv_states
