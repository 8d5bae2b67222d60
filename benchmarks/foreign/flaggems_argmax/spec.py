"""FlagGems' argmax along the last dimension (FlagGems v5.0.2, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_argmax` and never committed.

Why this one as the set's reduction: FlagGems replaces torch's `argmax` with it when it is
enabled, and greedy decoding (and the greedy check of speculative decoding's draft tokens)
takes each row's argmax over the whole vocabulary at every step.  One program per row walks
the row in 4096-column tiles (rows longer than 32,768), keeping a running maximum and its
column: per tile one `tl.max` with indices, ties to the leftmost, then a masked tail tile.
Both trials are Qwen2.5-7B's 152,064-column logits: a 64-request decode step (64 programs
on 132 SMs: launch-sized) and a speculative verification of 256 requests x 8 positions
(2048 rows: large).  The floor is reading the logits once and writing one int64 per row.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_argmax")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "small-grid")
INT64 = 8


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once, one int64 column per row written."""
    return d["rows"] * (d["vocab"] * ELEMENT_SIZE[dtype] + INT64)


def flops(d: Mapping[str, int]) -> int:
    """One compare per logit."""
    return d["rows"] * d["vocab"]


_make_inputs = _common.forward_make_inputs("flaggems_argmax", "rows", "vocab")
_reference = _common.forward_reference("flaggems_argmax")
_baselines = _common.forward_baselines(
    "flaggems_argmax",
    ("torch", "torch", "the same columns by torch.argmax in the input dtype", "torch_argmax"),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_argmax.launcher")


TRITON_KNOBS = (
    Knob("tile_n", "int", (None, 1024, 2048, 4096, 8192, 16384), "tile_n",
         "columns per loop step (a tile of the row or the whole row); None: FlagGems' "
         "heuristic, next_pow2(vocab) up to 32,768 columns and 4096 above"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: FlagGems' heuristic by the tile (4 below 2048, 8 below "
         "4096, 16 from 4096 on)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_argmax",
    description=(
        "FlagGems' argmax over the last dimension (v5.0.2), greedy decoding over the "
        "vocabulary: one program per row walks it in 4096-column tiles keeping a running "
        "maximum and its leftmost column"
    ),
    dims=(
        Dim("rows", "rows of logits (requests x positions)", "rows"),
        Dim("vocab", "vocabulary (columns per row)", "row_len"),
    ),
    trials=(
        Trial(
            "qwen25_7b_greedy_decode64",
            {"rows": 64, "vocab": 152064},
            "Qwen2.5-7B's greedy decode step for 64 requests: 64 programs of 38 tiles, "
            "19.5 MB moved (bf16)",
        ),
        Trial(
            "qwen25_7b_spec_verify2048",
            {"rows": 2048, "vocab": 152064},
            "the greedy check of 8 speculative positions for 256 requests: 2048 programs, "
            "623 MB moved (bf16)",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer columns: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="argmax",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
