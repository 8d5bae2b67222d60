"""The first GEMM of a weight-only int4 MoE layer (SGLang's `fused_moe_kernel_gptq_awq` as
the moe_wna16 method's `fused_experts` launches it for w13 of an AWQ checkpoint): inputs,
fp32 reference, torch baseline.

x is [tokens, hidden]; qweight [experts, n, hidden / 2] uint8, two 4-bit weights a byte
(hidden index 2i in the low nibble, 2i + 1 in the high one: moe_wna16's layout after its
AWQ conversion); scales [experts, n, hidden / group] in the dtype; qzeros
[experts, n / 2, hidden / group] uint8, two 4-bit zero points a byte along n (even n low);
topk_ids [tokens, topk] int32, distinct experts per token.  n = 2 x the expert's
intermediate size (gate and up stacked).  The output is [tokens * topk, n], row t * topk + s
= x[t] @ W[topk_ids[t, s]]^T with W[e, j, k] = (q[e, j, k] - z[e, j, k // group]) x
scale[e, j, k // group]."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int, hidden: int, inter: int, experts: int, topk: int, group: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit hidden states; uniform random 4-bit weights and zero points; scales around
    1 / (4.6 sqrt(hidden)) (4.6: the deviation of a difference of two uniform 4-bit values),
    so the products are near unit scale; uniform routing (each token's topk distinct experts
    drawn at random).  The weights are drawn on the device (a 30B MoE layer's are 200 MB)."""
    if hidden % group or group % 2 or (2 * inter) % 2:
        raise ValueError("hidden must be a multiple of the group size, the group even")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    n = 2 * inter
    groups = hidden // group
    x = torch.randn(tokens, hidden, generator=dev, device=device, dtype=torch.float32)
    qweight = torch.randint(
        0, 256, (experts, n, hidden // 2), generator=dev, device=device, dtype=torch.uint8
    )
    qzeros = torch.randint(
        0, 256, (experts, n // 2, groups), generator=dev, device=device, dtype=torch.uint8
    )
    scales = torch.rand(experts, n, groups, generator=dev, device=device) + 0.5
    scales = scales / (4.6 * hidden**0.5)
    scores = torch.rand(tokens, experts, generator=dev, device=device)
    topk_ids = scores.topk(topk, dim=-1).indices.to(torch.int32)
    return x.to(dtype), qweight, scales.to(dtype), qzeros, topk_ids


def dequantize(
    qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor, e: int, acc: torch.dtype
) -> torch.Tensor:
    """Expert e's [n, hidden] weights in `acc`."""
    q = qweight[e]
    w = torch.stack(((q & 0xF), (q >> 4)), dim=-1).flatten(-2).to(acc)  # [n, hidden]
    z = qzeros[e]
    z = torch.stack(((z & 0xF), (z >> 4)), dim=1).flatten(0, 1).to(acc)  # [n, groups]
    group = w.shape[1] // scales.shape[2]
    s = scales[e].to(acc).repeat_interleave(group, dim=1)
    return (w - z.repeat_interleave(group, dim=1)) * s


def _moe_gemm(
    x: torch.Tensor, qweight: torch.Tensor, scales: torch.Tensor, qzeros: torch.Tensor,
    topk_ids: torch.Tensor, acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    tokens, topk = topk_ids.shape
    out = torch.empty((tokens * topk, qweight.shape[1]), device=x.device, dtype=acc)
    flat = topk_ids.flatten().long()
    rows = x.to(acc).repeat_interleave(topk, dim=0)
    for e in torch.unique(flat).tolist():
        sel = (flat == e).nonzero().flatten()
        out[sel] = rows[sel] @ dequantize(qweight, scales, qzeros, e, acc).T
    return out


def reference(*inputs: torch.Tensor) -> torch.Tensor:
    return _moe_gemm(*inputs, torch.float32)


def torch_moe_wna16(*inputs: torch.Tensor) -> torch.Tensor:
    """The same by torch: per expert that received tokens, its weights dequantized to the
    input dtype, then its tokens' rows times them by torch's matmul (a host loop over the
    experts)."""
    return _moe_gemm(*inputs, inputs[0].dtype)
