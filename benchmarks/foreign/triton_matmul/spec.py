"""The Triton tutorial's matmul (python/tutorials/03-matrix-multiplication.py, MIT), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py triton_matmul` and never committed.

C[m, n] = A[m, k] @ B[k, n] with fp16 inputs, fp32 accumulation and an fp16 output.  The
tutorial autotunes over sixteen configurations; here each version is one configuration
(its CONFIG: tile sizes, grouping, stages, warps), `triton_v1` being the first of the
tutorial's CUDA list.  The floor is the larger of the tensor-core time (2mnk FLOPs) and
the memory time (A, B read once, C written once).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "triton_matmul")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # the skinny trial is memory-bound, the square one compute-bound


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["m"] * d["n"] * d["k"]


def bytes_moved(d: Mapping[str, int], dtype: str = "float16") -> int:
    """A and B read once (input dtype), C written once (fp16 whatever the inputs)."""
    return ELEMENT_SIZE[dtype] * (d["m"] * d["k"] + d["k"] * d["n"]) + 2 * d["m"] * d["n"]


_make_inputs = _common.forward_make_inputs("triton_matmul", "m", "n", "k")
_reference = _common.forward_reference("triton_matmul")
_baselines = _common.forward_baselines(
    "triton_matmul",
    ("torch", "torch", "torch.matmul (cuBLAS)", "torch_matmul"),
)


_launch_info = _common.triton_launch_info("foreign.triton_matmul.launcher")


TRITON_KNOBS = (
    Knob("block_size_m", "int", (16, 32, 64, 128, 256), "tile_m", "rows of C per program"),
    Knob("block_size_n", "int", (16, 32, 64, 128, 256), "tile_n", "columns of C per program"),
    Knob("block_size_k", "int", (16, 32, 64, 128), "tile_k", "depth of one tl.dot step"),
    Knob(
        "group_size_m",
        "int",
        (1, 2, 4, 8, 16, 32),
        "grouping",
        "rows of tiles launched together before moving along n (L2 reuse of B)",
    ),
    Knob("num_stages", "int", (1, 2, 3, 4, 5, 6), "pipeline_stages", "k-loop pipelining depth"),
    Knob("num_warps", "int", (2, 4, 8, 16), "warps", "warps per program"),
)

SPEC = KernelSpec(
    name="triton_matmul",
    description=(
        "the Triton tutorial's grouped-ordering fp16 matmul (03-matrix-multiplication), one "
        "fixed configuration per version instead of its autotuner"
    ),
    dims=(
        Dim("m", "rows of A and C (tokens)", "rows"),
        Dim("n", "columns of B and C (output features)"),
        Dim("k", "columns of A, rows of B (reduction length)"),
    ),
    trials=(
        Trial(
            "square",
            {"m": 4096, "n": 4096, "k": 4096},
            "the tutorial's own benchmark shape at its large end: 137 GFLOP, tensor-core bound",
        ),
        Trial(
            "skinny",
            {"m": 64, "n": 8192, "k": 8192},
            "64 tokens through an 8192x8192 weight (a decode-time projection): 134 MB of B "
            "read for 8.6 GFLOP, memory-bound, and 128-row tiles leave half of each tile empty",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, one fp16 rounding of C (rel. 5e-4) over k up to 8192 terms;
    # fp32 inputs run tl.dot in tf32 on the GPU (rel. ~1e-3)
    tolerances={"float16": 5e-3, "bfloat16": 2e-2, "float32": 5e-3},
    entry_point="matmul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    dtype="float16",
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
