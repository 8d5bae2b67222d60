"""FlagGems' batched GEMM (`bmm_kernel`, aten::bmm.out) as vLLM's MLA decode calls it in
`_v_up_proj`: inputs, reference, torch baseline.

x is the attention output in the compressed latent space, [heads, tokens, kv_lora_rank] as
the transposed view of vLLM's [tokens, heads, kv_lora_rank] buffer (rows heads x rank
elements apart), and w_uv the value up-projection, [heads, kv_lora_rank, v_head_dim],
contiguous, both in the spec's dtype.  Output: x @ w_uv per head, [heads, tokens,
v_head_dim] in that dtype, written through the transposed view of a [tokens, heads,
v_head_dim] buffer (the o_proj's input rows)."""

from __future__ import annotations

import torch


def make_inputs(
    heads: int, tokens: int, kv_lora_rank: int, v_head_dim: int, *, dtype: torch.dtype,
    device: str, seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """The latent attention output as normal values (a softmax-weighted mean of RMS-normed
    latent vectors: O(1) per channel), drawn [tokens, heads, rank] and viewed head-major as
    vLLM's transpose(0, 1) gives it; w_uv normal with standard deviation 1 / sqrt(rank), so
    that every output is O(1).  Drawn on the device."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, heads, kv_lora_rank, generator=gen, device=device)
    w_uv = torch.randn(heads, kv_lora_rank, v_head_dim, generator=gen, device=device)
    w_uv.mul_(kv_lora_rank**-0.5)
    return x.to(dtype).transpose(0, 1), w_uv.to(dtype)


def reference(x: torch.Tensor, w_uv: torch.Tensor) -> torch.Tensor:
    """In fp64 on the CPU (fp32 on the GPU) from the rounded inputs, rounded to their
    dtype."""
    wide = torch.float64 if x.device.type == "cpu" else torch.float32
    return torch.bmm(x.to(wide), w_uv.to(wide)).to(x.dtype)


def torch_mla_v_up_proj(x: torch.Tensor, w_uv: torch.Tensor) -> torch.Tensor:
    """torch.bmm(x, w_uv, out=out.transpose(0, 1)), vLLM's own call without FlagGems
    (cuBLAS' strided batched GEMM), into a [tokens, heads, v_head_dim] buffer allocated per
    call."""
    out = torch.empty(x.shape[1], x.shape[0], w_uv.shape[2], device=x.device, dtype=x.dtype)
    return torch.bmm(x, w_uv, out=out.transpose(0, 1))
