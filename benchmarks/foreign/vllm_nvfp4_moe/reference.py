"""The first GEMM of an NVFP4 MoE layer under vLLM's emulation backend
(`fused_moe_nvfp4_emulation_kernel` as `Nvfp4QuantizationEmulationTritonExperts.apply`
launches it for w13): inputs, fp32 reference, torch baseline.

x is [tokens, hidden] in the dtype (vLLM's NVFP4-rounded activations; the values do not
change the kernel's work); w1 [experts, n, hidden / 2] uint8, two E2M1 codes a byte
(hidden index 2i in the low nibble, 2i + 1 in the high one; bit 3 the sign, bits 0-2 the
magnitude 0, 0.5, 1, 1.5, 2, 3, 4, 6), ModelOpt's layout as vLLM loads it; w1_scale
[experts, n, hidden / 16] float8_e4m3fn, one block scale per 16 weights; w1_global_scale
[experts] fp32 (the checkpoint's weight_scale_2, vLLM's g1_alphas); topk_ids [tokens, topk]
int32, distinct experts per token.  n = 2 x the expert's intermediate size (gate and up
stacked).  The output is vLLM's intermediate cache [tokens, topk, n]: [t, s] =
x[t] @ W[topk_ids[t, s]]^T with W[e, j, k] = e2m1(code) x w1_scale[e, j, k // 16] x
w1_global_scale[e]."""

from __future__ import annotations

import torch

GROUP = 16
E2M1 = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
# rms of a uniformly drawn E2M1 magnitude: sqrt(mean of the squared grid)
E2M1_RMS = (sum(v * v for v in E2M1) / len(E2M1)) ** 0.5


def make_inputs(
    tokens: int, hidden: int, inter: int, experts: int, topk: int, *,
    dtype: torch.dtype, device: str, seed: int | None = None,
) -> tuple[torch.Tensor, ...]:  # fmt: skip
    """Unit activations; uniform random codes (every nibble value, signed zeros too);
    e4m3 block scales drawn in [224, 448] (ModelOpt's scales put a block's absmax near the
    top of the e4m3 range) and a per-expert global scale near 1 / (E2M1_RMS x 336 x
    sqrt(hidden)), so the weights are near 1 / sqrt(hidden) and the products near unit
    scale; uniform routing (each token's topk distinct experts drawn at random).  The
    weights are drawn on the device (a DeepSeek-R1 layer's share on a TP8 rank is 0.5 GB)."""
    if hidden % GROUP:
        raise ValueError("hidden must be a multiple of 16 (one e4m3 scale per 16 weights)")
    gen = torch.Generator(device="cpu")
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    dev = torch.Generator(device=device)
    dev.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=gen)))
    n = 2 * inter
    x = torch.randn(tokens, hidden, generator=dev, device=device, dtype=torch.float32)
    w1 = torch.randint(
        0, 256, (experts, n, hidden // 2), generator=dev, device=device, dtype=torch.uint8
    )
    scale = 224.0 + 224.0 * torch.rand(experts, n, hidden // GROUP, generator=dev, device=device)
    w1_scale = scale.to(torch.float8_e4m3fn)
    spread = 0.8 + 0.4 * torch.rand(experts, generator=dev, device=device)
    w1_global_scale = spread / (E2M1_RMS * 336.0 * hidden**0.5)
    scores = torch.rand(tokens, experts, generator=dev, device=device)
    topk_ids = scores.topk(topk, dim=-1).indices.to(torch.int32)
    return x.to(dtype), w1, w1_scale, w1_global_scale.float(), topk_ids


def dequantize(
    w1: torch.Tensor, w1_scale: torch.Tensor, w1_global_scale: torch.Tensor, e: int,
    acc: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    """Expert e's [n, hidden] weights: each code's E2M1 value times its block scale times
    the expert's global scale, in fp32, then in `acc`."""
    q = w1[e]
    codes = torch.stack((q & 0xF, q >> 4), dim=-1).flatten(-2).long()  # [n, hidden]
    grid = torch.tensor(E2M1, dtype=torch.float32, device=q.device)
    values = grid[codes & 0x7] * (1.0 - 2.0 * (codes >> 3).float())
    scale = w1_scale[e].float().repeat_interleave(GROUP, dim=1) * w1_global_scale[e].float()
    return (values * scale).to(acc)


def _nvfp4_moe_gemm(
    x: torch.Tensor, w1: torch.Tensor, w1_scale: torch.Tensor, w1_global_scale: torch.Tensor,
    topk_ids: torch.Tensor, acc: torch.dtype, out_dtype: torch.dtype,
) -> torch.Tensor:  # fmt: skip
    tokens, topk = topk_ids.shape
    out = torch.empty((tokens * topk, w1.shape[1]), device=x.device, dtype=out_dtype)
    flat = topk_ids.flatten().long()
    rows = x.to(acc).repeat_interleave(topk, dim=0)
    for e in torch.unique(flat).tolist():
        sel = (flat == e).nonzero().flatten()
        w = dequantize(w1, w1_scale, w1_global_scale, e, acc)
        out[sel] = (rows[sel] @ w.T).to(out_dtype)
    return out.view(tokens, topk, -1)


def reference(*inputs: torch.Tensor) -> torch.Tensor:
    return _nvfp4_moe_gemm(*inputs, torch.float32, torch.float32)


def torch_nvfp4_moe(*inputs: torch.Tensor) -> torch.Tensor:
    """The same by torch: per expert that received tokens, its NVFP4 weights dequantized
    to the input dtype, then its tokens' rows times them by torch's matmul (a host loop
    over the experts)."""
    return _nvfp4_moe_gemm(*inputs, inputs[0].dtype, inputs[0].dtype)
