"""FlagGems' fused cumsum + K K^T + solve_tril for the chunked gated delta rule
(src/flag_gems/fused/FLA/fused_cumsum_kkt_solve_tril.py, v5.0.2:
`chunk_gated_delta_rule_fused_cumsum_kkt_solve_tril_kernel`), launched as FlagGems'
`chunk_gated_delta_rule_fused_cumsum_kkt_solve_tril` launches it (fixed-length batch, no
cu_seqlens), so that its launch choices are knobs.

One program per (64-token chunk, batch row x value head): the chunk's log gates are summed
in place (written to g_out), K K^T is built over the key width BK columns at a time by
tl.dot (k of the head's key group, scaled by beta), weighted by exp(g_i - g_j), masked to
strictly lower and written to an fp32 scratch A; the program then reads its own A back in
16x16 blocks, inverts the four diagonal blocks by forward substitution, and the six
off-diagonal blocks by 16x16 tl.dots (ieee precision, FlagGems' FLA_TRIL_PRECISION
default), storing (I + A)^-1 in k's dtype.  On Hopper FlagGems reads and writes those blocks
through on-device tensor descriptors (USE_TMA), for which a Triton allocator is installed.

FlagGems' launch: its @libtuner picks BK in (32, 64, 128), warps in (2, 4, 8), stages in
(2, 3, 4) per (H, K, BT); triton_v1 fixes the middle of that grid (BK 64, 4 warps, 3
stages) and FlagGems' Hopper choice USE_TMA = True.  Knobs: `bk`, `num_warps`,
`num_stages`, `use_tma` (None: tensor descriptors on a CUDA device of compute capability 9,
as FlagGems' is_tma_supported; never under the CPU interpreter).  The scratch A and the
zeroed A_inv are allocated in `prepare`, as FlagGems allocates them per call.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common

LAST_INFO: dict[str, Any] = {}
CHUNK = 64  # FlagGems' chunk_size (the kernel's solve is written for 64)
FLAGGEMS_LAUNCH = {"bk": 64, "num_warps": 4, "num_stages": 3}


@dataclass(frozen=True)
class FusedKKTInvConfig:
    bk: int | None = None  # None: 64 (key columns per K K^T step)
    num_warps: int | None = None  # None: 4
    num_stages: int | None = None  # None: 3
    use_tma: bool | None = None  # None: FlagGems' is_tma_supported (Hopper)


def _pick(cfg: FusedKKTInvConfig, name: str) -> int:
    value = getattr(cfg, name)
    return int(value) if value is not None else FLAGGEMS_LAUNCH[name]


def _tma(cfg: FusedKKTInvConfig, device: torch.device) -> bool:
    if os.environ.get("TRITON_INTERPRET") == "1" or device.type != "cuda":
        return False
    if cfg.use_tma is not None:
        return bool(cfg.use_tma)
    return torch.cuda.get_device_capability(device)[0] == 9


def _install_allocator(device: torch.device) -> None:
    def alloc(size: int, _alignment: int, _stream: int | None) -> torch.Tensor:
        return torch.empty(size, dtype=torch.int8, device=device)

    triton.set_allocator(alloc)


def prepare(
    cfg: FusedKKTInvConfig, g: torch.Tensor, k: torch.Tensor, beta: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor]]:
    mod = _common.load_source("flaggems_gdn_fused_kkt_inv")
    if g.dim() != 3 or k.dim() != 4 or beta.shape != g.shape:
        raise ValueError("g [b, t, h] fp32, k [b, t, hg, kd], beta [b, t, h]")
    b, t, hg, kd = k.shape
    h = beta.shape[-1]
    bk, warps, stages = (_pick(cfg, n) for n in ("bk", "num_warps", "num_stages"))
    use_tma = _tma(cfg, k.device)
    if use_tma:
        _install_allocator(k.device)
    nt = triton.cdiv(t, CHUNK)
    g_out = torch.empty_like(g)
    a = torch.empty(b, t, h, CHUNK, device=g.device, dtype=torch.float32)
    a_inv = torch.zeros(b, t, h, CHUNK, device=g.device, dtype=k.dtype)
    grid = (nt, b * h)
    kernel = mod.chunk_gated_delta_rule_fused_cumsum_kkt_solve_tril_kernel

    def launch() -> tuple[torch.Tensor, torch.Tensor]:
        handle = kernel[grid](
            g_in=g, g_out=g_out, k=k, beta=beta, A=a, A_inv=a_inv, cu_seqlens=None,
            chunk_indices=None, T=t, H=h, Hg=hg, K=kd, BT=CHUNK, BK=bk, IS_VARLEN=False,
            USE_G=True, USE_TMA=use_tma, DOT_PRECISION="ieee",
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1,
            kernel_names=["chunk_gated_delta_rule_fused_cumsum_kkt_solve_tril_kernel"],
            bk=bk, num_warps=warps, num_stages=stages, use_tma=use_tma, programs=nt * b * h,
        )  # fmt: skip
        return g_out, a_inv

    return launch
