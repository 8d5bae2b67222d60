"""SGLang's batch-invariant mean over one dimension (deterministic inference's
aten::mean.dim): inputs, reference, torch baseline.

SGLang's `mean_dim` views the input as [outer, reduced, inner] (the dimensions before the
reduced one, the reduced one, those after it) and writes [outer, inner] means in the input
dtype.  The trials reduce a leading or middle dimension, so the reduced elements of one
output are `inner` elements apart: DeepSeek-OCR's LayerNorm2d mean over the channels of an
NCHW feature map, Gemma 3n's mean over its four AltUp streams."""

from __future__ import annotations

import torch


def make_inputs(
    outer: int,
    reduced: int,
    inner: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:
    """A contiguous [outer, reduced, inner] tensor, N(0.5, 1) (a non-zero mean, so the
    relative error of the means is not measured against zero)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(outer, reduced, inner, generator=gen) + 0.5
    return (x.to(device=device, dtype=dtype),)


def reference(x: torch.Tensor) -> torch.Tensor:
    """The fp64 mean over the middle dimension, as fp32 [outer, inner]."""
    return x.double().mean(dim=1).float()


def torch_mean(x: torch.Tensor) -> torch.Tensor:
    """torch.mean over the dimension, as SGLang runs it without deterministic inference."""
    return torch.mean(x, dim=1)
