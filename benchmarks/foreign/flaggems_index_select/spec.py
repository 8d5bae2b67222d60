"""FlagGems' index_select along the last dimension (FlagGems v5.0.2, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_index_select` and never committed.

Why this one as the set's memory-bound gather: FlagGems replaces torch's `index_select`
with it when it is enabled, and speculative decoding with a reduced draft vocabulary
(EAGLE-3's 32,000-token draft vocabulary over Llama-3.1-8B's 128,256) restricts the target
model's logits to the draft's tokens, `logits.index_select(-1, draft_ids)`, to compare the
two distributions.  Each program takes one row and 512 consecutive selected columns: it
loads their 512 ids, gathers the row's values at those columns (a scattered read, about one
column in four of the row) and stores them contiguously.  Both trials are that map: a
64-token decode step (64 x 63 programs, launch-sized) and an 8192-token training sequence
of EAGLE-3's draft head (516,096 programs, large).  The floor is reading each selected value
and the ids once and writing the output once; the gathered reads touch most of each row's
32-byte sectors, so the DRAM traffic can reach the whole selected span of the row.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_index_select")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)
INT64 = 8


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each selected value read once and written once, the int64 ids read once."""
    return 2 * d["tokens"] * d["draft_vocab"] * ELEMENT_SIZE[dtype] + d["draft_vocab"] * INT64


def flops(d: Mapping[str, int]) -> int:
    """No arithmetic on the values: one bounds check per selected value."""
    return d["tokens"] * d["draft_vocab"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_index_select", "tokens", "vocab", "draft_vocab"
)
_reference = _common.forward_reference("flaggems_index_select")
_baselines = _common.forward_baselines(
    "flaggems_index_select",
    (
        "torch",
        "torch",
        "the same columns by torch.index_select in the input dtype",
        "torch_index_select",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_index_select.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8), "tile_m",
         "rows per program; None: FlagGems' heuristic, min(4, next_pow2(cdiv(256, vocab))) "
         "(1 at any vocabulary of 256 or more)"),
    Knob("block_n", "int", (None, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "selected columns per program; None: FlagGems' heuristic, next_pow2(cdiv(vocab, "
         "16)) clamped to 16..512 (512 here)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_index_select",
    description=(
        "FlagGems' index_select over the last dimension (v5.0.2), a target model's logits "
        "restricted to a draft vocabulary: one program per row and 512 selected columns "
        "gathers the row's values at their ids and stores them contiguously"
    ),
    dims=(
        Dim("tokens", "tokens (rows of logits)", "rows"),
        Dim("vocab", "the target model's vocabulary (columns per input row)"),
        # block_n tiles the selected columns (the grid's second axis is draft_vocab / block_n).
        Dim("draft_vocab", "the draft vocabulary (columns selected per row)", "row_len"),
    ),
    trials=(
        Trial(
            "eagle3_llama31_8b_decode64",
            {"tokens": 64, "vocab": 128256, "draft_vocab": 32000},
            "Llama-3.1-8B's logits restricted to EAGLE-3's 32,000-token draft vocabulary "
            "for a 64-token decode step: 64 x 63 programs, 8.2 MB moved (bf16)",
        ),
        Trial(
            "eagle3_llama31_8b_train8k",
            {"tokens": 8192, "vocab": 128256, "draft_vocab": 32000},
            "the same for an 8192-token training sequence of the draft head: 516,096 "
            "programs, 1.05 GB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="index_select",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
