"""FlagGems' matrix-vector product (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_mv` and never committed.

Why this one as the set's GEMV: FlagGems replaces aten::mv with it when it is enabled, and a
single-sequence decode step (batch 1) whose projection is written W @ h on the token's 1-D
hidden state (torch.matmul of a matrix and a vector) reaches aten::mv; every weight element
is read once and multiplied once, so the step streams the weights.  One program per output
row (FlagGems' first configuration) walks the row in 32-column steps with 4 warps, keeping
fp32 products in a 1 x 32 accumulator summed at the end: no tensor cores, and nothing
reused but x.  Memory-bound on the weight.  Both trials are a batch-1 decode step of
Llama 3.1 8B in bf16: the grouped-query k_proj (1024 x 4096: 1024 programs, 8.4 MB moved)
and the LM head over the 128,256-token vocabulary (128,256 x 4096: 128,256 programs,
1.05 GB moved).  The floor is reading the weight and x once and writing y once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_mv")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "reduction", "memory-bound")  # a GEMV: one multiply per weight element


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The weight and x read once, y written once."""
    n, m = d["out_features"], d["in_features"]
    return (n * m + m + n) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per weight element."""
    return 2 * d["out_features"] * d["in_features"]


_make_inputs = _common.forward_make_inputs("flaggems_mv", "out_features", "in_features")
_reference = _common.forward_reference("flaggems_mv")
_baselines = _common.forward_baselines(
    "flaggems_mv",
    ("torch", "torch", "the same product by torch.mv (cuBLAS' GEMV)", "torch_mv"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_mv.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 1, 2, 4, 8, 16, 32), "rows_per_program",
         "output rows per program (weight rows read together); None: the tuning YAML's "
         "first value, 1"),
    Knob("block_m", "int", (None, 32, 64, 128, 256, 512, 1024), "tile_k",
         "columns of the row loaded per loop step (the reduction tile); None: the tuning "
         "YAML's first value, 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: the tuning YAML's first value, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipelined loop steps in flight; None: the tuning YAML's first value, 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_mv",
    description=(
        "FlagGems' matrix-vector product (v5.0.2, mv_kernel): one program per output row "
        "walks the weight row in 32-column steps of fp32 products (4 warps, 3 stages), "
        "summed at the end; no tensor cores"
    ),
    dims=(
        Dim("out_features", "rows of the weight (output elements)", "rows"),
        Dim("in_features", "columns of the weight (the reduction, x's length)", "row_len"),
    ),
    trials=(
        Trial(
            "decode_b1_k_proj_llama31_8b",
            {"out_features": 1024, "in_features": 4096},
            "a batch-1 decode step of Llama 3.1 8B through the grouped-query k_proj "
            "(1024 x 4096, W @ h on one token's hidden state): 1024 programs, 8.4 MB "
            "moved (bf16)",
        ),
        Trial(
            "decode_b1_lm_head_llama31_8b",
            {"out_features": 128256, "in_features": 4096},
            "the same step's LM head over the 128,256-token vocabulary (128,256 x 4096): "
            "128,256 programs, 1.05 GB moved (bf16)",
        ),
    ),
    backoff_dim="out_features",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums of up to 4096 products, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mv",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
