"""SGLang's DP-attention token copy (`memcpy_triton(global_tokens, local_tokens, 0,
local_start_pos, local_num_tokens, False)` in `_dp_gather_via_all_reduce`): inputs,
reference, torch baseline.

global_tokens is [ranks * tokens, hidden] in the spec's dtype, zero-filled as SGLang does
before the copy; local_tokens [tokens, hidden] are this rank's rows; start and count are
1-element int64 tensors on the device (the rank's first global row and its row count).  The
output is the global buffer with the local rows copied to rows start .. start + count."""

from __future__ import annotations

import torch


def make_inputs(
    ranks: int, tokens: int, hidden: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Normal hidden states for the rank, a zeroed global buffer, and the last rank's start
    and count (as SGLang keeps them, int64 on the device)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    local = torch.randn(tokens, hidden, generator=gen).to(dtype)
    global_tokens = torch.zeros(ranks * tokens, hidden, dtype=dtype)
    start = torch.tensor([(ranks - 1) * tokens], dtype=torch.int64)
    count = torch.tensor([tokens], dtype=torch.int64)
    return (
        global_tokens.to(device),
        local.to(device),
        start.to(device),
        count.to(device),
    )


def reference(
    global_tokens: torch.Tensor, local_tokens: torch.Tensor, start: torch.Tensor,
    count: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """On a copy, by row indexing."""
    out = global_tokens.clone()
    s, n = int(start[0]), int(count[0])
    out[s : s + n] = local_tokens[:n]
    return out


def torch_copy(
    global_tokens: torch.Tensor, local_tokens: torch.Tensor, start: torch.Tensor,
    count: torch.Tensor,
) -> torch.Tensor:  # fmt: skip
    """torch's copy_ into the slice, in place."""
    s, n = int(start[0]), int(count[0])
    global_tokens[s : s + n].copy_(local_tokens[:n])
    return global_tokens
