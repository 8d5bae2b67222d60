"""Kimi Delta Attention's forget gate (the `kda_gate_fwd_kernel` launch of SGLang's
`fused_kda_gate`, which `KimiDeltaAttention.forward` runs on every KDA layer of Kimi-Linear
for every prefill or extend batch): inputs, fp32 reference, torch baseline.

g [tokens, heads * head_dim] is the layer's forget-gate projection in the model dtype,
a_log [heads] fp32 the per-head log decay rate (A_log), g_bias [heads * head_dim] fp32 the
gate bias (dt_bias).  The output y [tokens, heads, head_dim] fp32 is
-exp(a_log[h]) * softplus(g + g_bias), softplus(x) = log(1 + exp(x)) below the threshold 20
and x above it (beta 1)."""

from __future__ import annotations

import torch

BETA = 1.0
THRESHOLD = 20.0


def make_inputs(
    tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:  # fmt: skip
    """randn gate projections scaled by 4 (so some pass the softplus threshold), Kimi's
    A_log range (log of 1..16) and small biases, all drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    g = (4.0 * torch.randn(tokens, heads * head_dim, generator=gen, device=device)).to(dtype)
    a_log = torch.log(1.0 + 15.0 * torch.rand(heads, generator=gen, device=device))
    g_bias = 0.5 * torch.randn(heads * head_dim, generator=gen, device=device)
    return g, a_log, g_bias


def _gate(g: torch.Tensor, a_log: torch.Tensor, g_bias: torch.Tensor) -> torch.Tensor:
    heads = a_log.numel()
    x = g.float() + g_bias.float()
    sp = torch.where(x * BETA > THRESHOLD, x, torch.log1p(torch.exp(x * BETA)) / BETA)
    y = -torch.exp(a_log.float()).repeat_interleave(g.shape[-1] // heads) * sp
    return y.view(g.shape[0], heads, -1)


def reference(g: torch.Tensor, a_log: torch.Tensor, g_bias: torch.Tensor) -> torch.Tensor:
    return _gate(g, a_log, g_bias)


def torch_kda_gate(g: torch.Tensor, a_log: torch.Tensor, g_bias: torch.Tensor) -> torch.Tensor:
    """The same in torch ops, as SGLang's fallback would: F.softplus with threshold 20 on
    the biased gate in fp32, times -exp(A_log) per head."""
    heads = a_log.numel()
    x = (g.float() + g_bias).view(g.shape[0], heads, -1)
    sp = torch.nn.functional.softplus(x, beta=BETA, threshold=THRESHOLD)
    return -torch.exp(a_log.float())[None, :, None] * sp
