"""vLLM's fused GDN prefill post-conv preparation (`fused_post_conv_prep` with q/k L2 norm
on and g itself, as `QwenGatedDeltaNetAttention`'s prefill calls it ahead of the Triton/FLA
chunked gated delta rule): inputs, fp32 reference, torch baseline.

conv_out is the causal conv1d's (SiLU-activated) output [tokens, 2 k_heads head_k +
v_heads head_v] in the spec's dtype: all q heads, then all k heads, then all v heads.  a
and b are the [tokens, v_heads] gate projections (dtype), A_log and dt_bias the layer's
per-value-head parameters (fp32, as Qwen3-Next keeps them).  The outputs: q and k [tokens,
k_heads, head_k] L2-normalized per head, v [tokens, v_heads, head_v] (dtype), g =
-exp(A_log) softplus(a + dt_bias) and beta = sigmoid(b) [tokens, v_heads] (fp32)."""

from __future__ import annotations

import math

import torch

EPS = 1e-6
THRESHOLD = 20.0

Outputs = tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]


def make_inputs(
    tokens: int, k_heads: int, v_heads: int, head_k: int, head_v: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor, int, int, int]:  # fmt: skip
    """SiLU of unit normals as the conv output, normal gate projections, and the layer's
    parameters as Qwen3-Next initializes them: A uniform in [1, 16] (A_log its log), dt
    log-uniform in [1e-3, 0.1] (dt_bias its inverse softplus).  Drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    width = 2 * k_heads * head_k + v_heads * head_v
    conv_out = torch.nn.functional.silu(
        torch.randn(tokens, width, generator=gen, device=device)
    ).to(dtype)
    a = torch.randn(tokens, v_heads, generator=gen, device=device).to(dtype)
    b = torch.randn(tokens, v_heads, generator=gen, device=device).to(dtype)
    A_log = torch.log(1 + 15 * torch.rand(v_heads, generator=gen, device=device))
    lo, hi = math.log(1e-3), math.log(0.1)
    dt = torch.exp(lo + (hi - lo) * torch.rand(v_heads, generator=gen, device=device))
    dt_bias = dt + torch.log(-torch.expm1(-dt))
    return conv_out, a, b, A_log, dt_bias, k_heads, head_k, head_v


def reference(
    conv_out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor,
    dt_bias: torch.Tensor, k_heads: int, head_k: int, head_v: int,
) -> Outputs:  # fmt: skip
    """In fp32 from the same rounded inputs: the split by column ranges, each q and k head
    divided by sqrt(sum of squares + eps), torch's softplus (linear above 20) and
    sigmoid."""
    tokens = conv_out.shape[0]
    v_heads = A_log.shape[0]
    x = conv_out.float()
    hk = k_heads * head_k
    q = x[:, :hk].reshape(tokens, k_heads, head_k)
    k = x[:, hk : 2 * hk].reshape(tokens, k_heads, head_k)
    v = conv_out[:, 2 * hk :].reshape(tokens, v_heads, head_v)
    q = q / torch.sqrt((q * q).sum(-1, keepdim=True) + EPS)
    k = k / torch.sqrt((k * k).sum(-1, keepdim=True) + EPS)
    sp = torch.nn.functional.softplus(a.float() + dt_bias.float(), threshold=THRESHOLD)
    g = -torch.exp(A_log.float()) * sp
    beta = torch.sigmoid(b.float())
    return q.to(conv_out.dtype), k.to(conv_out.dtype), v.clone(), g, beta


def torch_post_conv(
    conv_out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, A_log: torch.Tensor,
    dt_bias: torch.Tensor, k_heads: int, head_k: int, head_v: int,
) -> Outputs:  # fmt: skip
    """The chain the kernel replaces, by torch ops: split, rearrange and contiguous per
    tensor, an fp32 L2 norm of q and of k (F.normalize), then the gating in fp32."""
    tokens = conv_out.shape[0]
    v_heads = A_log.shape[0]
    hk = k_heads * head_k
    q, k, v = torch.split(conv_out, [hk, hk, v_heads * head_v], dim=-1)
    q = q.reshape(tokens, k_heads, head_k).contiguous()
    k = k.reshape(tokens, k_heads, head_k).contiguous()
    v = v.reshape(tokens, v_heads, head_v).contiguous()
    q = torch.nn.functional.normalize(q.float(), dim=-1, eps=EPS).to(q.dtype)
    k = torch.nn.functional.normalize(k.float(), dim=-1, eps=EPS).to(k.dtype)
    g = -A_log.float().exp() * torch.nn.functional.softplus(a.float() + dt_bias.float())
    beta = b.float().sigmoid()
    return q, k, v, g, beta
