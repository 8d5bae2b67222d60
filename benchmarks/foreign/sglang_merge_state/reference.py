"""Merging two partial attention results (SGLang's `merge_state`): inputs, fp32 reference,
torch baseline.  Each part is an output row per (token, head) and its natural-log
log-sum-exp; the merge weights each part by exp(lse_part) / (exp(lse_a) + exp(lse_b)) and
returns the merged rows (the inputs' dtype) and the merged LSE (fp32).  An LSE of +inf
marks an empty part (SGLang's convention), which then weighs nothing."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, heads: int, head_size: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """Two partial outputs (unit-scale rows) and their LSEs (a few units apart, so both
    parts weigh); the first token's prefix is empty (LSE +inf)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    shape = (tokens, heads, head_size)
    prefix_out = torch.randn(shape, generator=gen)
    suffix_out = torch.randn(shape, generator=gen)
    prefix_lse = 5.0 + 2.0 * torch.randn(tokens, heads, generator=gen)
    suffix_lse = 5.0 + 2.0 * torch.randn(tokens, heads, generator=gen)
    prefix_lse[0] = float("inf")
    return (
        prefix_out.to(dtype=dtype, device=device),
        prefix_lse.to(device=device),
        suffix_out.to(dtype=dtype, device=device),
        suffix_lse.to(device=device),
    )


def _merge(
    prefix_out: torch.Tensor, prefix_lse: torch.Tensor, suffix_out: torch.Tensor,
    suffix_lse: torch.Tensor, acc: torch.dtype,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    inf = torch.full_like(prefix_lse, float("inf"))
    p = torch.where(prefix_lse == inf, -inf, prefix_lse)
    s = torch.where(suffix_lse == inf, -inf, suffix_lse)
    lse = torch.logaddexp(p, s)
    wp = torch.exp(p - lse).unsqueeze(-1).to(acc)
    ws = torch.exp(s - lse).unsqueeze(-1).to(acc)
    out = prefix_out.to(acc) * wp + suffix_out.to(acc) * ws
    return out.to(prefix_out.dtype), lse


def reference(
    prefix_out: torch.Tensor, prefix_lse: torch.Tensor, suffix_out: torch.Tensor,
    suffix_lse: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    return _merge(prefix_out, prefix_lse, suffix_out, suffix_lse, torch.float32)


def torch_merge_state(
    prefix_out: torch.Tensor, prefix_lse: torch.Tensor, suffix_out: torch.Tensor,
    suffix_lse: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The same merge in element-wise torch kernels, the rows in the input dtype."""
    return _merge(prefix_out, prefix_lse, suffix_out, suffix_lse, prefix_out.dtype)
