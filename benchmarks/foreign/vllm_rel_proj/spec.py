"""vLLM's Inkling relative-position logits projection (vLLM v0.34.0, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_rel_proj` and never committed.

Why this one: Inkling's global attention layers add a learned relative-position bias to
their logits, made per token from 16 relative channels of each query head that the fused
q/k/v/r projection emits next to q, k and v.  On every forward (vLLM's NVIDIA Inkling
path, `fused_qkvr_prep`) `qkvr_rel_proj` multiplies them by the layer's [16, rel_extent]
projection: a GEMM with K = 16 whose [tokens x heads, rel_extent] output dwarfs its inputs
(64 output values per input value at rel_extent 1024), a tl.dot per tile and then a store.
Two kernels by row count: below 2,048 rows a low-latency one of 32 x 64 tiles, above it a
throughput one that keeps a 32 x 128 projection slice in registers over two row tiles.
The model config's defaults (12 query heads over 4 KV heads of 128, hidden 1536,
rel_extent 1024; no checkpoint's own config ships in the wheel): an 8,192-token prefill
chunk (98,304 rows, the throughput kernel, 201 MB of bf16 logits written, store-bound) and
a 64-token decode step (768 rows, the low-latency kernel, 384 programs, latency-bound).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_rel_proj")

CONTEXTS = ("gemm", "memory-bound")

_SIZES = {"float32": 4, "float16": 2, "bfloat16": 2}


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The relative channels read from qkvr (16 a row), the projection read once, the
    logits written once."""
    e = _SIZES[dtype]
    rows = d["tokens"] * d["heads"]
    return (rows * 16 + 16 * d["extent"] + rows * d["extent"]) * e


def flops(d: Mapping[str, int]) -> int:
    """One K = 16 product per output value, 2 FLOPs a multiply-add."""
    return 2 * d["tokens"] * d["heads"] * 16 * d["extent"]


_make_inputs = _common.forward_make_inputs(
    "vllm_rel_proj", "tokens", "heads", "kvheads", "head", "extent"
)
_reference = _common.forward_reference("vllm_rel_proj")
_baselines = _common.forward_baselines(
    "vllm_rel_proj",
    (
        "torch",
        "torch",
        "the same by torch ops as Inkling's RelLogitsProj: the relative channels sliced "
        "from qkvr, one einsum with the projection in the dtype",
        "torch_rel_proj",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_rel_proj.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "(token, head) rows per tile; None: vLLM's 32 (either kernel)"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "relative-logit columns per tile; None: vLLM's 64 (low latency) or 128 "
         "(throughput)"),
    Knob("group_m", "int", (None, 1, 2, 4, 8), "grouping",
         "row tiles a throughput program walks with one projection slice (the low-latency "
         "kernel has none); None: vLLM's 2"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_rel_proj",
    description=(
        "vLLM's Inkling relative-position logits projection (v0.34.0, qkvr_rel_proj): each "
        "(token, head) row's 16 relative channels read in place from the fused qkvr output "
        "times a [16, rel_extent] projection by a K = 16 tl.dot, a low-latency kernel of "
        "32 x 64 tiles below 2,048 rows, a throughput one of 32 x 128 tiles two row tiles a "
        "program above"
    ),
    dims=(
        Dim("tokens", "tokens in the batch", "batch"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kvheads", "KV heads (their k and v columns sit before the relative ones)"),
        Dim("head", "channels per q/k/v head", "head_dim"),
        Dim("extent", "relative positions (the logits per row)"),
    ),
    trials=(
        Trial(
            "prefill_8192_inkling",
            {"tokens": 8192, "heads": 12, "kvheads": 4, "head": 128, "extent": 1024},
            "an 8,192-token prefill chunk through an Inkling global attention layer (the "
            "config's defaults: 12 heads over 4 KV heads of 128, rel_extent 1024): 98,304 "
            "rows, the throughput kernel's 1,536 x 8 programs, 3.2 GFLOP, 201 MB written",
        ),
        Trial(
            "decode_64_inkling",
            {"tokens": 64, "heads": 12, "kvheads": 4, "head": 128, "extent": 1024},
            "a 64-token decode step of the same layer: 768 rows, the low-latency kernel's "
            "24 x 16 programs, 1.6 MB written",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation of 16 products, rounded once to the dtype; fp32 operands are tf32
    # on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 5e-3},
    entry_point="rel_proj",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
