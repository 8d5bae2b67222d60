"""FlagGems' MoE gating top-k softmax (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_topk_softmax` and never committed.

Why this one as the set's per-token expert selection: every softmax-routed MoE layer (Qwen3
MoE, Mixtral) turns its router logits into each token's top-k experts and their weights
after the gate's matmul and before the expert GEMMs; vLLM does it with its `topk_softmax`
op, which FlagGems' vLLM plugin replaces with this kernel.  One program per 8 tokens (at 128
experts) holds an [8, 128] tile of logits, takes each row's fp32 softmax, then makes k
rounds of a row max with its argmax, storing each round's weight, expert and source row and
masking the expert out, and renormalizes the k weights by reading them back.  Little data
(256 bytes of bf16 logits per token), k dependent reductions per row and narrow stores: a
latency-bound kernel at decode and a short memory-bound one at prefill.  Both trials are
Qwen3-30B-A3B's router (128 experts, top 8, norm_topk_prob): a decode step of 64 tokens (8
programs) and a 16,384-token prefill chunk (2048 programs).  Outputs: the fp32 weights and
the int32 expert ids and source rows.  The floor is reading the logits once and writing the
three outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_topk_softmax")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The logits read once (the spec's dtype); the fp32 weights (written, then read back
    by the renormalization: both counted), the int32 ids and source rows written once."""
    pairs = d["tokens"] * d["topk"]
    return d["tokens"] * d["experts"] * ELEMENT_SIZE[dtype] + pairs * (4 + 4 + 4 + 4)


def flops(d: Mapping[str, int]) -> int:
    """The softmax (max, subtract, exp, sum, divide: 5 per logit) and k max rounds over the
    row (k per logit)."""
    return d["tokens"] * d["experts"] * (5 + d["topk"])


_make_inputs = _common.forward_make_inputs("flaggems_topk_softmax", "tokens", "experts", "topk")
_reference = _common.forward_reference("flaggems_topk_softmax")
_baselines = _common.forward_baselines(
    "flaggems_topk_softmax",
    (
        "torch",
        "torch",
        "the same by torch ops: an fp32 softmax, torch.topk, the renormalization, the "
        "source rows by arange",
        "torch_topk_softmax",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_topk_softmax.launcher")


TRITON_KNOBS = (
    Knob("block_rows", "int", (None, 1, 2, 4, 8, 16, 32), "rows_per_program",
         "tokens per program; None: FlagGems' 1024 // the expert tile (8 at 128 experts; 1 "
         "above 128)"),
    Knob("block_experts", "int", (None, 128, 256), "tile_n",
         "expert columns per row tile, a power of two at least the expert count (no column "
         "loop; the launcher refuses less); None: FlagGems' next power of two, 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: FlagGems' 4 (1 above 128 experts)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_topk_softmax",
    description=(
        "FlagGems' MoE gating top-k softmax (v5.0.2, topk_gating_softmax_kernel): one "
        "program per 8 tokens takes each row's softmax over 128 experts, then k rounds of "
        "max and argmax, storing weights, expert ids and source rows, renormalized"
    ),
    dims=(
        Dim("tokens", "tokens routed (the batch's tokens)", "rows"),
        Dim("experts", "routed experts of the layer", "row_len"),
        Dim("topk", "experts chosen per token"),
    ),
    trials=(
        Trial(
            "decode_64_qwen3_30b_a3b",
            {"tokens": 64, "experts": 128, "topk": 8},
            "a decode step of 64 tokens through Qwen3-30B-A3B's router (128 experts, top 8, "
            "norm_topk_prob): 8 programs, 24.6 KB moved (bf16)",
        ),
        Trial(
            "prefill_16k_qwen3_30b_a3b",
            {"tokens": 16384, "experts": 128, "topk": 8},
            "a 16,384-token prefill chunk through the same router: 2048 programs, 6.3 MB "
            "moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact logits and no ties: the ids and rows are exact, the weights one fp32 softmax's
    # rounding away from fp64 (FlagGems' 1e-8 in both denominators included)
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="topk_softmax",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
