"""Per-token-group fp8 (e4m3) quantization of activations (SGLang's
`per_token_group_quant_fp8`): inputs, fp32 reference, torch baseline.  Outputs: the e4m3
rows, each group of `group` columns multiplied by 1 / scale, clamped to +-448 and cast
(round to nearest even), and the fp32 scales [tokens, hidden / group], absmax / 448 with
absmax at least 1e-10."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn


def make_inputs(
    rows: int, hidden: int, group: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """Activation rows with a few outlier channels (so groups' scales differ), the group."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(rows, hidden, generator=gen)
    outliers = torch.randint(0, hidden, (max(1, hidden // 256),), generator=gen)
    x[:, outliers] *= 20.0
    return x.to(dtype=dtype, device=device), group


def _quantize(x: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    info = torch.finfo(FP8)
    rows, hidden = x.shape
    xf = x.float().view(rows, hidden // group, group)
    scales = xf.abs().amax(dim=-1, keepdim=True).clamp_min(1e-10) / info.max
    q = (xf * (1.0 / scales)).clamp(info.min, info.max).to(FP8)
    return q.view(rows, hidden), scales.view(rows, hidden // group)


def reference(x: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    return _quantize(x, group)


def torch_group_quant(x: torch.Tensor, group: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The same quantization in torch's kernels (abs, amax, scale, clamp, cast)."""
    return _quantize(x, group)
