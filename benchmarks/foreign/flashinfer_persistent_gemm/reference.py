"""FlashInfer's SM-bounded persistent GEMM (the `gemm_kernel_persistent` launch of
`flashinfer.triton.gemm_persistent`, a GEMM told how many SMs it may occupy so that a kernel
overlapped with it on another stream keeps the rest): inputs, reference, torch baseline.

x is [tokens, hidden] (a layer's activations, contiguous).  weight is the layer's [out,
hidden] parameter, handed to `gemm_persistent` as `weight.t()` without a copy: a [hidden,
out] view whose column n is weight row n (stride_bk 1, stride_bn hidden), which the wrapper
accepts ("b can be non-contiguous").  sm_budget is the wrapper's `num_sms` argument, the
SMs the caller lets the GEMM occupy.  The output is [tokens, out] in the input dtype
(alpha 1, beta 0: the wrapper's defaults, no bias)."""

from __future__ import annotations

import torch


def make_inputs(
    tokens: int,
    out: int,
    hidden: int,
    sm_budget: int,
    *,
    dtype: torch.dtype,
    device: str,
    seed: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, int]:
    """x ~ N(0, 1), weight ~ N(0, 1/hidden) (an initialised projection's scale), both drawn
    on the device; weight returned transposed, as the caller passes it; the SM budget as
    given."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    x = torch.randn(tokens, hidden, generator=gen, device=device, dtype=torch.float32)
    w = torch.randn(out, hidden, generator=gen, device=device, dtype=torch.float32)
    w = w / hidden**0.5
    return x.to(dtype), w.to(dtype).t(), sm_budget


def reference(x: torch.Tensor, w_t: torch.Tensor, sm_budget: int) -> torch.Tensor:
    """The fp64 product of the inputs, as fp32 (the SM budget changes nothing computed)."""
    return torch.matmul(x.double(), w_t.double()).float()


def torch_linear(x: torch.Tensor, w_t: torch.Tensor, sm_budget: int) -> torch.Tensor:
    """torch.nn.functional.linear on the [out, hidden] weight (cuBLAS, free to take every
    SM: the budget is not honoured), as the layer runs without the SM-bounded GEMM."""
    return torch.nn.functional.linear(x, w_t.t())
