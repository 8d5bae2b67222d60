"""Liger-Kernel's fused SwiGLU MLP gate/up projection (liger-kernel 0.8.5, BSD-2-Clause), as
kbopt sees it: a kernel nobody here wrote, imported from the installed `liger_kernel`
package (a pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The first half of a Llama-style MLP (LigerMLP, the inference forward): x times the gate and
the up weights in one dense dual GEMM over TMA descriptors, an L2-swizzled tile order, and
silu(gate) * up in the epilogue, the down projection's input in bf16.  The floor is the
larger of the tensor-core time for 2 * rows * dim * 2 * hidden flops and the time to read x
and both weights once and write the output.  Liger's grid has a batch axis, so at a decode
step ([batch, 1, dim]) every sequence's programs read the weights again.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # the prefill trial is compute-bound, the decode one reads weights


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["batch"] * d["seq"] * d["dim"] * 2 * d["hidden"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x and both weights read once, the output written once."""
    e = ELEMENT_SIZE[dtype]
    rows = d["batch"] * d["seq"]
    return e * (rows * d["dim"] + 2 * d["hidden"] * d["dim"] + rows * d["hidden"])


_make_inputs = _common.forward_make_inputs("liger_mlp_gate_up", "batch", "seq", "dim", "hidden")
_reference = _common.forward_reference("liger_mlp_gate_up")
_baselines = _common.forward_baselines(
    "liger_mlp_gate_up",
    (
        "torch",
        "torch",
        "HF's LlamaMLP up to the down projection: two cuBLAS GEMMs, SiLU and a multiply",
        "torch_mlp_gate_up",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_mlp_gate_up.launcher")


TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        (None, 16, 32, 64, 128),
        "tile_m",
        "sequence rows per program (a TMA box); None: 32, the autotuner's first",
    ),
    Knob(
        "block_n",
        "int",
        (None, 32, 64, 128, 256),
        "tile_n",
        "hidden columns per program (gate and up each); None: 128, the only one Liger tunes",
    ),
    Knob(
        "block_k",
        "int",
        (None, 32, 64, 128),
        "tile_k",
        "model-width depth per step (two tl.dot); None: 64, the autotuner's first",
    ),
    Knob(
        "group_m",
        "int",
        (None, 1, 2, 4, 8),
        "grouping",
        "row tiles that walk the column tiles together (L2 swizzle); None: 1, no swizzle",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8),
        "warps",
        "warps per program; None: 4, the autotuner's first",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4, 5),
        "pipeline_stages",
        "software-pipeline depth of the width loop; None: 2, the autotuner's first",
    ),
)

SPEC = KernelSpec(
    name="liger_mlp_gate_up",
    description=(
        "Liger-Kernel's fused SwiGLU MLP gate/up projection (0.8.5, inference forward): a "
        "dense dual GEMM over TMA descriptors in tl.dot tiles, L2-swizzled, SwiGLU epilogue"
    ),
    dims=(
        Dim("batch", "sequences (a grid axis of its own)", "batch"),
        Dim("seq", "tokens per sequence", "rows"),
        Dim("dim", "model width (the GEMM's reduction)"),
        Dim("hidden", "MLP intermediate size (gate and up each)"),
    ),
    trials=(
        Trial(
            "prefill_llama3_8b",
            {"batch": 1, "seq": 4096, "dim": 4096, "hidden": 14336},
            "a Llama-3.1-8B MLP (width 4096, intermediate 14336) over a 4k-token prompt: "
            "962 GFLOP, 235 MB of gate and up weights",
        ),
        Trial(
            "decode_llama32_1b",
            {"batch": 16, "seq": 1, "dim": 2048, "hidden": 8192},
            "a Llama-3.2-1B MLP (width 2048, intermediate 8192) at a 16-sequence decode step "
            "([16, 1, 2048] as HF's generate passes it): one padded row tile per sequence, "
            "67 MB of weights for 1.1 GFLOP",
        ),
    ),
    backoff_dim="seq",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation; fp32 inputs go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="mlp_gate_up",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
