"""The DyT Triton kernel every triton_v* version launches, with its tanh as a choice.

A 2-D grid: one program per (row, block of ``block_n`` columns); it reads its block of x,
gamma and beta, computes in fp32 and writes y once.  How tanh is computed is what the
versions compare:

- ``libdevice``: ``libdevice.tanh`` (CUDA's ``tanhf``), a software routine accurate to a
  few ulp that costs many instructions per element;
- ``hardware``: the SM's tanh instruction (``tanh.approx.f32``, sm_75 and later), one
  instruction per element with a relative error around 1e-5.

Triton's CPU interpreter runs neither (it has no libdevice and no inline assembly): under
``TRITON_INTERPRET=1`` both become ``2 sigmoid(2x) - 1``, so the CPU tests check the
indexing, masking and dtype handling, and the GPU run checks each tanh against the
reference.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import torch
import triton
import triton.language as tl
from triton.language.extra import libdevice

from kernels.dyt.reference import check_inputs

TANH_KINDS = ("libdevice", "hardware")
_PORTABLE, _LIBDEVICE, _HARDWARE = 0, 1, 2

# What the last launch chose (the spec's launch_info): read by kbopt's measurements.
LAST_INFO: dict[str, Any] = {}


@dataclass(frozen=True)
class Config:
    block_n: int = 2048
    num_warps: int = 4
    tanh: str = "libdevice"


@triton.jit
def _tanh(x, KIND: tl.constexpr):
    if KIND == 2:
        y = tl.inline_asm_elementwise(
            "tanh.approx.f32 $0, $1;", "=f,f", [x], dtype=tl.float32, is_pure=True, pack=1
        )
    elif KIND == 1:
        y = libdevice.tanh(x)
    else:
        y = 2.0 * tl.sigmoid(2.0 * x) - 1.0
    return y


@triton.jit
def _dyt_kernel(X, Y, ALPHA, GAMMA, BETA, hidden, BLOCK_N: tl.constexpr, KIND: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    cols = tl.program_id(1) * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = cols < hidden
    x = tl.load(X + row * hidden + cols, mask=mask, other=0.0).to(tl.float32)
    gamma = tl.load(GAMMA + cols, mask=mask, other=0.0).to(tl.float32)
    beta = tl.load(BETA + cols, mask=mask, other=0.0).to(tl.float32)
    alpha = tl.load(ALPHA).to(tl.float32)
    y = _tanh(alpha * x, KIND) * gamma + beta
    tl.store(Y + row * hidden + cols, y.to(Y.dtype.element_ty), mask=mask)


def _kind(tanh: str) -> int:
    if tanh not in TANH_KINDS:
        raise ValueError(f"tanh must be one of {', '.join(TANH_KINDS)}, got {tanh!r}")
    if os.environ.get("TRITON_INTERPRET") == "1":
        return _PORTABLE
    return _HARDWARE if tanh == "hardware" else _LIBDEVICE


def launch(
    cfg: Config, x: torch.Tensor, alpha: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor
) -> torch.Tensor:
    check_inputs(x, alpha, gamma, beta)
    rows, hidden = x.shape
    y = torch.empty_like(x)
    grid = (rows, triton.cdiv(hidden, cfg.block_n))
    compiled = _dyt_kernel[grid](
        x,
        y,
        alpha,
        gamma,
        beta,
        hidden,
        BLOCK_N=cfg.block_n,
        KIND=_kind(cfg.tanh),
        num_warps=cfg.num_warps,
    )
    LAST_INFO.clear()
    LAST_INFO.update(
        block_n=cfg.block_n,
        num_warps=cfg.num_warps,
        grid=list(grid),
        registers=getattr(compiled, "n_regs", None),
        spills=getattr(compiled, "n_spills", None),
    )
    return y
