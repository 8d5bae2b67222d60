"""Liger-Kernel's fused MoE down-projection (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees
it: a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The second GEMM of a mixture-of-experts MLP: the up projection's silu(gate) * up rows, one
per (token, expert) assignment and already sorted by expert, each multiplied by its
expert's down weight (a grouped GEMM in tl.dot tiles, one expert per row tile, the
intermediate size the reduction), bf16 out in the same order for Liger's token
aggregation.  The floor is the larger of the tensor-core time for 2 * assignments * inter
* hidden flops and the time to read the activations and every routed expert's weights
once and write Y.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # the prefill trial is compute-bound, decode reads weights


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["tokens"] * d["k"] * d["inter"] * d["hidden"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The activations read once, every expert's down weight read once (the trials route to
    nearly all of them), Y written once; the routing metadata (a few int32 per tile)
    left out."""
    e = ELEMENT_SIZE[dtype]
    assignments = d["tokens"] * d["k"]
    weights = d["experts"] * d["hidden"] * d["inter"]
    return e * (assignments * d["inter"] + weights + assignments * d["hidden"])


_make_inputs = _common.forward_make_inputs(
    "liger_moe_down_proj", "tokens", "hidden", "inter", "experts", "k"
)
_reference = _common.forward_reference("liger_moe_down_proj")
_baselines = _common.forward_baselines(
    "liger_moe_down_proj",
    (
        "torch",
        "torch",
        "HF's expert loop in plain torch: one matmul per routed expert over its sorted rows",
        "torch_moe_down_proj",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_moe_down_proj.launcher")


TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        (None, 16, 32, 64, 128),
        "tile_m",
        "assignment rows per routing tile (one expert each); None: Liger's 64",
    ),
    Knob(
        "block_n",
        "int",
        (None, 32, 64, 128, 256),
        "tile_n",
        "hidden (output) columns per program; None: Liger's pinned 128",
    ),
    Knob(
        "block_k",
        "int",
        (None, 16, 32, 64, 128),
        "tile_k",
        "intermediate-size depth per tl.dot step; None: Liger's pinned 64",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16),
        "warps",
        "warps per program; None: Liger's pinned 8",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4, 5),
        "pipeline_stages",
        "software-pipeline depth of the intermediate-size loop; None: Liger's pinned 2",
    ),
)

SPEC = KernelSpec(
    name="liger_moe_down_proj",
    description=(
        "Liger-Kernel's fused MoE down-projection (0.8.5): grouped GEMM of expert-sorted "
        "activation rows times each expert's down weight in tl.dot tiles, bf16 out"
    ),
    dims=(
        Dim("tokens", "tokens routed"),
        Dim("hidden", "model width (the GEMM's output columns)"),
        Dim("inter", "expert intermediate size (the GEMM's reduction)"),
        Dim("experts", "experts in the layer"),
        Dim("k", "experts per token (top-k)"),
    ),
    trials=(
        Trial(
            "prefill_mixtral_8x7b",
            {"tokens": 4096, "hidden": 4096, "inter": 14336, "experts": 8, "k": 2},
            "a Mixtral-8x7B MoE layer (8 experts of 14336, top-2, width 4096) over a 4k-token "
            "prefill chunk: 962 GFLOP on 8192 assignments, ~1024 rows per expert, a "
            "224-step reduction loop at Liger's 64-deep tiles",
        ),
        Trial(
            "decode_qwen3_moe",
            {"tokens": 64, "hidden": 2048, "inter": 768, "experts": 128, "k": 8},
            "a Qwen3-30B-A3B MoE layer (128 experts of 768, top-8, width 2048) at a "
            "64-sequence decode step: 512 assignments, ~4 rows per expert in 64-row tiles, "
            "403 MB of expert weights read for 1.6 GFLOP",
        ),
    ),
    backoff_dim="tokens",
    # a routing tile's rows are one expert's assignments (tokens * k / experts on average,
    # ~1024 and ~4 in the trials), not the tokens: block_m spans those
    shape_metrics=lambda d: {"rows": -(-d["tokens"] * d["k"] // d["experts"])},
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation; fp32 inputs go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="moe_down_proj",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
