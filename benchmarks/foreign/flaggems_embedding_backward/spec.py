"""FlagGems' embedding backward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_embedding_backward` and never committed.

Why this one as the set's atomics: FlagGems replaces torch's `embedding_dense_backward`
with it when it is enabled, and every fine-tuning step of a language model whose embedding
is trained ends in it: the gradient of each token's embedding row is added into the
table's gradient.  One program per token and 128 hidden columns adds its fp32-converted
gradient values with `tl.atomic_add` into the token's row of an fp32 table; text repeats
tokens (a Zipf law), so frequent tokens' rows take many contended adds.  Around the
kernel FlagGems zero-fills the whole [vocab, hidden] fp32 table and casts it to the
gradient's dtype afterwards, which at a 128k vocabulary moves far more bytes than the
scatter itself: the timed call is all three, as FlagGems runs them.  Both trials are
Llama-3.2-1B (128256 tokens, hidden 2048, its embedding tied to the output head):
fine-tuning on one 2048-token sequence, and on a 16-sequence batch.  Output: the [vocab,
hidden] gradient in the dtype.  The floor is reading the gradient rows and their ids once
and writing the table's gradient once in the dtype.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_embedding_backward")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "multi-kernel")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The gradient rows (dtype) and their int64 ids read once, the [vocab, hidden]
    gradient written once in the dtype (FlagGems' fp32 table is zeroed, added into and
    read back for the cast: about five times that, not counted)."""
    es = ELEMENT_SIZE[dtype]
    return d["tokens"] * (d["hidden"] * es + 8) + d["vocab"] * d["hidden"] * es


def flops(d: Mapping[str, int]) -> int:
    """One (atomic) add per gradient value."""
    return d["tokens"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_embedding_backward", "tokens", "vocab", "hidden"
)
_reference = _common.forward_reference("flaggems_embedding_backward")
_baselines = _common.forward_baselines(
    "flaggems_embedding_backward",
    (
        "torch",
        "torch",
        "the same gradient by torch's embedding_dense_backward (sort by token, then "
        "segment sums) in the input dtype",
        "torch_embedding_backward",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_embedding_backward.launcher")


TRITON_KNOBS = (
    Knob("block_d", "int", (None, 32, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "hidden columns per program (one token's row is split over hidden / block_d "
         "programs); None: FlagGems' 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_embedding_backward",
    description=(
        "FlagGems' embedding backward (v5.0.2): the fp32 [vocab, hidden] table zero-filled, "
        "one program per token and 128 columns atomically adding its gradient into the "
        "token's row, then the table cast to the dtype (three launches)"
    ),
    dims=(
        Dim("tokens", "tokens in the batch (rows of the gradient)", "rows"),
        Dim("vocab", "rows of the embedding table"),
        Dim("hidden", "hidden size (columns of the table)", "row_len"),
    ),
    trials=(
        Trial(
            "llama3_2_1b_1seq",
            {"tokens": 2048, "vocab": 128256, "hidden": 2048},
            "Llama-3.2-1B's embedding gradient for one 2048-token sequence: 32768 programs, "
            "8 MB of gradient rows scattered into a 1 GB fp32 table (zeroed and cast in the "
            "call), 534 MB moved at the floor",
        ),
        Trial(
            "llama3_2_1b_16seq",
            {"tokens": 32768, "vocab": 128256, "hidden": 2048},
            "a 16-sequence batch of the same: 524288 programs, 134 MB of gradient rows, 660 "
            "MB moved at the floor",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums (atomics in any order) rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="embedding_backward",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
