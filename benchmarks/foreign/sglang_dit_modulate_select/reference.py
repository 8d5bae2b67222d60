"""SGLang's per-token select of two adaLN modulations (the `fuse_scale_shift_gate_select01_kernel`
launch of the diffusion runtime's Qwen-Image DiT with `zero_cond_t`, Qwen-Image-Edit-2511):
inputs, reference, torch baseline.

x is the LayerNorm-ed image stream [batch, tokens, hidden] (the noisy latent's tokens, then
the reference images' tokens); shift, scale and gate come twice, [batch, hidden] each: set 0
from the denoising timestep's embedding, set 1 from timestep zero's, which SGLang gives the
reference images' tokens.  index [batch, tokens] (int32) is SGLang's `build_modulate_index`:
0 on the first image's tokens, 1 after.  The outputs are y = x * (1 + scale) + shift and the
gate, each token taking the set its index names, both [batch, tokens, hidden] in the
model's dtype."""

from __future__ import annotations

import torch


def make_inputs(
    batch: int,
    noisy_tokens: int,
    cond_tokens: int,
    hidden: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, ...]:
    """x roughly unit normal (a LayerNorm's output); the modulations small, as a DiT's
    AdaLN projections of a timestep embedding are (scale and shift about 0.1, gate about
    0.5), the two sets drawn apart so that a wrong select shows."""
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    tokens = noisy_tokens + cond_tokens
    x = torch.randn(batch, tokens, hidden, generator=gen)
    mods = [
        torch.randn(batch, hidden, generator=gen) * s + m
        for s, m in ((0.1, 0.0), (0.1, 0.0), (0.2, 0.5), (0.1, 0.2), (0.1, -0.2), (0.2, 1.0))
    ]
    index = (torch.arange(tokens) >= noisy_tokens).int().expand(batch, tokens).contiguous()
    shift0, scale0, gate0, shift1, scale1, gate1 = (t.to(device=device, dtype=dtype) for t in mods)
    return (
        x.to(device=device, dtype=dtype), scale0, shift0, gate0, scale1, shift1, gate1,
        index.to(device),
    )  # fmt: skip


def reference(
    x: torch.Tensor, scale0: torch.Tensor, shift0: torch.Tensor, gate0: torch.Tensor,
    scale1: torch.Tensor, shift1: torch.Tensor, gate1: torch.Tensor, index: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """In fp32, token by token: the set its index names, then x * (1 + scale) + shift."""
    sel = (index != 0)[:, :, None]
    scale = torch.where(sel, scale1.float()[:, None, :], scale0.float()[:, None, :])
    shift = torch.where(sel, shift1.float()[:, None, :], shift0.float()[:, None, :])
    gate = torch.where(sel, gate1.float()[:, None, :], gate0.float()[:, None, :])
    y = x.float() * (1 + scale) + shift
    return y.to(x.dtype), gate.to(x.dtype)


def torch_modulate_select(
    x: torch.Tensor, scale0: torch.Tensor, shift0: torch.Tensor, gate0: torch.Tensor,
    scale1: torch.Tensor, shift1: torch.Tensor, gate1: torch.Tensor, index: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """SGLang's own non-CUDA path in `_modulate`: torch.where on the index mask for each of
    shift, scale and gate, then the modulation (several launches, in the model's dtype)."""
    mask = (index == 0).unsqueeze(-1)
    shift = torch.where(mask, shift0.unsqueeze(1), shift1.unsqueeze(1))
    scale = torch.where(mask, scale0.unsqueeze(1), scale1.unsqueeze(1))
    gate = torch.where(mask, gate0.unsqueeze(1), gate1.unsqueeze(1))
    return x * (1 + scale) + shift, gate
