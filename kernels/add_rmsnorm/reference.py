"""Fused residual add + RMSNorm: input checks, inputs, the fp32 reference and plain torch.

As in every decoder layer of an LLM (vLLM's ``fused_add_rms_norm``, but out of place)::

    residual_out = x + residual                      # summed in fp32, stored in x's dtype
    y = residual_out * rsqrt(mean(residual_out**2) + eps) * weight

with the mean of squares taken over the hidden dimension, in fp32, from the fp32 sum.
Every version returns the new tensors ``(y, residual_out)`` and leaves its inputs untouched.
"""

from __future__ import annotations

from typing import Any

import torch

from kbopt.bench.harness import rel_error  # noqa: F401  (the harness's measure, re-exported)

DEFAULT_EPS = 1e-6


_DTYPES = (torch.float32, torch.float16, torch.bfloat16)


def check_inputs(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: Any
) -> tuple[int, int]:
    """(rows, hidden) of a valid call; a clear ValueError for anything a kernel cannot take.

    Every version calls this first: 2-D ``x`` and ``residual`` of one shape, dtype and
    device, a 1-D ``weight`` of ``hidden`` elements, all contiguous, and a positive eps.
    The common, valid case takes one short expression (this runs on every launch); the
    detailed checks run only to explain a failure.
    """
    try:
        rows, hidden = x.shape
        ok = (
            residual.shape == x.shape
            and weight.shape == (hidden,)
            and rows > 0
            and hidden > 0
            and x.dtype in _DTYPES
            and residual.dtype == x.dtype
            and weight.dtype == x.dtype
            and residual.device == x.device
            and weight.device == x.device
            and x.is_contiguous()
            and residual.is_contiguous()
            and weight.is_contiguous()
            and type(eps) in (float, int)
            and eps > 0
        )
    except (AttributeError, TypeError, ValueError):
        ok = False
    if ok:
        return rows, hidden
    _explain(x, residual, weight, eps)
    raise ValueError("invalid inputs")  # unreachable: _explain raised


def _explain(x: Any, residual: Any, weight: Any, eps: Any) -> None:
    """Raise the ValueError that says what is wrong with a call."""
    for name, t in (("x", x), ("residual", residual), ("weight", weight)):
        if not isinstance(t, torch.Tensor):
            raise ValueError(f"{name} must be a torch.Tensor, got {type(t).__name__}")
    if x.dim() != 2:
        raise ValueError(f"x must be 2-D [rows, hidden], got shape {tuple(x.shape)}")
    rows, hidden = x.shape
    if tuple(residual.shape) != (rows, hidden):
        raise ValueError(
            f"residual must have x's shape {(rows, hidden)}, got {tuple(residual.shape)}"
        )
    if tuple(weight.shape) != (hidden,):
        raise ValueError(f"weight must be 1-D [hidden={hidden}], got {tuple(weight.shape)}")
    if rows < 1 or hidden < 1:
        raise ValueError(f"x must not be empty, got shape {(rows, hidden)}")
    if residual.dtype != x.dtype or weight.dtype != x.dtype:
        raise ValueError(
            f"x, residual and weight must share one dtype, got {x.dtype}, "
            f"{residual.dtype}, {weight.dtype}"
        )
    if x.dtype not in _DTYPES:
        raise ValueError(f"dtype must be float32, float16 or bfloat16, got {x.dtype}")
    if residual.device != x.device or weight.device != x.device:
        raise ValueError(
            f"x, residual and weight must be on one device, got {x.device}, "
            f"{residual.device}, {weight.device}"
        )
    for name, t in (("x", x), ("residual", residual), ("weight", weight)):
        if not t.is_contiguous():
            raise ValueError(f"{name} must be contiguous (strides {tuple(t.stride())})")
    if isinstance(eps, bool) or not isinstance(eps, int | float) or not eps > 0:
        raise ValueError(f"eps must be a positive number, got {eps!r}")


def make_inputs(
    rows: int,
    hidden: int,
    *,
    dtype: torch.dtype = torch.bfloat16,
    device: str = "cpu",
    seed: int | None = None,
    eps: float = DEFAULT_EPS,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, float]:
    """(x, residual, weight, eps): normal x and residual, weight ~ 1 + 0.1 * randn."""
    gen = torch.Generator(device="cpu")
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(seed)

    def randn(*shape: int) -> torch.Tensor:
        return torch.randn(*shape, generator=gen, dtype=torch.float32)

    if device != "cpu" and rows * hidden >= 1 << 22:
        # large inputs: draw on the device (the CPU generator would take seconds)
        dev_gen = torch.Generator(device=device)
        dev_gen.manual_seed(int(torch.randint(0, 2**62, (1,), generator=gen)))
        x = torch.randn(rows, hidden, generator=dev_gen, device=device, dtype=torch.float32)
        res = torch.randn(rows, hidden, generator=dev_gen, device=device, dtype=torch.float32)
        x, res = x.to(dtype), res.to(dtype)
    else:
        x = randn(rows, hidden).to(device=device, dtype=dtype)
        res = randn(rows, hidden).to(device=device, dtype=dtype)
    weight = (1.0 + 0.1 * randn(hidden)).to(device=device, dtype=dtype)
    return x, res, weight, eps


def reference(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """(y, residual_out) in float32, from float32 copies of the inputs."""
    check_inputs(x, residual, weight, eps)
    s = x.float() + residual.float()
    rstd = torch.rsqrt(s.square().mean(dim=-1, keepdim=True) + eps)
    return s * rstd * weight.float(), s


def torch_add_rmsnorm(
    x: torch.Tensor, residual: torch.Tensor, weight: torch.Tensor, eps: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """Plain eager torch as a user writes it (Hugging Face's Llama RMSNorm after the add).

    The add in the input dtype, the statistics in fp32 from that sum, the normalized
    value cast back to the input dtype before the weight multiplies it.
    """
    residual_out = x + residual
    h = residual_out.float()
    variance = h.pow(2).mean(-1, keepdim=True)
    y = weight * (h * torch.rsqrt(variance + eps)).to(x.dtype)
    return y, residual_out


