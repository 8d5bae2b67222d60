"""GemLite's reverse split-K GEMV (gemlite/triton_kernels/gemv_revsplitK_kernels.py, 0.6.0.post2:
`gemv_INT_revsplitK_kernel`, with `load_ptr` and `dequantize` of its triton_kernels/utils.py),
launched as GemLite's `gemv_revsplitK_forward` launches it on an H100 so that its launch
choices are knobs.

GemLite's default matmul for 1 to 4 activation rows when the weights have fewer than 8 bits
(`get_matmul_type`: GEMV_REVSPLITK), here its A16W4 path (HQQ's 4-bit weights, group 64, as
GemLiteLinear packs them with fma_mode, the default): fp16 activations x [M, K] times 4-bit
weights packed eight to an int32 down K (W_q [K / 8, N], value k at bits 4 (k % 8) of row
k // 8), each group of `group` rows of a column with an fp16 scale and an fp16 shift
(-zero x scale), dequantized as q x scale + shift (one fma in fp16, W_group_mode 4).  One
program per (row, BLOCK_SIZE_N columns) and per pair of BLOCK_SIZE_K slices of K (grid
[M x N / BLOCK_SIZE_N, K / (2 BLOCK_SIZE_K)]): the slices' scales and shifts loaded once
(one group: BLOCK_SIZE_K x 2 never exceeds it), then twice a [BLOCK_SIZE_K, BLOCK_SIZE_N]
tile of packed words loaded, unpacked (shift, mask), dequantized and multiplied by the
row's BLOCK_SIZE_K activations in fp32, summed over K into a [1, BLOCK_SIZE_N] fp32 partial
that is added atomically (relaxed) into the fp16 output, which GemLite zero-fills first
(torch.zeros per call; the kernel cache is off by default).  No loop: the two stages are
written out, so num_stages changes nothing the compiler pipelines; A_load_order says whether
the activations are loaded before (0) or after (1) the weight tile.  B and the output are
masked (EVEN_N / EVEN_K compiled in from the shape); the scale and shift loads are not.

GemLite's launch: its H100 config file (configs/h100.json, loaded at import on an H100),
keyed by (M rounded, N, K, group, 8 per word, type 104 = fp16 x 4-bit); the entries of the
Llama 3 8B shapes are copied into `H100_TABLE`.  A shape outside the table gets GemLite's
default config (1 x 32 x 16, A_load_order 0, 1 warp, 1 stage; GemLite itself would autotune
its 18 "fast" configs there) passed through its pruner (block_n and block_k powers of two at
most N and K, block_k at most half the group and at least 8).  Fixed as GemLite passes them:
dot_prod_mode 0 (fp32 products), the fp32 accumulator (GEMLITE_FAST_GEMV_ACC off),
data_contiguous, channel_scale_mode 0, eviction policies and relaxed atomics by default.
Knobs: block_n, block_k, num_warps, num_stages, None keeping GemLite's (the load order
follows GemLite's table: no knob role names it; the config field stays for direct use).  The
output is allocated once in `prepare`; its zero fill and the kernel are the timed call (two
launches).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch

from foreign import _common

LAST_INFO: dict[str, Any] = {}
SOURCE = "gemlite_gemv_revsplitk"
HELPERS_SOURCE = "gemlite_utils"
HELPERS = ("load_ptr", "dequantize")
KERNEL = "gemv_INT_revsplitK_kernel"
W_NBITS = 4
PER_WORD = 8  # 4-bit values per int32 (GemLite's PACKING_BITWIDTH 32)

# GemLite 0.6.0.post2's configs/h100.json, GEMV_REVSPLITK, M 1, fp16 x 4-bit, 8 per word:
# (N, K, group) -> (BLOCK_SIZE_N, BLOCK_SIZE_K, A_load_order, num_warps, num_stages)
H100_TABLE: dict[tuple[int, int, int], tuple[int, int, int, int, int]] = {
    (4096, 4096, 64): (128, 8, 1, 1, 1),
    (4096, 4096, 128): (128, 8, 0, 1, 1),
    (6144, 4096, 64): (256, 8, 0, 2, 1),
    (6144, 4096, 128): (512, 8, 0, 4, 2),
    (4096, 14336, 64): (256, 8, 0, 2, 1),
    (4096, 14336, 128): (512, 8, 0, 4, 2),
    (28672, 4096, 64): (256, 8, 1, 2, 2),
    (28672, 4096, 128): (512, 8, 0, 4, 1),
    (14336, 4096, 64): (256, 8, 0, 2, 2),
    (14336, 4096, 128): (256, 8, 0, 2, 2),
}
DEFAULT = (32, 16, 0, 1, 1)  # GemLite's get_default_config_nvidia


@dataclass(frozen=True)
class GemvRevSplitKConfig:
    block_n: int | None = None  # None: GemLite's H100 table (256 at the trials), else 32
    block_k: int | None = None  # None: GemLite's table (8 at the trials), else 16, pruned
    # not a spec knob (no role names a load order): GemLite's table, activations first 0
    a_load_order: int | None = None
    num_warps: int | None = None  # None: GemLite's table (2 at the trials), else 1
    num_stages: int | None = None  # None: GemLite's table, else 1 (no loop to pipeline)


def _next_pow2(v: int) -> int:
    return 1 << max(0, v - 1).bit_length()


def gemlite_config(m: int, n: int, k: int, group: int) -> tuple[int, int, int, int, int]:
    """(block_n, block_k, a_load_order, num_warps, num_stages) as GemLite picks them on an
    H100: its config file's entry for one row, else its default config through its pruner."""
    if m == 1 and (n, k, group) in H100_TABLE:
        return H100_TABLE[(n, k, group)]
    bn, bk, order, warps, stages = DEFAULT
    bn, bk = _next_pow2(min(n, bn)), _next_pow2(min(k, bk, group))
    while bk >= 8 and bk * 2 > group:
        bk //= 2
    return bn, max(bk, 8), order, warps, stages


