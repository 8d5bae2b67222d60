"""FlagGems' bucket-sort top-k for DeepSeek sparse attention (FlagGems v5.0.2, Apache-2.0),
as kbopt sees it: a kernel nobody here wrote, fetched into third_party/ by
scripts/fetch_third_party.py (`flaggems_bucket_topk`); nothing of it is committed.

DeepSeek-V3.2's sparse attention keeps, for every query row, the 2048 KV positions its
lightning indexer scores highest; FlagGems exports this kernel (`bucket_sort_topk`) for
that selection.  One program per row makes a radix select of the row's visible fp32
scores: a 256-bin histogram of each key's top byte over the row, the threshold bin found
by a reverse cumsum, the columns above it stored and the bin's own compacted, then up to
four rounds refining the candidates a byte at a time.  The output is [rows, 2048] int32
columns in the kernel's fixed order.  The floor is reading every row's visible scores once
and writing the indices (the kernel reads them twice, plus the candidates per round).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_bucket_topk")

CONTEXTS = ("reduction", "memory-bound")


def visible(d: Mapping[str, int]) -> int:
    """Scores visible over all rows: row i sees s - gap * (rows - 1 - i) columns."""
    rows = d["rows"]
    return rows * d["s"] - d["gap"] * rows * (rows - 1) // 2


def flops(d: Mapping[str, int]) -> int:
    """None counted: key bit tricks, histograms, compares and integer scans only."""
    return 0


def bytes_moved(d: Mapping[str, int]) -> int:
    """The visible fp32 scores once, the int32 indices once, the row bounds."""
    return 4 * visible(d) + 4 * d["rows"] * d["k"] + 8 * d["rows"]


_make_inputs = _common.forward_make_inputs("flaggems_bucket_topk", "rows", "s", "k", "gap")
_reference = _common.forward_reference("flaggems_bucket_topk")
_baselines = _common.forward_baselines(
    "flaggems_bucket_topk",
    (
        "torch",
        "torch",
        "torch.topk's (k + 1)-th visible score as the threshold, the kept columns ordered by the "
        "key byte that decided them (int64 keys of every score)",
        "torch_bucket_topk",
    ),
)

_launch_info = _common.triton_launch_info("foreign.flaggems_bucket_topk.launcher")

TRITON_KNOBS = (
    Knob(
        "bs",
        "int",
        (None, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192),
        "tile_n",
        "columns per step of the two passes over the row (histogram, then store and "
        "compact); None: the autotune list's first, 32",
    ),
    Knob(
        "bss",
        "int",
        (None, 32, 64, 128, 256, 512, 1024),
        "tile_n",
        "threshold-bin candidates per step of the refinement rounds; None: 32",
    ),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps", "warps per program; None: 1"),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the passes' loads; None: 1",
    ),
)

SPEC = KernelSpec(
    name="flaggems_bucket_topk",
    description=(
        "FlagGems' bucket-sort top-k (v5.0.2): per row of indexer scores, a byte-wise radix "
        "select by 256-bin histograms, the k columns stored in a fixed order, fp32 scores"
    ),
    dims=(
        Dim("rows", "query rows (one program each)", "rows"),
        Dim("s", "score columns per row (the longest row's visible length)", "row_len"),
        Dim("k", "columns kept per row (at most every row's visible length)"),
        Dim("gap", "visible-length difference between consecutive rows (1: causal prefill)"),
    ),
    trials=(
        Trial(
            "prefill_dsv32_64k",
            {"rows": 4096, "s": 65536, "k": 2048, "gap": 1},
            "DeepSeek-V3.2's indexer top-2048 over a 4096-token prefill chunk ending a 64K "
            "context (row i sees 61,441 + i positions): 4096 programs, 1 GB of scores",
        ),
        Trial(
            "decode_dsv32_32k",
            {"rows": 64, "s": 32768, "k": 2048, "gap": 256},
            "the same selection at a 64-request decode step, contexts 16,640 to 32,768 "
            "tokens: 64 programs, one per request",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    tolerances={"bfloat16": 1e-9, "float16": 1e-9, "float32": 1e-9},
    entry_point="bucket_topk",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    dtype="float32",
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
