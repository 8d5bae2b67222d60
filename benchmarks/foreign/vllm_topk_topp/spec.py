"""vLLM's combined top-k / top-p filter (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by `scripts/
fetch_third_party.py vllm_topk_topp vllm_topk_topp_tables` and never committed.

Why this one as the set's pivot-search kernel: top-k and top-p are the most common sampling
parameters of vLLM's OpenAI-compatible server (Qwen3's model card asks for top_k 20 with
top_p 0.8 or 0.95), and when a step's requests set them the v1 sampler runs this kernel
(vLLM's Triton path after Qrita, Park et al. 2026) over the step's fp32 logits, in place,
before the draw.  No sort: a persistent grid of min(SMs, rows) programs strides over the
rows; per row a sample tile's statistics and a sigma table give an outlier pivot, one pass
over the row compacts the values above it into a per-program scratch row, a ternary search
(two pivots per pass over the outliers, up to 18 passes) finds the k-th value, the kept
values' softmax goes back to the scratch row for a second search for the top-p pivot, and a
last pass stores the row with -inf below it.  Data-dependent loop counts, a scratch round
trip, and a grid only as large as the rows: a small decode batch leaves most SMs idle.
Both trials have every request with a top-k and a top-p (no p-only rows, so vLLM's split
top-p pipeline does not run): a 16-request decode step of Qwen3-8B (151,936-token
vocabulary, 16 programs) and a 512-request step (132 programs, about 4 rows each).
Output: the logits (written in place).  The floor is reading and writing every row once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_topk_topp", "vllm_topk_topp_tables")

CONTEXTS = ("reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int]) -> int:
    """The fp32 logits read and written once (the kernel reads each row at least twice and
    its outliers a few dozen times from the scratch row); each row's k and p once."""
    return 8 * d["reqs"] * d["vocab"] + 8 * d["reqs"]


def flops(d: Mapping[str, int]) -> int:
    """None counted: comparisons and counts per value, one exp per kept value."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_topk_topp", "reqs", "vocab")
_reference = _common.forward_reference("vllm_topk_topp")
_baselines = _common.forward_baselines(
    "vllm_topk_topp",
    (
        "torch",
        "torch",
        "vLLM's sort-based torch path by torch ops, in place: one sort per row, the k-th "
        "value as threshold, an ascending cumulative softmax masked at 1 - p, one scatter",
        "torch_topk_topp",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_topk_topp.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192), "tile_n",
         "vocabulary columns per step of the passes over the row; None: vLLM's 8192"),
    Knob("block_size_trunc", "int", (None, 512, 1024, 2048, 4096), "tile_k",
         "values per step of the search passes over the compacted outliers; None: vLLM's 4096"),
    Knob("num_programs", "int", (None, 16, 33, 66, 132, 264), "occupancy",
         "persistent programs striding over the rows (one scratch row each, capped at the "
         "rows); None: vLLM's min(132 SMs, rows)"),
    Knob("num_warps", "int", (None, 4, 8, 16), "warps",
         "warps per program (at most 32 values of a tile per thread: the launcher refuses "
         "more); None: vLLM's 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the loops over the row; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_topk_topp",
    description=(
        "vLLM's combined top-k / top-p filter (v0.34.0, _topk_topp_kernel): persistent "
        "programs per logits row compact the outliers above a sigma pivot into a scratch "
        "row, ternary-search the k-th value and the top-p pivot over them, and store -inf "
        "below it, in place on fp32 logits"
    ),
    dims=(
        Dim("reqs", "requests in the step, one logits row each, all with top-k and top-p", "batch"),
        Dim("vocab", "vocabulary size", "row_len"),
    ),
    trials=(
        Trial(
            "decode_16_qwen3_8b",
            {"reqs": 16, "vocab": 151936},
            "a 16-request decode step of Qwen3-8B (151,936-token vocabulary) with its model "
            "card's sampling (top_k 20 to 50, top_p 0.8 to 0.95): 16 programs, 19.4 MB moved",
        ),
        Trial(
            "decode_512_qwen3_8b",
            {"reqs": 512, "vocab": 151936},
            "a 512-request decode step of Qwen3-8B (within vLLM's default max_num_seqs of "
            "1024 on an H100), every request with a top-k and a top-p: 132 programs of about "
            "4 rows each, 622 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=bytes_moved,
    # a copy of the logits with -inf outside each row's kept set: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="topk_topp",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
