"""FLA's short-convolution backward (`causal_conv1d_bwd` for `ShortConvolution` with SiLU,
no bias, no cache state): inputs, fp32 reference, torch baseline.

The forward is y[t, c] = sum_w weight[c, w] x[t + w - (W - 1), c] (zero before the first
step), out = silu(y).  Given the output gradient dy, with g = dy silu'(y) = dy s (1 + y (1 -
s)), s = sigmoid(y): dx[t, c] = sum_w weight[c, w] g[t + W - 1 - w, c] (zero past the last
step) and dweight[c, w] = sum over the batch and t of g[t, c] x[t + w - (W - 1), c].  The
outputs are (dx [batch, T, D] in the dtype, dweight [D, W] in the filter's dtype)."""

from __future__ import annotations

import torch

__all__ = ["make_inputs", "reference", "torch_causal_conv1d_bwd"]


def make_inputs(
    batch: int, seqlen: int, channels: int, width: int,
    *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """(x, weight, y, dy): x and dy at unit scale (a projection's output, a gradient), the
    filter at 1 / sqrt(width) (nn.Conv1d's scale), and y, the pre-activation that FLA's
    backward recomputes with its forward kernel, computed here in fp32 from x and the filter
    and rounded to the dtype as that kernel stores it; drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))

    def draw(*shape: int, scale: float = 1.0) -> torch.Tensor:
        t = torch.randn(*shape, generator=gen, device=device, dtype=torch.float32) * scale
        return t.to(dtype).contiguous()

    x = draw(batch, seqlen, channels)
    weight = draw(channels, width, scale=width**-0.5)
    dy = draw(batch, seqlen, channels)
    y = _conv(x.float(), weight.float()).to(dtype).contiguous()
    return x, weight, y, dy


def _conv(x: torch.Tensor, weight: torch.Tensor) -> torch.Tensor:
    """The causal depthwise convolution in x's dtype: tap w reads the step W - 1 - w back."""
    w = weight.shape[1]
    seqlen = x.shape[1]
    out = torch.zeros_like(x)
    for tap in range(w):
        back = w - 1 - tap
        out[:, back:] += x[:, : seqlen - back] * weight[:, tap]
    return out


def _bwd(
    x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, dy: torch.Tensor, acc: torch.dtype
) -> tuple[torch.Tensor, torch.Tensor]:
    xa, wa, ya = x.to(acc), weight.to(acc), y.to(acc)
    s = torch.sigmoid(ya)
    g = dy.to(acc) * s * (1 + ya * (1 - s))
    width, seqlen = weight.shape[1], x.shape[1]
    dx = torch.zeros_like(xa)
    dw = torch.zeros(weight.shape, dtype=torch.float32, device=x.device)
    for tap in range(width):
        back = width - 1 - tap
        dx[:, : seqlen - back] += g[:, back:] * wa[:, tap]
        dw[:, tap] = (g[:, back:] * xa[:, : seqlen - back]).float().sum((0, 1))
    return dx.to(x.dtype), dw.to(weight.dtype)


def reference(
    x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, dy: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """In fp32, each output rounded to its dtype once."""
    return _bwd(x, weight, y, dy, torch.float32)


def torch_causal_conv1d_bwd(
    x: torch.Tensor, weight: torch.Tensor, y: torch.Tensor, dy: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor]:
    """The same by torch ops in the input dtype (SiLU's gradient, W shifted multiply-adds for
    dx, W shifted products summed in fp32 for the filter gradient): what an unfused
    backward of a causal depthwise conv1d runs."""
    return _bwd(x, weight, y, dy, x.dtype)
