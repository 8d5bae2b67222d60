"""vLLM's DFlash2 grouped convolution (`dflash2_grouped_conv`, as a DFlash2 draft layer's
`DFlashGroupedConv.prepare` calls it on its attention or MLP input): inputs, reference, torch
baseline.

x is the layer's normalised input [reqs * block, hidden] (each request's draft block of
`block` query rows: the bonus token and the mask tokens), base the layer's static filter of
one side [taps, hidden], and delta the per-token, per-group filter offsets of that side: a
strided view [rows, taps, groups] of the kernel projection's output reshaped to
[rows, 2, taps, groups] (side 0), as vLLM passes it.  out[r, c] = sum over the taps j with
j <= r mod block of (base[j, c] + delta[r, j, c // group]) * x[r - j, c]: a causal
depthwise convolution inside each draft block whose taps are shifted per token and group."""

from __future__ import annotations

import torch


def make_inputs(
    reqs: int,
    block: int,
    hidden: int,
    group: int,
    taps: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, int, int]:
    """Normal x, a base filter and projected offsets (standard deviation 0.5 each), as the
    layer passes them: (x, delta view, base, block, group)."""
    if hidden % group:
        raise ValueError(f"group={group} must divide hidden={hidden}")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    rows = reqs * block
    x = torch.randn(rows, hidden, generator=gen)
    base = torch.randn(2, taps, hidden, generator=gen) * 0.5
    coeffs = torch.randn(rows, 2 * taps * (hidden // group), generator=gen) * 0.5
    x = x.to(dtype=dtype, device=device)
    base = base.to(dtype=dtype, device=device)
    coeffs = coeffs.to(dtype=dtype, device=device).reshape(rows, 2, taps, hidden // group)
    return x, coeffs[:, 0], base[0], block, group


def reference(
    x: torch.Tensor, delta: torch.Tensor, base: torch.Tensor, block: int, group: int
) -> torch.Tensor:
    """The sum over taps in fp64, each tap's coefficient the base plus the group's offset,
    rows before the draft block's start skipped; rounded to x's dtype."""
    rows, hidden = x.shape
    taps = base.shape[0]
    xd = x.double().cpu()
    coef = base.double().cpu()[None] + delta.double().cpu().repeat_interleave(group, dim=2)
    pos = torch.arange(rows) % block
    out = torch.zeros(rows, hidden, dtype=torch.float64)
    for j in range(taps):
        shifted = torch.zeros_like(xd)
        shifted[j:] = xd[: rows - j]
        keep = (pos >= j).double()[:, None]
        out += coef[:, j] * shifted * keep
    return out.to(device=x.device, dtype=x.dtype)


def torch_grouped_conv(
    x: torch.Tensor, delta: torch.Tensor, base: torch.Tensor, block: int, group: int
) -> torch.Tensor:
    """vLLM's `_grouped_conv` off CUDA: the coefficients broadcast per group, then one
    shifted, masked product per tap (torch ops in the dtype)."""
    rows, hidden = x.shape
    taps = base.shape[0]
    groups = hidden // group
    blocks = x.unflatten(-1, (groups, group))
    coefficients = base.view(1, taps, groups, group) + delta.unsqueeze(-1)
    output = coefficients[:, 0] * blocks
    position = torch.arange(rows, device=x.device) % block
    for tap in range(1, taps):
        shifted = torch.nn.functional.pad(blocks[:-tap], (0, 0, 0, 0, tap, 0))
        output += coefficients[:, tap] * shifted * (position >= tap).view(-1, 1, 1)
    return output.flatten(-2)
