"""FlagGems' 2-D convolution weight gradient (a ResNet convolution: square filter, padding
filter // 2, no bias, one group): inputs, reference, torch baseline.

x is the convolution's input, [batch, channels_in, height, width] (NCHW, contiguous), and
grad_output the gradient arriving at its output, [batch, channels_out, out_height,
out_width] with out_* = (* + 2 * padding - filter) // stride + 1, both in the spec's dtype;
then the filter size and the stride.  Output: the weight gradient, [channels_out,
channels_in, filter, filter] in the same dtype."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def out_size(size: int, filter_size: int, stride: int) -> int:
    """The output side of a convolution with padding filter_size // 2."""
    return (size + 2 * (filter_size // 2) - filter_size) // stride + 1


def make_inputs(
    batch: int, channels_in: int, channels_out: int, height: int, width: int, filter_size: int,
    stride: int, *, dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int, int]:  # fmt: skip
    """The convolution's input as a bottleneck's 3 x 3 convolution sees it, after BatchNorm
    and ReLU (half-normal, about half of it zero), and an output gradient of standard normal
    values with a per-channel scale (what the following BatchNorm's backward hands back)."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, channels_in, height, width, generator=gen).clamp_(min=0.0)
    oh, ow = out_size(height, filter_size, stride), out_size(width, filter_size, stride)
    grad_output = torch.randn(batch, channels_out, oh, ow, generator=gen)
    grad_output *= 0.5 + torch.rand(1, channels_out, 1, 1, generator=gen)
    return (
        x.to(dtype=dtype, device=device),
        grad_output.to(dtype=dtype, device=device),
        filter_size,
        stride,
    )


def reference(
    x: torch.Tensor, grad_output: torch.Tensor, filter_size: int, stride: int
) -> torch.Tensor:
    """The weight gradient written out in fp64, independent of the kernel's loops: for each
    filter tap, the zero-padded input's window of output positions at that tap (strided by
    the stride) contracted with the output gradient over the batch and the positions, then
    rounded to the dtype."""
    pad = filter_size // 2
    _, _, oh, ow = grad_output.shape
    xp = F.pad(x.double(), (pad, pad, pad, pad))
    dy = grad_output.double()
    dw = torch.empty(
        dy.shape[1], x.shape[1], filter_size, filter_size, dtype=torch.float64, device=x.device
    )
    span_h, span_w = stride * (oh - 1) + 1, stride * (ow - 1) + 1
    for kh in range(filter_size):
        for kw in range(filter_size):
            window = xp[:, :, kh : kh + span_h : stride, kw : kw + span_w : stride]
            dw[:, :, kh, kw] = torch.einsum("nohw,nihw->oi", dy, window)
    return dw.to(x.dtype)


def torch_conv2d_wgrad(
    x: torch.Tensor, grad_output: torch.Tensor, filter_size: int, stride: int
) -> torch.Tensor:
    """The same gradient by torch's own aten::convolution_backward with only the weight's
    gradient asked for (output_mask [False, True, False]), as autograd calls it for a
    bias-free nn.Conv2d whose input needs no gradient (cuDNN's wgrad on the GPU), in the
    input dtype."""
    pad = filter_size // 2
    weight_shape = [grad_output.shape[1], x.shape[1], filter_size, filter_size]
    _, dw, _ = torch.ops.aten.convolution_backward(
        grad_output, x, x.new_empty(weight_shape), None, [stride, stride], [pad, pad],
        [1, 1], False, [0, 0], 1, [False, True, False],
    )  # fmt: skip
    return dw
