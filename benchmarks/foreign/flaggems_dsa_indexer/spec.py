"""FlagGems' DSA lightning indexer logits (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into third_party/ by scripts/fetch_third_party.py
(`flaggems_dsa_indexer`); nothing of it is committed.

DeepSeek-V3.2's indexer on a ragged prefill batch: for every query token and every key row
inside its causal window, the sum over the indexer's 64 heads of weight * relu(q . k), fp32
logits, -inf outside the window (the top-2048 that follows is left out).  q and the keys
are cast to fp16 in the kernel and the products accumulated in fp16.  The floor is the
larger of the tensor-core time for the visible pairs (2 * h * d flops each) and the time to
read q, the keys and the weights once and write the visible logits.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_dsa_indexer")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "reduction", "small-grid")  # decode: 16 of 256 programs work


def visible_pairs(d: Mapping[str, int]) -> int:
    """(query, key) pairs inside the windows: each sequence's last m positions see their
    causal prefix."""
    m, ctx = d["m"], d["ctx"]
    return d["seqs"] * (m * (ctx - m) + m * (m + 1) // 2)


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["h"] * d["d"] * visible_pairs(d)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and the keys once, fp32 weights, int32 windows, the visible fp32 logits written."""
    e = ELEMENT_SIZE[dtype]
    nq = d["seqs"] * d["m"]
    qk = nq * d["h"] * d["d"] + d["seqs"] * d["ctx"] * d["d"]
    return e * qk + 4 * (nq * d["h"] + 2 * nq + visible_pairs(d))


_make_inputs = _common.forward_make_inputs("flaggems_dsa_indexer", "seqs", "ctx", "m", "h", "d")
_reference = _common.forward_reference("flaggems_dsa_indexer")
_baselines = _common.forward_baselines(
    "flaggems_dsa_indexer",
    (
        "torch",
        "torch",
        "128 query tokens at a time: einsum scores in the input dtype, relu, weighted head sum",
        "torch_dsa_indexer",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_dsa_indexer.launcher")


TRITON_KNOBS = (
    Knob(
        "bq",
        "int",
        (None, 1, 2, 4),
        "rows_per_program",
        "query tokens per program (the tl.dot's M is bq * h); None: FlagGems' 1",
    ),
    Knob(
        "bk",
        "int",
        (None, 32, 64, 128, 256),
        "kv_tile",
        "key rows per tl.dot step (its N); None: FlagGems' 64",
    ),
    Knob(
        "tk",
        "int",
        (None, 512, 1024, 2048, 4096),
        "tile_n",
        "key rows (logit columns) per program's tile, walked bk at a time; the grid's second "
        "axis is cdiv(keys, tk); None: FlagGems' 2048",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8),
        "warps",
        "warps per program; None: 4 (FlagGems' first autotune configuration; its other: 8)",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the key loop; None: 2 (FlagGems' first autotune "
        "configuration; its other: 4)",
    ),
)

SPEC = KernelSpec(
    name="flaggems_dsa_indexer",
    description=(
        "FlagGems' DSA lightning indexer logits (v5.0.2): per query token and key tile, all "
        "64 indexer heads against the window's key rows in fp16 tl.dot steps, relu, "
        "weighted head sum, fp32 logits"
    ),
    dims=(
        Dim("seqs", "sequences packed in the batch", "batch"),
        Dim("ctx", "positions (key rows) per sequence"),
        Dim("m", "query tokens per sequence (its last m positions)", "rows"),
        Dim("h", "indexer heads (a power of two)"),
        Dim("d", "indexer head width (a power of two)"),
    ),
    trials=(
        Trial(
            "prefill_dsv32_chunk",
            {"seqs": 2, "ctx": 8192, "m": 2048, "h": 64, "d": 128},
            "DeepSeek-V3.2's indexer (64 heads of width 128) over two sequences' 2k-token "
            "prefill chunks after 6k-token prefixes: 4096 x 16384 logits, 29 M visible "
            "pairs, 481 GFLOP",
        ),
        Trial(
            "decode_dsv32",
            {"seqs": 16, "ctx": 2048, "m": 1, "h": 64, "d": 128},
            "the same indexer for 16 sequences' next token over 2k-token contexts: 16 x "
            "32768 logits, 16 of 256 programs with keys to score",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # q . k accumulated in fp16 (|q . k| ~ 11), the weighted head sum in fp16
    tolerances={"bfloat16": 1e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="dsa_indexer",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
