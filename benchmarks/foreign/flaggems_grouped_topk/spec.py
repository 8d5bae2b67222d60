"""FlagGems' group-limited top-k routing (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_grouped_topk` and never committed.

Why this one as the set's expert selection: DeepSeek-V3, DeepSeek-R1 and Kimi K2 route each
token to 8 of 256 experts in two levels (`n_group` 8, `topk_group` 4): the experts' sigmoid
scores plus a correction bias, each of the 8 groups scored by its two best experts, the 4
best groups kept, then the 8 best experts of those, their unbiased scores renormalised and
scaled by 2.5.  FlagGems ships it as a fused op (`flag_gems.fused.grouped_topk`, which its
vLLM patch puts in place of vLLM's `_moe_C.grouped_topk` custom op) in two launches:
one program per token and group for the top-2 sums (32-lane tiles), then one program per
token that ranks its 8 group scores in 4 max rounds and picks its 8 experts in 8 rounds of
a max and a min-index reduction over a 256-lane tile, each round storing nothing until the
end.  Selection work, not arithmetic: serial reduction rounds over a tiny tile per program,
a grid of one program per token (or per token and group), and 2 KB of data per token at
most.  Both trials are DeepSeek-V3's router (256 experts, 8 groups, top-4 groups, top-8):
a decode batch of 64 tokens (launch-sized: 512 + 64 programs) and a 16,384-token
chunked-prefill batch (131,072 + 16,384 programs, 8.4 MB of bf16 scores).  The floor is
reading the scores and the bias once and writing an fp32 weight and an int32 id per token
and expert chosen.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_grouped_topk")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")  # top-k rounds over a 256-lane tile
FP32 = 4


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The scores read once and the bias once (the spec's dtype), an fp32 weight and an
    int32 id written per token and expert chosen (the group scores passed between the two
    launches are not counted)."""
    es = ELEMENT_SIZE[dtype]
    return (d["tokens"] + 1) * d["experts"] * es + d["tokens"] * d["topk"] * 2 * FP32


def flops(d: Mapping[str, int]) -> int:
    """None counted: comparisons and reductions for selection (the bias add and the
    renormalisation are a few operations per expert)."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "flaggems_grouped_topk", "tokens", "experts", "groups", "topk_group", "topk"
)
_reference = _common.forward_reference("flaggems_grouped_topk")
_baselines = _common.forward_baselines(
    "flaggems_grouped_topk",
    (
        "torch",
        "torch",
        "the torch path vLLM and SGLang take for DeepSeek-V3's biased grouped top-k: group "
        "top-2 sums, the best groups, a masked fill, the best experts (stable sorts), "
        "gather and renormalise",
        "torch_grouped_topk",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_grouped_topk.launcher")


TRITON_KNOBS = (
    Knob("group_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the group top-2 launch (one token and group, a tile of the "
         "group's experts); None: Triton's default 4 (FlagGems passes none)"),
    Knob("select_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the selection launch (one token, a tile of all experts); "
         "None: Triton's default 4 (FlagGems passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_grouped_topk",
    description=(
        "FlagGems' group-limited top-k routing (v5.0.2, topk_with_k2_triton and "
        "group_idx_and_topk_triton): per token and group the sum of the two best biased "
        "scores, then per token the best groups and the top-k experts among them, "
        "renormalised and scaled"
    ),
    dims=(
        Dim("tokens", "tokens of the batch (rows routed)", "batch"),
        Dim("experts", "routed experts (score columns)"),
        Dim("groups", "expert groups (n_group)"),
        Dim("topk_group", "groups kept per token"),
        Dim("topk", "experts chosen per token (a power of two)"),
    ),
    trials=(
        Trial(
            "deepseek_v3_decode64",
            {"tokens": 64, "experts": 256, "groups": 8, "topk_group": 4, "topk": 8},
            "DeepSeek-V3's router selection (256 routed experts in 8 groups, top-4 groups, "
            "top-8 experts, scaling 2.5) on a decode batch of 64 tokens: 512 + 64 programs, "
            "launch-sized",
        ),
        Trial(
            "deepseek_v3_prefill16k",
            {"tokens": 16384, "experts": 256, "groups": 8, "topk_group": 4, "topk": 8},
            "the same on a 16,384-token chunked-prefill batch: 131,072 + 16,384 programs, "
            "8.4 MB of bf16 scores",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the ids must match exactly (the reference rounds the biased and group scores to the
    # dtype as the kernel does); the fp32 weights differ by the order of an 8-term sum
    tolerances={"bfloat16": 1e-5, "float16": 1e-5, "float32": 1e-5},
    entry_point="grouped_topk",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
