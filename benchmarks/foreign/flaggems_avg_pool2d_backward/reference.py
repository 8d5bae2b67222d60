"""FlagGems' 2-D average pooling backward for PoolFormer's token mixer (a square odd
window, stride 1, padding window // 2, count_include_pad False): inputs, reference, torch
baseline.

grad_output is [batch, channels, height, width] (NCHW, contiguous) in the spec's dtype, the
gradient arriving at the pooling's output; with stride 1 and padding window // 2 the output
map is the input's size, so it is also the input gradient's shape.  Output: the input
gradient, [batch, channels, height, width] in the same dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int, channels: int, height: int, width: int, pool: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, int]:  # fmt: skip
    """The output gradient: standard normal values with a per-channel scale (a residual
    branch's gradient after PoolFormer's per-channel layer scale)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    grad_output = torch.randn(batch, channels, height, width, generator=gen)
    grad_output *= 0.5 + torch.rand(1, channels, 1, 1, generator=gen)
    return grad_output.to(dtype=dtype, device=device), pool


def _divisors(size: int, pad: int) -> torch.Tensor:
    """Per output position along one side, how many of its window's pixels lie inside the
    map (count_include_pad False)."""
    pos = torch.arange(size)
    return ((pos + pad).clamp(max=size - 1) - (pos - pad).clamp(min=0) + 1).double()


def reference(grad_output: torch.Tensor, pool: int) -> torch.Tensor:
    """The adjoint of the window mean written out in fp64, independent of the kernel's
    loop: each output gradient divided once by its window's in-map pixel count (the row
    count times the column count), zero-padded by window // 2, and the pool x pool shifted
    copies summed (input pixel (i, j) takes the outputs (i + pad - kh, j + pad - kw)), then
    rounded to the dtype."""
    n, c, h, w = grad_output.shape
    pad = pool // 2
    div = _divisors(h, pad)[:, None] * _divisors(w, pad)[None, :]
    g = F.pad(grad_output.double().cpu() / div, (pad, pad, pad, pad))
    dx = torch.zeros(n, c, h, w, dtype=torch.float64)
    for kh in range(pool):
        for kw in range(pool):
            dx += g[:, :, 2 * pad - kh : 2 * pad - kh + h, 2 * pad - kw : 2 * pad - kw + w]
    return dx.to(dtype=grad_output.dtype, device=grad_output.device)


def torch_avg_pool2d_backward(grad_output: torch.Tensor, pool: int) -> torch.Tensor:
    """The same gradient by torch's own kernel, aten::avg_pool2d_backward, as autograd calls
    it for PoolFormer's nn.AvgPool2d(pool, 1, pool // 2, count_include_pad=False); its
    `self` argument (the pooling's input) is read for its shape only, the output
    gradient's here."""
    pad = pool // 2
    return torch.ops.aten.avg_pool2d_backward(
        grad_output, grad_output, [pool, pool], [1, 1], [pad, pad], False, False, None
    )
