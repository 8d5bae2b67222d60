"""vLLM's sampling-mask compaction (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_sampling_mask` and never committed.

Why this one as the set's per-row stream compaction with a bit-packed side output: when the
engine is asked to return each step's sampling support (`return_sampling_mask`, which RL
rollout stacks use to replay the sampler's truncation in their off-policy corrections),
vLLM's v1 GPU sampler runs it after top-k / top-p on the processed fp32 logits: one
program per request walks its row 8192 columns at a time, keeps the finite logits (the
support), gives each kept column its place with a tl.cumsum plus the count carried from
the earlier blocks, scatters the first max_num_kept column ids (the batch's largest top-k,
at most 2048), packs the keep flags eight to a byte into the row's bitmask, and stores the
support size.  Memory-bound on the logits read, with a serial carry along each row, a
sparse id scatter and a dense byte stream out.  It differs from FlagGems' masked_select
(the nearest spec: a whole-tensor compaction whose offsets come from a separate global
scan) in that each row is compacted by its own program with the scan carried block to
block, the ids stored are clipped at a width, and a packed bitmask of the whole row goes
out too (the inverse of the grammar bitmask's unpacking).  Both trials are Qwen3-8B
(151,936-token vocabulary): a decode step of 64 requests with top-k up to 50 (every eighth
request untruncated, so the id rows are 2048 wide) and an RL rollout step of 1024 requests
with top-k up to 1000.  Outputs: the support ids, the bitmask and the sizes.  The floor is
reading every sampled logits row once and writing its bitmask, ids and size once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_sampling_mask")

CONTEXTS = ("reduction", "memory-bound")
MAX_COMPACT_SUPPORT = 2048


def _supports(d: Mapping[str, int]) -> list[int]:
    """Support sizes of the sampled rows, as reference.py makes them (top-k off every
    eighth request; every sixteenth, from the fourth, samples nothing)."""
    cycle = [d["max_k"], d["max_k"] // 2, d["max_k"] // 5, d["max_k"] // 10]
    sizes = []
    for r in range(d["reqs"]):
        if r % 16 != 3:
            sizes.append(d["vocab"] if r % 8 == 7 else max(1, cycle[r % 4]))
    return sizes


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every sampled logits row read once (fp32 whatever the dtype), its bitmask written
    (one byte per 8 columns), its first max_num_kept support ids (int32) and every row's
    count written once."""
    del dtype
    sizes = _supports(d)
    kept = min(max(*sizes, 1), d["vocab"], MAX_COMPACT_SUPPORT)
    rows = len(sizes)
    return (
        rows * d["vocab"] * 4
        + rows * ((d["vocab"] + 7) // 8)
        + sum(min(s, kept) for s in sizes) * 4
        + d["reqs"] * 4
    )


def flops(d: Mapping[str, int]) -> int:
    """None counted: compares, a scan and integer stores only."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_sampling_mask", "reqs", "vocab", "max_k")
_reference = _common.forward_reference("vllm_sampling_mask")
_baselines = _common.forward_baselines(
    "vllm_sampling_mask",
    (
        "torch",
        "torch",
        "the same by torch ops over the batch: isfinite, a cumsum for each kept column's "
        "place, a scatter of the first ids, the flags packed by a weighted sum of 8",
        "torch_sampling_mask",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_sampling_mask.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n",
         "logits columns per step of each row's walk (the cumsum's width; at most 64 "
         "per thread: 16384 needs 8 warps, 32768 16); None: vLLM's 8192"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the row walk; None: Triton's default 3 (vLLM "
         "passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_sampling_mask",
    description=(
        "vLLM's sampling-mask compaction (v0.34.0, _compact_sampling_mask_kernel): one "
        "program per request walks its processed fp32 logits row in 8192-column blocks, "
        "scatters the first support ids by a carried tl.cumsum, packs the keep flags into "
        "a bitmask and stores the support size"
    ),
    dims=(
        Dim("reqs", "requests of the step (one logits row each)", "batch"),
        Dim("vocab", "vocabulary size", "row_len"),
        Dim("max_k", "the batch's largest top-k among truncated requests"),
    ),
    trials=(
        Trial(
            "decode_64_topk50_qwen3_8b",
            {"reqs": 64, "vocab": 151936, "max_k": 50},
            "a decode step of 64 requests of Qwen3-8B (151,936-token vocabulary) returning "
            "their sampling masks, top-k up to 50 and every eighth request untruncated "
            "(2048-wide id rows), 4 chunked prefills: 60 rows of 19 blocks, 38 MB moved",
        ),
        Trial(
            "rollout_1024_topk1000_qwen3_8b",
            {"reqs": 1024, "vocab": 151936, "max_k": 1000},
            "an RL rollout step of 1024 Qwen3-8B requests returning their sampling masks, "
            "top-k up to 1000 and every eighth request untruncated, 64 chunked prefills: "
            "960 rows of 19 blocks, 605 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer ids, bytes and counts: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="sampling_mask",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
