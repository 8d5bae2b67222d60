"""FlagGems' unfold backward (the overlap-add of a framed waveform's gradient): inputs, fp64
reference, torch baseline.

grad_frames is [batch, frames, window] in the spec's dtype, the gradient of
`wav.unfold(-1, window, hop)` for wav of [batch, samples]; the output is wav's [batch,
samples] gradient in the same dtype: each sample the sum of the frame elements that read
it (zero for the tail that no whole window reaches)."""

from __future__ import annotations

import torch
import torch.nn.functional as F


def make_inputs(
    batch: int,
    samples: int,
    window: int,
    hop: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, int, int]:
    """Normal gradients for every window of every clip."""
    if window > samples or hop <= 0:
        raise ValueError("a window must fit the clip and the hop be positive")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    frames = (samples - window) // hop + 1
    grad = torch.randn(batch, frames, window, generator=gen)
    return grad.to(dtype).to(device), samples, hop


def reference(grad_frames: torch.Tensor, samples: int, hop: int) -> torch.Tensor:
    """The overlap-add in fp64 by F.fold (a 1 x window kernel with stride 1 x hop), rounded
    once to the input dtype."""
    batch, _, window = grad_frames.shape
    cols = grad_frames.double().transpose(1, 2)  # [batch, window, frames]
    out = F.fold(cols, output_size=(1, samples), kernel_size=(1, window), stride=(1, hop))
    return out.reshape(batch, samples).to(grad_frames.dtype)


def torch_unfold_backward(grad_frames: torch.Tensor, samples: int, hop: int) -> torch.Tensor:
    """The same gradient by torch's own unfold_backward (what autograd calls)."""
    batch, _, window = grad_frames.shape
    return torch.ops.aten.unfold_backward(grad_frames, [batch, samples], 1, window, hop)
