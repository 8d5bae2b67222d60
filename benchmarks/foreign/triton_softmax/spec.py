"""The Triton tutorial's fused softmax (python/tutorials/02-fused-softmax.py, MIT), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py triton_softmax` and never committed.

y = softmax(x, dim=-1) row by row, one whole row per step of a persistent program (the
tutorial benchmarks fp32).  No matmul: the floor is reading x and writing y once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "triton_softmax")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "float32") -> int:
    return ELEMENT_SIZE[dtype] * 2 * d["rows"] * d["cols"]


_make_inputs = _common.forward_make_inputs("triton_softmax", "rows", "cols")
_reference = _common.forward_reference("triton_softmax")
_baselines = _common.forward_baselines(
    "triton_softmax",
    ("torch", "torch", "torch.softmax(x, -1)", "torch_softmax"),
)


_launch_info = _common.triton_launch_info("foreign.triton_softmax.launcher")


TRITON_KNOBS = (
    Knob(
        "num_warps", "int", (1, 2, 4, 8, 16, 32), "warps", "warps per program (one row at a time)"
    ),
    Knob(
        "num_stages",
        "int",
        (1, 2, 3, 4, 5, 6),
        "pipeline_stages",
        "pipelining depth of the persistent row loop (next rows' loads in flight)",
    ),
)

SPEC = KernelSpec(
    name="triton_softmax",
    description="the Triton tutorial's fused row softmax (02-fused-softmax): persistent programs, fp32",
    dims=(
        Dim("rows", "independent rows", "rows"),
        Dim("cols", "elements per row (the softmax axis)", "row_len"),
    ),
    trials=(
        Trial(
            "large",
            {"rows": 4096, "cols": 8192},
            "the tutorial's benchmark (4096 rows) at 8192 columns: 268 MB moved, bandwidth-bound",
        ),
        Trial(
            "short_rows",
            {"rows": 32768, "cols": 1024},
            "attention-score-like short rows: 268 MB over 8x more rows, per-row overhead shows",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fast exp and one division per element: fp32 ~1e-6 relative; fp16/bf16 one rounding
    tolerances={"float32": 1e-5, "float16": 2e-3, "bfloat16": 1e-2},
    entry_point="softmax",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    dtype="float32",
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
