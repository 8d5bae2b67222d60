"""DeepSeek-V3.2's NSA indexer activation quantization (SGLang's `act_quant` with
scale_fmt "ue8m0" and block_size 128, on the indexer's query and key of one layer):
inputs, fp32 reference, torch baseline.

The lightning indexer of every DeepSeek-V3.2 layer scores the cached keys in fp8: after
its projections, RoPE and the Hadamard rotation (`rotate_activation`), the query [tokens,
64, 128] and the key [tokens, 128] are each quantized per 128-column group to e4m3 with a
power-of-two (UE8M0) scale.  Per group: amax = max(|x|) in fp32, at least 1e-4; scale =
2 ** ceil(log2(amax * fl32(1 / 448))) (the kernel multiplies by the fp32 constant, then
rounds the exponent up); y = clamp(x / scale, -448, 448) cast to e4m3, round to nearest
even (the GPU's cvt.rn.satfinite).  Outputs, as `act_quant` shapes them: the e4m3 query
[tokens, heads, head_dim] and its fp32 scales [tokens, heads, head_dim / 128], the e4m3 key
[tokens, head_dim] and its scales [tokens, head_dim / 128]."""

from __future__ import annotations

import torch

FP8 = torch.float8_e4m3fn
GROUP = 128  # the indexer's block_size: one scale per 128 columns
FP8_MAX = 448.0
AMAX_FLOOR = 1e-4


def make_inputs(
    tokens: int, heads: int, head_dim: int, *, dtype: torch.dtype, device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """(query, key), drawn on the device: the rotated query and key are close to Gaussian
    (the Hadamard rotation spreads outlier channels), each (token, head) row and each key
    row at its own scale, exp(N(0, 0.5^2)), so that the rows' power-of-two scales differ."""
    if head_dim % GROUP:
        raise ValueError(f"head_dim must be a multiple of {GROUP} (one scale per group)")
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    q = torch.randn(tokens, heads, head_dim, generator=gen, device=device)
    q *= torch.exp(0.5 * torch.randn(tokens, heads, 1, generator=gen, device=device))
    k = torch.randn(tokens, head_dim, generator=gen, device=device)
    k *= torch.exp(0.5 * torch.randn(tokens, 1, generator=gen, device=device))
    return q.to(dtype), k.to(dtype)


def _quantize(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """One tensor as `act_quant` quantizes it (groups along the last dimension), in fp32."""
    n = x.shape[-1]
    xf = x.float().reshape(-1, n // GROUP, GROUP)
    amax = xf.abs().amax(dim=-1).clamp_min(AMAX_FLOOR)
    inv = torch.tensor(1.0 / FP8_MAX, dtype=torch.float32, device=x.device)
    scale = torch.exp2(torch.ceil(torch.log2(amax * inv)))
    y = (xf / scale[..., None]).clamp(-FP8_MAX, FP8_MAX).to(FP8)
    return y.view(x.shape), scale.view(*x.shape[:-1], n // GROUP)


def reference(
    query: torch.Tensor, key: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    q_fp8, q_scale = _quantize(query)
    k_fp8, k_scale = _quantize(key)
    return q_fp8, q_scale, k_fp8, k_scale


def torch_act_quant(
    query: torch.Tensor, key: torch.Tensor
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """The same quantization in torch's kernels (abs, amax, clamp, log2, ceil, exp2,
    divide, clamp, cast), the query, then the key."""
    return reference(query, key)
