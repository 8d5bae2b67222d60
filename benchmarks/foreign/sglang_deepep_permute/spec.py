"""SGLang's DeepEP-normal token permute (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_deepep_permute` and never committed.

Why this one as the set's MoE dispatch permute: with expert parallelism over DeepEP's
normal (prefill) mode, each rank receives the tokens routed to any of its local experts,
each with its top-k ids (-1 for experts on other ranks); SGLang's W4A8 MoE runner
(DeepSeek-V3 / R1 W4AFP8 checkpoints) then lays them out expert by expert for its grouped
GEMM with this kernel: one program per received token streams the token's hidden row in
512-column tiles and stores each tile to every destination row of its local experts.  A
pure gather-to-scatter copy, no arithmetic: reads once, writes 1.5 times on average
(received tokens have 1 to 3 local experts), the destinations scattered across the output
by expert.  Both trials are DeepSeek-V3 (hidden 7168, top-8 of 256 routed experts) at EP 8
(32 local experts per rank), bf16: a small dispatch of 128 received tokens (128 programs,
under one per SM) and a prefill chunk's 8192 (8192 programs).  Output: [pairs, hidden], the
tokens' rows in expert order.  The floor is reading each received row once and writing each
destination row once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_deepep_permute")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)
COUNT_PATTERN = (1, 2, 1, 1, 3, 1, 2, 1)  # as reference.py: local experts per token


def pairs(d: Mapping[str, int]) -> int:
    """Output rows: each received token's local experts (a fixed pattern averaging 1.5,
    as reference.py makes them)."""
    n = len(COUNT_PATTERN)
    return sum(min(COUNT_PATTERN[t % n], d["topk"], d["experts"]) for t in range(d["tokens"]))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The received rows read once, the destination rows written once (the spec's dtype),
    and the int64 src2dst read once (the top-k ids are passed but not read)."""
    return ELEMENT_SIZE[dtype] * d["hidden"] * (d["tokens"] + pairs(d)) + (
        8 * d["tokens"] * d["topk"]
    )


def flops(d: Mapping[str, int]) -> int:
    """None: a copy."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "sglang_deepep_permute", "tokens", "hidden", "topk", "experts"
)
_reference = _common.forward_reference("sglang_deepep_permute")
_baselines = _common.forward_baselines(
    "sglang_deepep_permute",
    (
        "torch",
        "torch",
        "the same by torch ops: the local pairs' source rows gathered and index_copy'd to "
        "their destinations",
        "torch_permute",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_deepep_permute.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "hidden columns per loop step (loaded once, stored to each destination); None: "
         "SGLang's 512"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loop over the hidden row; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_deepep_permute",
    description=(
        "SGLang's DeepEP-normal token permute (v0.5.9, deepep_permute_triton_kernel): one "
        "program per received token copies its hidden row, 512 columns at a time, to the "
        "expert-sorted destination row of each of its local experts"
    ),
    dims=(
        Dim("tokens", "tokens received by the rank (each with a local expert)", "rows"),
        Dim("hidden", "model hidden size (columns of each row)", "row_len"),
        Dim("topk", "experts per token (slots of src2dst, -1 / negative when remote)"),
        Dim("experts", "local experts of the rank (the routed experts / the EP size)"),
    ),
    trials=(
        Trial(
            "dispatch_128_deepseek_v3_ep8",
            {"tokens": 128, "hidden": 7168, "topk": 8, "experts": 32},
            "DeepSeek-V3 (hidden 7168, top-8 of 256 experts) at EP 8, 128 tokens received "
            "by a rank (192 expert rows): 128 programs, 4.6 MB moved (bf16)",
        ),
        Trial(
            "prefill_8192_deepseek_v3_ep8",
            {"tokens": 8192, "hidden": 7168, "topk": 8, "experts": 32},
            "the same model at EP 8, a prefill chunk's 8192 received tokens (12,288 expert "
            "rows): 8192 programs, 294 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="deepep_permute",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
