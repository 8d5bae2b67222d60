"""torchao's dual jagged column-wise fp8 quantization (torchao/prototype/moe_training/kernels/
jagged_float8_scales.py, v0.18.0: `_triton_fp8_per_group_colwise_scales_dual_kernel`),
launched as torchao's `triton_fp8_per_group_colwise_scales_dual` launches it from the
backward of `_Float8GroupedMM` (fp8 rowwise MoE training, torchao's `MoETrainingConfig` as
torchtitan applies it to the routed experts), so that its launch choices are knobs.

Before the weight-gradient grouped GEMM grad_B = grad_output^T @ A, both operands are cast
to e4m3 with one scale per column per expert (token group): the routed rows of every
expert are contiguous, group g holding rows offsets[g - 1] to offsets[g] (int32 end
offsets, each group padded to 16 rows by torchao).  The grid is (max(cdiv(N1, BLOCK_SIZE),
cdiv(N2, BLOCK_SIZE)), groups): each program owns BLOCK_SIZE columns of both tensors for
one group and walks the group's rows twice in BLOCK_SIZE_ITER-row steps (the loop bounds
come from the offsets, so the trip count differs per group): the first pass keeps a running
column-wise absolute maximum in the input dtype, then the scale 448 / max(amax, 1e-12) (in
fp64, rounded down to a power of two) is stored into scales[g * N + column]; the second pass
re-reads the rows, multiplies, clamps to +-448 and stores e4m3 into a column-major output
(row stride 1, column stride rows), so the GEMM reads it transposed.  The two tensors
share the row loops; a column block past the narrower tensor's width does only the wider
one's work.  No tl.dot.

torchao's launch: autotuned over 36 configurations (BLOCK_SIZE 32, 64, 128 x
BLOCK_SIZE_ITER 64, 128, 256 x 4 or 8 warps x 2 or 3 stages, key: rows and groups), with
round_scales_to_power_of_2 on as the backward passes it; the decorator is dropped and
`triton_v1` is the first configuration (32 columns, 64-row steps, 4 warps, 2 stages).
Knobs: both blocks, the warps and the stages, None keeping those; the blocks are powers
of two.  torchao allocates the four outputs per call; here they are made in `prepare`.
Under the CPU interpreter (tests only) the fp32 -> e4m3 cast is done by torch (SGLang's
group quantization's `interpreter_fp8_cast`: Triton 3.6's interpreter loses the rounding's
carry into the exponent, 127.6 became 64, not 128).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
import triton

from foreign import _common
from foreign.sglang_fp8_group_quant.launcher import interpreter_fp8_cast

LAST_INFO: dict[str, Any] = {}
SOURCE = "torchao_jagged_fp8_colwise"
KERNEL = "_triton_fp8_per_group_colwise_scales_dual_kernel"
# the first of torchao's kernel_configs_2D_dual
TORCHAO_FIRST = {"BLOCK_SIZE": 32, "BLOCK_SIZE_ITER": 64, "num_warps": 4, "num_stages": 2}
EPS = 1e-12  # torchao's EPS
FP8 = torch.float8_e4m3fn


@dataclass(frozen=True)
class JaggedColwiseConfig:
    block_size: int | None = None  # None: torchao's first config, 32 columns a program
    block_size_iter: int | None = None  # None: torchao's first config, 64 rows a step
    num_warps: int | None = None  # None: torchao's first config, 4
    num_stages: int | None = None  # None: torchao's first config, 2


def _power_of_two(v: int) -> bool:
    return v >= 1 and v & (v - 1) == 0


def _tl_dtype(mod: Any, dtype: torch.dtype) -> Any:
    return {
        torch.float32: mod.tl.float32, torch.float16: mod.tl.float16,
        torch.bfloat16: mod.tl.bfloat16,
    }[dtype]  # fmt: skip


def prepare(
    cfg: JaggedColwiseConfig, grad_output: torch.Tensor, a: torch.Tensor, offsets: torch.Tensor
) -> Callable[[], tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]]:
    mod = _common.load_source(SOURCE)
    if grad_output.dim() != 2 or a.dim() != 2 or grad_output.shape[0] != a.shape[0]:
        raise ValueError("grad_output [rows, n1] and a [rows, n2] must share their rows")
    rows, n1 = grad_output.shape
    n2 = a.shape[1]
    groups = offsets.numel()
    bs = cfg.block_size or TORCHAO_FIRST["BLOCK_SIZE"]
    bi = cfg.block_size_iter or TORCHAO_FIRST["BLOCK_SIZE_ITER"]
    if not (_power_of_two(bs) and _power_of_two(bi)):
        raise ValueError("block_size and block_size_iter must be powers of two")
    warps = cfg.num_warps or TORCHAO_FIRST["num_warps"]
    stages = cfg.num_stages or TORCHAO_FIRST["num_stages"]
    info = torch.finfo(FP8)
    # column-major e4m3 outputs, as torchao makes them (empty_like(...).as_strided)
    out_1 = torch.empty_like(grad_output, dtype=FP8).as_strided((rows, n1), (1, rows))
    out_2 = torch.empty_like(a, dtype=FP8).as_strided((rows, n2), (1, rows))
    scales_1 = torch.empty(n1 * groups, dtype=torch.float32, device=a.device)
    scales_2 = torch.empty(n2 * groups, dtype=torch.float32, device=a.device)
    col_blocks = max(triton.cdiv(n1, bs), triton.cdiv(n2, bs))
    grid = (col_blocks, groups)
    sizes = torch.diff(offsets.long(), prepend=offsets.new_zeros(1).long()).tolist()
    longest = max(sizes) if sizes else 0
    live = sum(1 for s in sizes if s > 0) / max(1, groups)

    def launch() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        with interpreter_fp8_cast():
            handle = mod._triton_fp8_per_group_colwise_scales_dual_kernel[grid](
                grad_output, out_1, scales_1, n1, grad_output.stride(0), out_1.stride(1),
                a, out_2, scales_2, n2, a.stride(0), out_2.stride(1),
                offsets, rows, groups, info.min, info.max,
                _tl_dtype(mod, grad_output.dtype), _tl_dtype(mod, a.dtype), mod.tl.float8e4nv,
                True, BLOCK_SIZE=bs, BLOCK_SIZE_ITER=bi, EPS=EPS,
                STRIDE_INPUT_COL_1=grad_output.stride(1), STRIDE_OUTPUT_ROW_1=1,
                STRIDE_INPUT_COL_2=a.stride(1), STRIDE_OUTPUT_ROW_2=1,
                num_warps=warps, num_stages=stages,
            )  # fmt: skip
        _common.record(
            LAST_INFO, handle, kernels=1, kernel_names=[KERNEL], block_size=bs,
            block_size_iter=bi, num_warps=warps, num_stages=stages,
            programs=grid[0] * grid[1], column_blocks=col_blocks, groups=groups,
            longest_group_steps=-(-longest // bi),
            metrics={"live_program_fraction": live},
        )  # fmt: skip
        return out_1, scales_1, out_2, scales_2

    return launch
