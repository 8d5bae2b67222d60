"""SGLang's adaLN modulation (the `fuse_scale_shift_kernel` launch of the diffusion
runtime's LayerNormScaleShift in Wan2.2-TI2V-5B's transformer blocks, whose per-token
timesteps give every token its own modulation): inputs, reference, torch baseline.

x is the LayerNorm-ed video stream [batch, tokens, hidden] in the model's dtype; shift and
scale are per-token fp32 modulations [batch, tokens, hidden] (Wan asserts them fp32), here
two views of one [batch, tokens, 2, hidden] tensor as Wan's `chunk` of its
[batch, tokens, 6, hidden] table gives them (rows not contiguous).  The output is
y = x * (1 + scale) + shift in x's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int,
    tokens: int,
    hidden: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """x roughly unit normal (a LayerNorm's output); shift and scale small (about 0.1), as
    a DiT's adaLN table plus a timestep embedding gives them.  Drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(batch, tokens, hidden, generator=gen, device=device, dtype=torch.float32)
    mod = torch.randn(batch, tokens, 2, hidden, generator=gen, device=device) * 0.1
    return x.to(dtype), mod[:, :, 1], mod[:, :, 0]


def reference(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """In fp32: x * (1 + scale) + shift, rounded once to x's dtype."""
    return (x.float() * (1 + scale.float()) + shift.float()).to(x.dtype)


def torch_scale_shift(x: torch.Tensor, scale: torch.Tensor, shift: torch.Tensor) -> torch.Tensor:
    """SGLang's non-CUDA path (LayerNormScaleShift's native modulation): the same
    expression in eager torch (fp32 intermediates from the fp32 modulations, several
    launches), cast back to x's dtype."""
    return (x * (1 + scale) + shift).to(x.dtype)