def kernel_module() -> Any:
    mod = _common.load_source(SOURCE)
    helpers = _common.load_source(HELPERS_SOURCE)
    # The extracted kernel calls GemLite's helpers by global name (a star import upstream).
    for name in HELPERS:
        setattr(mod, name, getattr(helpers, name))
    return mod


def _power_of_two(v: int) -> bool:
    return v >= 1 and v & (v - 1) == 0


def prepare(
    cfg: GemvRevSplitKConfig, x: torch.Tensor, w_q: torch.Tensor, scales: torch.Tensor,
    zeros: torch.Tensor, group: int,
) -> Callable[[], torch.Tensor]:  # fmt: skip
    mod = kernel_module()
    tl = mod.tl
    m, k = x.shape
    n = w_q.shape[1]
    if w_q.dtype != torch.int32 or w_q.shape[0] * PER_WORD != k:
        raise ValueError("w_q must be int32 [k / 8, n] (eight 4-bit values a word down K)")
    if k % group or scales.shape != (k // group, n) or zeros.shape != scales.shape:
        raise ValueError("scales and zeros must be [k / group, n]")
    gn, gk, gorder, gwarps, gstages = gemlite_config(m, n, k, group)
    bn = cfg.block_n or gn
    bk = cfg.block_k or gk
    order = gorder if cfg.a_load_order is None else cfg.a_load_order
    warps = cfg.num_warps or gwarps
    stages = cfg.num_stages or gstages
    if not (_power_of_two(bn) and _power_of_two(bk)) or bk < PER_WORD or 2 * bk > group:
        raise ValueError(
            "block_n and block_k must be powers of two, block_k at least 8 (one packed word) "
            "and at most half the group (both slices share one scale row)"
        )
    if order not in (0, 1):
        raise ValueError("a_load_order is 0 (activations first) or 1 (weights first)")
    to_tl = {torch.float16: tl.float16, torch.bfloat16: tl.bfloat16, torch.float32: tl.float32}
    in_tl = to_tl[x.dtype]
    meta_tl = to_tl[scales.dtype]
    out = torch.empty(m, n, dtype=x.dtype, device=x.device)
    grid = (m * -(-n // bn), -(-k // (2 * bk)))
    even_k = k % (2 * bk) == 0
    even_n = n % bn == 0
    type_id = {torch.float32: 0, torch.float16: 1, torch.bfloat16: 2}[x.dtype] * 100 + W_NBITS

    def launch() -> torch.Tensor:
        out.zero_()
        handle = mod.gemv_INT_revsplitK_kernel[grid](
            x, w_q, out, scales, zeros, None, m, n, k,
            W_nbits=W_NBITS, group_size=group, unpack_mask=2**W_NBITS - 1,
            elements_per_sample=PER_WORD, type_id=type_id,
            use_prehook=False,
            stride_am=x.stride(0), stride_ak=x.stride(1),
            stride_bk=w_q.stride(0), stride_bn=w_q.stride(1),
            stride_cm=out.stride(0), stride_cn=out.stride(1),
            stride_meta_a_m=0, stride_meta_a_g=0,
            stride_meta_g=scales.stride(0), stride_meta_n=scales.stride(1),
            input_dtype=in_tl, output_dtype=in_tl, acc_dtype=tl.float32, meta_dtype=meta_tl,
            channel_scale_mode=0, W_group_mode=4, zero_is_scalar=False,
            BLOCK_SIZE_M=1, BLOCK_SIZE_N=bn, BLOCK_SIZE_K=bk, A_load_order=order,
            dot_prod_mode=0, data_contiguous=True, dump_b_val=0, EVEN_K=even_k, EVEN_N=even_n,
            num_warps=warps, num_stages=stages,
        )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=2, kernel_names=["zero fill", KERNEL], block_n=bn,
            block_k=bk, a_load_order=order, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1], k_splits=grid[1], atomic_adds_per_output=grid[1],
            even_n=even_n, even_k=even_k, metrics={"num_splits": grid[1]},
        )  # fmt: skip
        return out

    return launch
