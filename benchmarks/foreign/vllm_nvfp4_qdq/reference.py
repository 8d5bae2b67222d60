"""vLLM's NVFP4 activation quantize-dequantize (the `_nvfp4_quant_dequant_kernel` launch of
`ref_nvfp4_quant_dequant` on CUDA, the activation step of vLLM's NVFP4 emulation): inputs,
reference, torch baseline.

x is [tokens, hidden] in the spec's dtype; global_scale is one fp32 value (the layer's
input_global_scale_inv, 448 x 6 / the calibrated activation maximum).  The output is x
rounded to NVFP4 (16-element groups, an e4m3 scale per group under the global scale, E2M1
values) and back, in x's dtype."""

from __future__ import annotations

import torch

GROUP = 16
E2M1 = torch.tensor([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], dtype=torch.float64)


def make_inputs(
    tokens: int, hidden: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor, torch.Tensor]:
    """Activations with a few large outlier channels (as LLM activations have), one group
    of the first row all zero (a zero scale), and the global scale calibrated on them."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen)
    outliers = torch.randperm(hidden, generator=gen)[: max(1, hidden // 256)]
    x[:, outliers] *= 20.0
    x[0, GROUP : 2 * GROUP] = 0.0
    x = x.to(dtype)
    global_scale = torch.tensor([448.0 * 6.0 / float(x.float().abs().max())], dtype=torch.float32)
    return x.to(device), global_scale.to(device)


def _nearest_e2m1(v: torch.Tensor) -> torch.Tensor:
    """Each value (|v| <= 6) to the nearest E2M1 value, halfway cases to the even code."""
    mag = v.abs().double()
    dist = (mag[..., None] - E2M1.to(v.device)).abs()
    best = dist.min(dim=-1, keepdim=True).values
    # among the nearest (at most two), the even code: first even index attaining the min
    codes = torch.arange(8, device=v.device)
    tie_rank = torch.where(dist == best, (codes % 2) * 8 + codes, torch.full_like(codes, 99))
    idx = tie_rank.argmin(dim=-1)
    return (E2M1.to(v.device)[idx] * torch.sign(v.double())).to(torch.float32)


def reference(x: torch.Tensor, global_scale: torch.Tensor) -> torch.Tensor:
    """Group by group on the CPU: fp32 scale, torch's e4m3 rounding of it, the nearest E2M1
    value of each scaled element by distance, back in x's dtype."""
    rows, k = x.shape
    xf = x.float().cpu().reshape(rows, k // GROUP, GROUP)
    gs = global_scale.float().cpu().reshape(())
    scale = (gs * (xf.abs().amax(dim=-1) * torch.tensor(1.0 / 6.0))).clamp(-448.0, 448.0)
    scale = scale.to(torch.float8_e4m3fn).float()
    out_scale = torch.where(scale == 0.0, torch.zeros_like(scale), gs / scale)[..., None]
    q = _nearest_e2m1((xf * out_scale).clamp(-6.0, 6.0))
    out = q * (scale / gs)[..., None]
    return out.reshape(rows, k).to(x.dtype).to(x.device)


def torch_nvfp4_quant_dequant(x: torch.Tensor, global_scale: torch.Tensor) -> torch.Tensor:
    """vLLM's own torch path (ref_nvfp4_quant then the dequantization, as it runs off
    CUDA), by torch ops on the device: group amax, e4m3 scale, the E2M1 rounding by
    bucketize over the halfway points, then back."""
    rows, k = x.shape
    xf = x.float().reshape(rows, k // GROUP, GROUP)
    gs = global_scale.float().reshape(())
    scale = (gs * (xf.abs().amax(dim=-1) / 6.0)).clamp(-448.0, 448.0)
    scale = scale.to(torch.float8_e4m3fn).float()
    out_scale = torch.where(scale == 0.0, torch.zeros_like(scale), gs / scale)[..., None]
    v = (xf * out_scale).clamp(-6.0, 6.0)
    grid = E2M1.float().to(x.device)
    mids = torch.tensor([0.25, 0.75, 1.25, 1.75, 2.5, 3.5, 5.0], device=x.device)
    mag = v.abs()
    idx = torch.bucketize(mag, mids)  # a value at a midpoint goes to the lower code
    up = torch.isin(mag, mids[torch.tensor([1, 3, 5], device=x.device)])  # to the even one
    q = grid[idx + up.long()] * torch.sign(v)
    return (q * (scale / gs)[..., None]).reshape(rows, k).to(x.dtype)
