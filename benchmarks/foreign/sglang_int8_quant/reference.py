"""Per-token symmetric int8 quantization of activations (SGLang's `per_token_quant_int8`):
inputs, fp32 reference, torch baseline.  Outputs: the int8 rows, round(x * 127 / absmax)
with ties away from zero (libdevice's round), and the fp32 scale absmax / 127 per row
([tokens, 1]); absmax is clamped below at 1e-10."""

from __future__ import annotations

import torch


def make_inputs(
    rows: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """Activation rows with a few outlier channels (as LLM activations have), so rows'
    scales differ."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, hidden, generator=gen)
    outliers = torch.randint(0, hidden, (max(1, hidden // 512),), generator=gen)
    x[:, outliers] *= 20.0
    return (x.to(dtype=dtype, device=device),)


def _quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    xf = x.float()
    absmax = xf.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10)
    y = xf * (127 / absmax)
    q = torch.sign(y) * torch.floor(y.abs() + 0.5)
    return q.to(torch.int8), absmax / 127


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _quantize(x)


def torch_per_token_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same quantization in torch's kernels (abs, amax, scale, round, cast)."""
    return _quantize(x)
