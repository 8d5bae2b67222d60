"""vLLM's batch-invariant persistent matmul (the `matmul_kernel_persistent` launch of
`matmul_persistent`, which `linear_batch_invariant` calls for every unquantized linear
layer and the lm_head when VLLM_BATCH_INVARIANT=1): inputs, reference, torch baseline.

x is [tokens, hidden] (a layer's activations, contiguous).  weight is vLLM's [out, hidden]
parameter, handed to the kernel as `weight.t()` without a copy: a [hidden, out] view whose
column n is weight row n (stride_bk 1, stride_bn hidden).  The output is [tokens, out] in
the input dtype (no bias: Qwen3's and Llama's projections have none)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    out: int,
    hidden: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """x ~ N(0, 1), weight ~ N(0, 1/hidden) (an initialised projection's scale), both drawn
    on the device; weight returned transposed, as vLLM passes it."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen, device=device, dtype=torch.float32)
    w = torch.randn(out, hidden, generator=gen, device=device, dtype=torch.float32)
    w = w / hidden**0.5
    return x.to(dtype), w.to(dtype).t()


def reference(x: torch.Tensor, w_t: torch.Tensor) -> torch.Tensor:
    """The fp64 product of the inputs, as fp32."""
    return torch.matmul(x.double(), w_t.double()).float()


def torch_linear(x: torch.Tensor, w_t: torch.Tensor) -> torch.Tensor:
    """torch.nn.functional.linear on vLLM's [out, hidden] weight (cuBLAS), as vLLM runs an
    unquantized linear layer without VLLM_BATCH_INVARIANT."""
    return torch.nn.functional.linear(x, w_t.t())
