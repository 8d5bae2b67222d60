"""FlagGems' top-k sparse attention with an attention sink (FlagGems v5.0.2, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into third_party/ by
scripts/fetch_third_party.py (`flaggems_sparse_attn_sink`); nothing of it is committed.

DeepSeek-style sparse attention after the indexer's top-k: every query token attends only
to the KV positions selected for it, over one latent KV row per position shared by all
heads, with a per-head sink logit in the softmax's denominator.  One program per query
token holds all the layer's heads on this GPU; bf16.  The floor is the larger of the
tensor-core time for the two products (4 * b * m * h * topk * d flops) and the time to read
q, the indices and the KV once and write the output (the gathered rows of neighbouring
queries overlap, so the KV pool is the least that must be read).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_sparse_attn_sink")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax", "small-grid")  # the decode trial: 32 programs


def flops(d: Mapping[str, int]) -> int:
    return 4 * d["b"] * d["m"] * d["h"] * d["topk"] * d["d"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q and the output once, the KV pool once, the int32 indices once, the fp32 sinks."""
    e = ELEMENT_SIZE[dtype]
    qo = 2 * d["b"] * d["m"] * d["h"] * d["d"]
    return e * (qo + d["b"] * d["n"] * d["d"]) + 4 * (d["b"] * d["m"] * d["topk"] + d["h"])


_make_inputs = _common.forward_make_inputs(
    "flaggems_sparse_attn_sink", "b", "m", "h", "d", "n", "topk"
)
_reference = _common.forward_reference("flaggems_sparse_attn_sink")
_baselines = _common.forward_baselines(
    "flaggems_sparse_attn_sink",
    (
        "torch",
        "torch",
        "the selected rows gathered per query, two einsums around an fp32 softmax with the sink",
        "torch_sparse_attn_sink",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_sparse_attn_sink.launcher")


TRITON_KNOBS = (
    Knob(
        "block",
        "int",
        (None, 16, 32, 64, 128),
        "kv_tile",
        "selected KV rows gathered per step (the tl.dots' N and K); None: FlagGems' 64",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16),
        "warps",
        "warps per program; None: FlagGems' 8",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the top-k loop; None: Triton's default 3",
    ),
)

SPEC = KernelSpec(
    name="flaggems_sparse_attn_sink",
    description=(
        "FlagGems' top-k sparse attention with an attention sink (v5.0.2): per query token, "
        "all heads over its selected rows of a shared latent KV in tl.dot steps, online "
        "softmax, bf16"
    ),
    dims=(
        Dim("b", "batch rows (each its own KV)", "batch"),
        Dim("m", "query tokens per batch row", "rows"),
        Dim("h", "query heads on this GPU (a power of two, at least 16)"),
        Dim("d", "latent head width (a power of two)"),
        Dim("n", "KV positions per batch row (the queries are the last m)"),
        Dim("topk", "positions selected per query"),
    ),
    trials=(
        Trial(
            "prefill_dsv32_tp8",
            {"b": 1, "m": 2048, "h": 16, "d": 512, "n": 8192, "topk": 2048},
            "DeepSeek-V3.2's sparse attention shapes (128 heads at TP8, 512-wide latent rows, "
            "top-2048 from the indexer) over a 2k-token prefill chunk after a 6k-token prefix: "
            "137 GFLOP on 2048 programs",
        ),
        Trial(
            "decode_dsv32_tp8",
            {"b": 32, "m": 1, "h": 16, "d": 512, "n": 4096, "topk": 2048},
            "the same layer at a 32-sequence decode step over 4k-token contexts: 32 programs, "
            "each gathering 2048 latent rows",
        ),
    ),
    backoff_dim="m",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # p is rounded to bf16 before the second product (fp16 under the interpreter's rewrite)
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 2e-3},
    entry_point="sparse_attn_sink",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
