"""Liger-Kernel's fused MoE token aggregation (liger-kernel 0.8.5, BSD-2-Clause), as kbopt
sees it: a kernel nobody here wrote, imported from the installed `liger_kernel` package (a
pure-Triton wheel, in kbopt's dev extra); nothing of it is copied here.

Why this one: Liger's `LigerExperts` replaces the stacked-weight experts of Mixtral,
Qwen3-MoE, Qwen3-Next, Qwen3.5-MoE, DeepSeek-V2/V3 and others (transformers v5) when a
fine-tuning run applies Liger's patches, and every MoE layer's forward ends with
`_token_gather_weighted_sum_kernel`: the down projection leaves one hidden-wide row per
(token, expert) assignment in expert-sorted order, and this kernel gives each token its
output row, gathering its k rows through the routing's inverse permutation
(s_reverse_scatter_idx), weighting them by the routing weights and summing in fp32.  The
liger MoE wrappers so far are all GEMMs (the forward's up and down projections and three
of the backward's); this is the memory-bound step between them and the next layer: no
tl.dot, no reuse, each Y element read once through an indirection (a token's k rows lie
wherever its experts' segments put them, 4 KB apart at best), k times the bytes it
writes.  Where SGLang's top-k sum (sglang_moe_sum_reduce) reads each token's k rows
contiguously, one 16-warp program per 2048 columns, Liger's gathers them scattered, one
4-warp program per token walking the width in 128-column tiles unrolled at compile time,
4 rows a step.  Trials: a Qwen3-30B-A3B fine-tuning step's forward (128 experts, top-8,
width 2048) on a 16,384-token micro-batch (16,384 programs of 16 column tiles x 2 steps,
605 MB at the floor), and a DeepSeek-V2-Lite one (64 routed experts, top-6, width 2048) on
4,096 tokens (4,096 programs, the second step of each tile half masked, 118 MB).  The
floor is reading Y, the routing weights and the positions once and writing the output
once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_package(__file__, "liger_kernel", "liger-kernel==0.8.5")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# both trials memory-bound (about 0.9 flops a byte): a gather and a reduction over the
# short top-k axis, one launch
CONTEXTS = ("reduction", "memory-bound")
INT32 = 4


def flops(d: Mapping[str, int]) -> int:
    """A multiply (by the routing weight) and an add per element of Y: 2 * tokens * k *
    hidden."""
    return 2 * d["tokens"] * d["k"] * d["hidden"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Y read once (tokens * k rows of hidden), the routing weights read once (tokens * k)
    and the output written once (tokens x hidden), all in the dtype; the int32 sorted
    positions read once (tokens * k).  Their re-reads by each of a token's hidden /
    BLOCK_H column tiles, and the routing metadata made outside the timed call, are not
    counted."""
    e = ELEMENT_SIZE[dtype]
    assignments = d["tokens"] * d["k"]
    values = assignments * d["hidden"] + assignments + d["tokens"] * d["hidden"]
    return e * values + INT32 * assignments


_make_inputs = _common.forward_make_inputs("liger_moe_combine", "tokens", "hidden", "experts", "k")
_reference = _common.forward_reference("liger_moe_combine")
_baselines = _common.forward_baselines(
    "liger_moe_combine",
    (
        "torch",
        "torch",
        "HF's combine in plain torch: each token's rows gathered by the inverse sort, "
        "scaled by their routing weights and summed over the top-k in the dtype",
        "torch_moe_combine",
    ),
)


_launch_info = _common.triton_launch_info("foreign.liger_moe_combine.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 64, 128, 256, 512, 1024), "tile_n",
         "hidden columns per tile (a program unrolls hidden / this tiles); None: Liger's "
         "pinned 128"),
    Knob("block_k", "int", (None, 1, 2, 4, 8, 16), "tile_k",
         "of the token's top-k rows gathered per step (the rows past k masked); None: "
         "Liger's pinned 4"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Liger's pinned 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the top-k loop inside each column tile; None: "
         "Liger's pinned 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="liger_moe_combine",
    description=(
        "Liger-Kernel's fused MoE token aggregation (0.8.5, "
        "_token_gather_weighted_sum_kernel): one program per token gathers its top-k "
        "expert-sorted rows of the down projection's output through the routing's inverse "
        "permutation, weights them by the routing weights and sums in fp32, 128-column "
        "tiles unrolled over the width, bf16 in and out"
    ),
    dims=(
        Dim("tokens", "tokens in the micro-batch (one program and output row each)", "rows"),
        Dim("hidden", "model width (each output row; Y's row length)", "row_len"),
        Dim("experts", "routed experts in the layer (where the token's rows lie)"),
        Dim("k", "experts per token (top-k: the rows summed per token)"),
    ),
    trials=(
        Trial(
            "qwen3_30b_a3b_train_16k_tokens",
            {"tokens": 16384, "hidden": 2048, "experts": 128, "k": 8},
            "the forward of a fine-tuning step of Qwen3-30B-A3B (128 experts, top-8, width "
            "2048) on a 16,384-token micro-batch (four packed 4k sequences): 131,072 "
            "assignment rows combined by 16,384 programs of 16 column tiles x 2 top-k "
            "steps; 605 MB at the floor (Y read 537 MB, the output written 67 MB)",
        ),
        Trial(
            "deepseek_v2_lite_train_4k_tokens",
            {"tokens": 4096, "hidden": 2048, "experts": 64, "k": 6},
            "the forward of a fine-tuning step of DeepSeek-V2-Lite's routed experts (64, "
            "top-6, width 2048) on one 4k sequence: 24,576 assignment rows combined by "
            "4,096 programs of 16 column tiles x 2 top-k steps (the second 2 of 4 live); "
            "118 MB at the floor (Y read 101 MB)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation of k weighted rows, rounded once to the dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="moe_combine",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
