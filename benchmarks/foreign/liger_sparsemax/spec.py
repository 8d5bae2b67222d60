"""Liger-Kernel's sparsemax forward (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees it: a
kernel nobody here wrote, imported from the installed `liger_kernel` package (a pure-Triton
wheel, in kbopt's dev extra); nothing of it is copied here.

Sparsemax along the last dimension (the sparse alternative to softmax for attention
probabilities, routing or an output layer): torch sorts an fp32 copy of every row, then
Liger's kernel takes the cumulative sum of the sorted row, finds the support and writes
max(x - tau, 0), bf16 in and out.  No matmul: the floor is reading x once and writing y
once; the sort's fp32 copy and its passes are Liger's algorithm's cost, left out of it.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "multi-kernel", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    return 2 * ELEMENT_SIZE[dtype] * d["rows"] * d["cols"]


_make_inputs = _common.forward_make_inputs("liger_sparsemax", "rows", "cols")
_reference = _common.forward_reference("liger_sparsemax")
_baselines = _common.forward_baselines(
    "liger_sparsemax",
    (
        "torch",
        "torch",
        "the entmax package's sparsemax algorithm in plain torch, fp32 inside (sort, cumsum)",
        "torch_sparsemax",
    ),
)


TRITON_KNOBS = (
    Knob(
        "num_warps",
        "int",
        (None, 1, 2, 4, 8, 16, 32),
        "warps",
        "warps per program (one whole row); None: Liger's calculate_settings (from the row width)",
    ),
)

SPEC = KernelSpec(
    name="liger_sparsemax",
    description=(
        "Liger-Kernel's sparsemax forward (0.8.5): torch's sort of the rows, then one program "
        "per row (cumulative sum, support, threshold), bf16"
    ),
    dims=(
        Dim("rows", "rows (tokens, or query rows of every head)", "rows"),
        Dim("cols", "row length (the normalized axis)", "row_len"),
    ),
    trials=(
        Trial(
            "attention",
            {"rows": 32768, "cols": 2048},
            "sparse attention probabilities of one layer, 16 heads of 2k queries over 2k keys: "
            "134 MB moved, 32k rows of 2048 sorted",
        ),
        Trial(
            "vocab",
            {"rows": 1024, "cols": 32000},
            "sparsemax over a 32k vocabulary for 1k tokens: each row padded to a 32768 block "
            "held by 32 warps, 1024 programs",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sort and cumulative sum, one rounding of y
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="sparsemax",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    contexts=CONTEXTS,
)
