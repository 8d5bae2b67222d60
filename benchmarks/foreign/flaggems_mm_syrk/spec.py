"""FlagGems' A @ A^T (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_mm_syrk` and never committed.

Why this one: FlagGems replaces aten::mm with its own when it is enabled, and sends
`mm(x, x.mT)` -- a matrix times its own transpose as a view -- to this SYRK kernel, which
computes only the lower triangle of tiles and stores each below the diagonal twice.  Muon
(the optimizer of Moonlight and Kimi K2, torch.optim.Muon) forms exactly that product,
X @ X.mT, in every Newton-Schulz iteration of every weight update: five per matrix, X the
bf16 weight-shaped update with its wide side last.  A training step's path, not a serving
one.  One program per lower-triangle 32 x 32 tile (FlagGems' first configuration) walks K
in 32-deep tl.dot steps with 2 warps and 2 stages.  Trials: Llama 3.1 8B's down_proj
weight (X [4096, 14336]: 8256 programs, a 448-step loop, compute-bound) and Llama 3.2 1B's
grouped-query k_proj (X [512, 2048]: 136 programs, about one per SM), both already wide
side last, so X is row-major (a tall weight's X is its transpose, a column-major view the
kernel takes through its strides; not a trial here).  The floor is the
larger of the tensor-core time for the triangle's M (M + 1) K flops and the time to read
A once and write the whole M x M output.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_mm_syrk")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm",)  # a GEMM of one operand, half of it computed


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """A read once, the whole symmetric output written once."""
    m, k = d["m"], d["k"]
    return (m * k + m * m) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """The lower triangle with its diagonal, a multiply and an add per term: the product's
    own work (cuBLAS' full GEMM does 2 M^2 K)."""
    return d["m"] * (d["m"] + 1) * d["k"]


_make_inputs = _common.forward_make_inputs("flaggems_mm_syrk", "m", "k")
_reference = _common.forward_reference("flaggems_mm_syrk")
_baselines = _common.forward_baselines(
    "flaggems_mm_syrk",
    (
        "torch",
        "torch",
        "torch.mm(a, a.mT): cuBLAS' full GEMM, both triangles computed",
        "torch_mm_self_transpose",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_mm_syrk.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows and columns of a square output tile (programs: the lower triangle of "
         "ceil(M / block_m) tiles a side); None: the tuning YAML's first, 32"),
    Knob("block_k", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "depth of a tl.dot step along K; None: the tuning YAML's first, 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: the tuning YAML's first, 2"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: the tuning YAML's first, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_mm_syrk",
    description=(
        "FlagGems' A @ A^T (v5.0.2, mm_kernel_syrk, aten::mm's path for mm(x, x.mT)): the "
        "lower triangle of 32 x 32 tiles in 32-deep tl.dot steps, each stored twice"
    ),
    dims=(
        Dim("m", "rows of A (the output is m x m)", "rows"),
        Dim("k", "columns of A (the reduction)"),
    ),
    trials=(
        Trial(
            "muon_ns_llama31_8b_down_proj",
            {"m": 4096, "k": 14336},
            "a Muon Newton-Schulz step's X @ X.mT for Llama 3.1 8B's down_proj weight (X "
            "[4096, 14336], wide side last): 8256 tile programs, 241 GFLOP, 151 MB moved "
            "(bf16)",
        ),
        Trial(
            "muon_ns_llama32_1b_k_proj",
            {"m": 512, "k": 2048},
            "the same product for Llama 3.2 1B's grouped-query k_proj (512 x 2048): 136 tile "
            "programs, 0.54 GFLOP, 2.6 MB moved (bf16)",
        ),
    ),
    backoff_dim="k",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation, rounded once; fp32 inputs without TF32 (allow_tf32=False)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mm_self_transpose",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
