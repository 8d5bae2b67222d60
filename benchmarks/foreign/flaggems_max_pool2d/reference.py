"""FlagGems' 2-D max pooling with indices (ResNet's stem pool: 3 x 3 windows, stride 2,
padding 1): inputs, reference, torch baseline.

x is [batch, channels, height, width] (NCHW, contiguous) in the spec's dtype; the outputs
are the pooled maxima [batch, channels, out_h, out_w] in the dtype and, for each, the int64
index (row * width + column inside its input plane) of the first maximum of its window in
row-major window order, as torch returns them for the backward pass."""

from __future__ import annotations

import torch

KERNEL = 3  # ResNet's stem max pool: nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
STRIDE = 2
PADDING = 1


def out_size(size: int) -> int:
    return (size + 2 * PADDING - KERNEL) // STRIDE + 1


def make_inputs(
    batch: int, channels: int, height: int, width: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor]:  # fmt: skip
    """Post-ReLU activations (the stem's batch norm and ReLU come first): a standard
    normal clamped at zero, so many windows tie at 0.0 and the first one must win."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, channels, height, width, generator=gen).clamp_min(0.0)
    return (x.to(dtype=dtype, device=device),)


def reference(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Every window unfolded explicitly (the padding as -inf), its maximum and the first
    position holding it, independent of any pooling kernel."""
    n, c, h, w = x.shape
    oh, ow = out_size(h), out_size(w)
    xp = torch.full((n, c, h + 2 * PADDING, w + 2 * PADDING), float("-inf"), dtype=torch.float64,
                    device=x.device)  # fmt: skip
    xp[:, :, PADDING : PADDING + h, PADDING : PADDING + w] = x.double()
    rows = torch.arange(oh, device=x.device)[:, None] * STRIDE + torch.arange(
        KERNEL, device=x.device
    )
    cols = torch.arange(ow, device=x.device)[:, None] * STRIDE + torch.arange(
        KERNEL, device=x.device
    )
    # [n, c, oh, kh, ow, kw] -> [n, c, oh, ow, kh * kw], window order row-major
    win = xp[:, :, rows[:, :, None, None], cols[None, None, :, :]]
    win = win.permute(0, 1, 2, 4, 3, 5).reshape(n, c, oh, ow, KERNEL * KERNEL)
    best = win.max(dim=-1).values
    first = (win == best[..., None]).to(torch.int8).argmax(dim=-1)  # the first maximum
    kh, kw = first // KERNEL, first % KERNEL
    in_r = torch.arange(oh, device=x.device)[:, None] * STRIDE - PADDING + kh
    in_c = torch.arange(ow, device=x.device)[None, :] * STRIDE - PADDING + kw
    return best.to(x.dtype), (in_r * w + in_c).to(torch.int64)


def torch_max_pool2d(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The same pooling by torch (aten's max_pool2d_with_indices, what nn.MaxPool2d
    reaches in training, where the indices are kept for the backward pass)."""
    return torch.nn.functional.max_pool2d(x, KERNEL, STRIDE, PADDING, return_indices=True)
