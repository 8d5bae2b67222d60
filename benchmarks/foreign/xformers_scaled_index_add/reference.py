"""xFormers' scaled index add (`scaled_index_add(x, index, source, scaling, alpha)`, the
forward: x[index] += alpha * scaling * source in place): inputs, reference, torch baseline.

DINOv2's stochastic-depth residual on its multi-crop (nested) path
(`drop_add_residual_stochastic_depth_list` through `add_residual`): each block's attention
and MLP branch runs on a random subset of the batch's crops, and the branch's output, scaled
by the LayerScale vector (ls1.gamma / ls2.gamma) and by batch / subset, is added back into the
kept crops' rows of the residual stream.  x is the residual stream [batch, tokens,
channels], index the kept crops (distinct, as `torch.randperm(b)[:subset]` gives them, in
that random order), source the branch's output on them [kept, tokens, channels], scaling
the LayerScale vector [channels], alpha batch / kept; all but the index in the spec's
dtype."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int,
    kept: int,
    tokens: int,
    channels: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """The residual stream (normal), `kept` distinct crops of `batch` in random order
    (int64, unsorted as DINOv2's randperm leaves them), the branch's output (normal), the
    LayerScale vector (uniform in [0.5, 1.5): trained, not its 1e-5 start, so that the sum
    is not x alone), alpha = batch / kept as DINOv2 passes it."""
    if kept > batch:
        raise ValueError("the kept subset is at most the batch")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, tokens, channels, generator=gen)
    index = torch.randperm(batch, generator=gen)[:kept]
    source = torch.randn(kept, tokens, channels, generator=gen)
    scaling = torch.rand(channels, generator=gen) + 0.5
    return (
        x.to(dtype=dtype, device=device), index.to(device),
        source.to(dtype=dtype, device=device), scaling.to(dtype=dtype, device=device),
        batch / kept,
    )  # fmt: skip


def reference(
    x: torch.Tensor, index: torch.Tensor, source: torch.Tensor, scaling: torch.Tensor,
    alpha: float,
) -> torch.Tensor:  # fmt: skip
    """In fp32 (each index distinct: one sum per element, alpha * scaling * source then
    added, the kernel's order), rounded to x's dtype once; x itself is left unchanged."""
    out = x.float().clone()
    out[index] = out[index] + alpha * scaling.float() * source.float()
    return out.to(x.dtype)


def torch_index_add(
    x: torch.Tensor, index: torch.Tensor, source: torch.Tensor, scaling: torch.Tensor,
    alpha: float,
) -> torch.Tensor:  # fmt: skip
    """torch.index_add of the scaled branch (DINOv2's path without xFormers: the scale
    multiply, then index_add into a copy of x, two kernels and an intermediate)."""
    return torch.index_add(x, 0, index, source * scaling, alpha=alpha)
