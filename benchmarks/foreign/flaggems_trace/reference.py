"""FlagGems' trace (its `trace_kernel`) on a K-FAC Kronecker factor: inputs, reference,
torch baseline.

a is an [n, n] matrix in the spec's dtype, contiguous: a layer's input-activation
covariance factor as K-FAC keeps it (symmetric, positive diagonal).  The output is its
trace, a 0-d tensor in a's dtype, which K-FAC's factored Tikhonov damping divides by n."""

from __future__ import annotations

import torch


def make_inputs(
    n: int, *, dtype: torch.dtype, device: str, seed: int | None = None
) -> tuple[torch.Tensor]:
    """A symmetric-looking factor: small normal off-diagonal values (0.01 scale) and a
    positive diagonal of uniform values in [0.5, 1.5), made on the device (the large
    trial's matrix is 1.6 GB in bf16)."""
    gen = torch.Generator(device=device)
    gen.manual_seed(seed if seed is not None else int(torch.randint(0, 2**31 - 1, (1,))))
    a = torch.randn(n, n, generator=gen, device=device, dtype=torch.float32).mul_(0.01)
    diag = torch.rand(n, generator=gen, device=device, dtype=torch.float32) + 0.5
    a.diagonal().copy_(diag)
    return (a.to(dtype),)


def reference(a: torch.Tensor) -> torch.Tensor:
    """The diagonal gathered by flat index i * (n + 1) and summed in fp64, rounded to a's
    dtype (no torch.trace)."""
    n = min(a.shape)
    idx = torch.arange(n, device=a.device) * (a.stride(0) + a.stride(1))
    return a.reshape(-1)[idx].double().sum().to(a.dtype)


def torch_trace(a: torch.Tensor) -> torch.Tensor:
    """torch.trace (what K-FAC calls)."""
    return torch.trace(a)
