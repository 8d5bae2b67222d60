"""SGLang's per-tensor fp8 quantization for absorbed MLA (`per_tensor_quant_mla_fp8`, called
on DeepSeek-V3/R1 fp8 checkpoints before each batched fp8 GEMM with w_kc and w_vc): inputs,
fp32 reference, torch baseline.  The input is [heads, tokens, dim], the transposed view of a
contiguous [tokens, heads, dim] activation in the spec's dtype; the outputs are the e4m3
[heads, tokens, dim] contiguous copy and the one fp32 scale (absmax / 448)."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn


def make_inputs(
    tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:  # fmt: skip
    """Unit activations with a few per-head outliers (every seventh head scaled by 4, as
    per-head magnitudes differ), made [tokens, heads, dim] and passed transposed."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, heads, head_dim, generator=gen)
    x[:, ::7] *= 4.0
    return (x.to(dtype=dtype, device=device).transpose(0, 1),)


def _quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    info = torch.finfo(FP8)
    xf = x.float()
    scale = (xf.abs().amax().clamp_min(1e-12) / info.max).reshape(1)
    q = (xf * (1.0 / scale)).clamp(info.min, info.max).to(FP8).contiguous()
    return q, scale


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    return _quantize(x)


def torch_tensor_quant(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same quantization in torch's kernels (abs, amax, scale, clamp, cast, copy)."""
    return _quantize(x)
