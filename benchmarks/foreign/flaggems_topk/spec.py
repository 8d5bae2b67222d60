"""FlagGems' top-k (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody here
wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
flaggems_topk` and never committed.

Why this one as the set's selection kernel: FlagGems replaces torch's `topk` with it when
it is enabled, and a serving engine's top-k filter before sampling asks exactly this of
every request's logits: the k largest of a vocabulary-wide row and their token ids.  On
stock Triton it is two launches.  The first splits each row into 1024-column chunks, one
program each, and runs k rounds of max + argmax over the chunk held in registers (k passes
over the same data, no memory traffic after the load: a reduction whose cost grows with
k).  The second gives each row one program that bitonic-sorts all its chunks' candidates
(126 x 50 padded to 8192) with their columns and keeps the first k: 91 compare-and-swap
rounds over 8192 elements in one program.  Both trials are Llama-3.1-8B's 128256-token
vocabulary with k = 50 (the usual top-k default): one sequence's decode step (126 + 1
programs) and a 256-sequence batch.  Outputs: the values in the dtype and the columns as
int64, [rows, k] each.  The floor is reading the logits once and writing the outputs once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_topk")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "multi-kernel")


def _chunks(d: Mapping[str, int]) -> int:
    chunk = 256 if d["columns"] < 1024 else 1024
    return -(-d["columns"] // max(chunk, 1 << (d["k"] - 1).bit_length()))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once, the k values (dtype) and columns (int64) of each row written
    once; the candidates between the launches are not counted."""
    es = ELEMENT_SIZE[dtype]
    return es * d["rows"] * d["columns"] + (es + 8) * d["rows"] * d["k"]


def flops(d: Mapping[str, int]) -> int:
    """Comparisons, counted in the kernels' code at FlagGems' chunking: per row, k rounds
    of a max, an argmax and a knock-out over every column, then the merge's
    log2(B) (log2(B) + 1) / 2 compare-and-swap rounds over B = the candidates padded to a
    power of two."""
    block = 1 << (_chunks(d) * d["k"] - 1).bit_length()
    rounds = int(math.log2(block))
    return d["rows"] * (3 * d["k"] * d["columns"] + block * rounds * (rounds + 1) // 2)


_make_inputs = _common.forward_make_inputs("flaggems_topk", "rows", "columns", "k")
_reference = _common.forward_reference("flaggems_topk")
_baselines = _common.forward_baselines(
    "flaggems_topk",
    (
        "torch",
        "torch",
        "the same selection by torch.topk (largest, sorted) in the input dtype",
        "torch_topk",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_topk.launcher")


TRITON_KNOBS = (
    Knob("chunk_size", "int", (None, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "columns per stage-1 program (a power of two, at least k); fewer chunks mean fewer "
         "candidates to sort in stage 2; None: FlagGems' 1024 (256 below 1024 columns)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per stage-1 program (the k max/argmax rounds); None: Triton's default 4"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per stage-2 program (the bitonic sort of a row's candidates); None: "
         "Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_topk",
    description=(
        "FlagGems' top-k (v5.0.2, stock-Triton path): k rounds of max + argmax per "
        "1024-column chunk, then one bitonic argsort of each row's chunk candidates; two "
        "launches, values in the dtype and int64 columns"
    ),
    dims=(
        Dim("rows", "rows (sequences whose logits are filtered)", "rows"),
        Dim("columns", "columns per row (the vocabulary)", "row_len"),
        Dim("k", "values kept per row"),
    ),
    trials=(
        Trial(
            "decode_1seq_llama8b_top50",
            {"rows": 1, "columns": 128256, "k": 50},
            "one sequence's decode step over Llama-3.1-8B's 128256-token vocabulary, k = 50: "
            "126 stage-1 programs and one stage-2 program sorting 8192 candidates, 0.26 MB "
            "moved (0.13 MB more through the candidates)",
        ),
        Trial(
            "batch256_llama8b_top50",
            {"rows": 256, "columns": 128256, "k": 50},
            "a 256-sequence batch over the same vocabulary: 32256 stage-1 programs, 256 "
            "stage-2 programs, 66 MB moved (32 MB more through the candidates), 5.1 G "
            "comparisons",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # values picked, not computed, and columns: exact
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="topk",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
