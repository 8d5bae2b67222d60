"""Liger-Kernel's fused MoE up-projection (liger-kernel 0.8.5, BSD-2-Clause), as kbopt sees
it: a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

The first GEMM of a mixture-of-experts MLP: each token's row gathered once per expert it
is routed to, multiplied by that expert's gate and up weights (a grouped GEMM in tl.dot
tiles, one expert per row tile), SwiGLU fused into the epilogue.  Outputs: the
pre-activations and silu(gate) * up, one row per (token, expert) assignment sorted by
expert, bf16.  The floor is the larger of the tensor-core time for 2 * assignments *
hidden * 2 * inter flops and the time to read x and every routed expert's weights once
and write both outputs.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # the prefill trial is compute-bound, decode reads weights


def flops(d: Mapping[str, int]) -> int:
    return 2 * d["tokens"] * d["k"] * d["hidden"] * 2 * d["inter"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once, every expert's gate and up weights read once (the trials route to
    nearly all of them), both outputs written, the int32 routing read."""
    e = ELEMENT_SIZE[dtype]
    assignments = d["tokens"] * d["k"]
    weights = d["experts"] * 2 * d["inter"] * d["hidden"]
    return (
        e * (d["tokens"] * d["hidden"] + weights + assignments * 3 * d["inter"]) + 4 * assignments
    )


_make_inputs = _common.forward_make_inputs(
    "liger_moe_up_proj", "tokens", "hidden", "inter", "experts", "k"
)
_reference = _common.forward_reference("liger_moe_up_proj")
_baselines = _common.forward_baselines(
    "liger_moe_up_proj",
    (
        "torch",
        "torch",
        "HF's expert loop in plain torch: a gather and one matmul per routed expert, then SwiGLU",
        "torch_moe_up_proj",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_moe_up_proj.launcher")


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
        "intermediate columns per program (gate and up each); None: Liger's pinned 128",
    ),
    Knob(
        "block_k",
        "int",
        (None, 16, 32, 64, 128),
        "tile_k",
        "hidden-size depth per tl.dot step; None: Liger's pinned 64",
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
        "software-pipeline depth of the hidden-size loop; None: Liger's pinned 2",
    ),
)

SPEC = KernelSpec(
    name="liger_moe_up_proj",
    description=(
        "Liger-Kernel's fused MoE up-projection (0.8.5): token gather, grouped GEMM over the "
        "routed experts' gate and up weights in tl.dot tiles, SwiGLU epilogue, bf16"
    ),
    dims=(
        Dim("tokens", "tokens routed"),
        Dim("hidden", "model width (the GEMM's reduction)"),
        Dim("inter", "expert intermediate size (gate and up each)"),
        Dim("experts", "experts in the layer"),
        Dim("k", "experts per token (top-k)"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_moe",
            {"tokens": 4096, "hidden": 2048, "inter": 768, "experts": 128, "k": 8},
            "a Qwen3-30B-A3B MoE layer (128 experts of 768, top-8, width 2048) over a 4k-token "
            "prefill chunk: 206 GFLOP on 32768 assignments, ~256 rows per expert",
        ),
        Trial(
            "decode_qwen3_moe",
            {"tokens": 64, "hidden": 2048, "inter": 768, "experts": 128, "k": 8},
            "the same layer at a 64-sequence decode step: 512 assignments, ~4 rows per expert "
            "in 64-row tiles, 805 MB of expert weights read for 3.2 GFLOP",
        ),
    ),
    backoff_dim="tokens",
    # a routing tile's rows are one expert's assignments (tokens * k / experts on average),
    # not the tokens: block_m spans those (as in liger_moe_down_proj)
    shape_metrics=lambda d: {"rows": -(-d["tokens"] * d["k"] // d["experts"])},
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation; fp32 inputs go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="moe_up_proj",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
