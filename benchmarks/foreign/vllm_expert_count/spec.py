"""vLLM's per-expert token count for the DeepGEMM MoE path (vLLM v0.34.0, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_expert_count` and never committed.

Why this one as the set's histogram: an fp8 DeepSeek-V3 served on Hopper runs its MoE
layers through DeepGEMM's contiguous grouped GEMM, and `deepgemm_moe_permute` needs each
local expert's token count to lay the grouped rows out; where the dispatch handed none over
(no all-to-all, or a DeepEP cudagraph decode), vLLM counts them itself at every MoE layer
with `_count_expert_num_tokens`: one program per local expert walks the whole flattened
top-k id list in 1024-id steps, maps each id through the EP expert map and counts its own
expert's hits in a lane accumulator, summed at the end.  A histogram built as
local-experts full scans (32 programs re-reading the same ids, all but the first pass from
L2), integer compares and adds only.  Both trials are DeepSeek-V3 (256 routed experts,
top-8) with expert parallelism over 8 GPUs (32 local experts, the expert map applied): a
decode step of 128 tokens (1,024 ids, one step a program, 5 KB read) and an 8,192-token
prefill chunk (65,536 ids, 64 steps a program, 256 KiB read once and 8 MiB from L2).  Latency-
bound at decode and L2-bound at prefill; the floor is reading the ids and the map once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_expert_count")

CONTEXTS = ("reduction", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The int32 ids and the int32 expert map read once, the int32 counts written once
    (the dtype plays no part: the kernel moves integers only; the local-experts re-reads
    of the ids from L2 are not counted)."""
    del dtype
    local = d["experts"] // d["ep"]
    expert_map = d["experts"] * 4 if d["ep"] > 1 else 0
    return d["tokens"] * d["topk"] * 4 + expert_map + local * 4


def flops(d: Mapping[str, int]) -> int:
    """None counted: compares and integer adds only."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_expert_count", "tokens", "experts", "topk", "ep")
_reference = _common.forward_reference("vllm_expert_count")
_baselines = _common.forward_baselines(
    "vllm_expert_count",
    (
        "torch",
        "torch",
        "the same by torch ops: the ids mapped by an index into the expert map, the -1s "
        "sent to a spare bin, one bincount",
        "torch_count",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_expert_count.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "ids per loop step of each program (a BLOCK-lane int32 accumulator); None: "
         "vLLM's next_power_of_2(min(tokens * topk, 1024))"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the id loop's loads; None: Triton's default 3 "
         "(vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_expert_count",
    description=(
        "vLLM's per-expert token count for the DeepGEMM MoE path (v0.34.0, "
        "_count_expert_num_tokens): one program per local expert scans all top-k ids in "
        "1024-id steps, maps them through the EP expert map and counts its own expert"
    ),
    dims=(
        Dim("tokens", "token rows routed on this rank", "batch"),
        Dim("experts", "routed experts of the model, over all ranks"),
        Dim("topk", "experts per token"),
        Dim("ep", "expert-parallel ranks (this rank holds experts / ep of them; 1: no map)"),
    ),
    trials=(
        Trial(
            "decode_128_deepseek_v3_ep8",
            {"tokens": 128, "experts": 256, "topk": 8, "ep": 8},
            "a decode step of 128 tokens of fp8 DeepSeek-V3 (256 experts, top-8) on the "
            "DeepGEMM MoE path with EP over 8 GPUs (32 local experts, the expert map "
            "applied): 32 programs of one 1024-id step, 5 KB read",
        ),
        Trial(
            "prefill_8192_deepseek_v3_ep8",
            {"tokens": 8192, "experts": 256, "topk": 8, "ep": 8},
            "an 8,192-token prefill chunk of the same deployment: 32 programs of 64 "
            "1024-id steps each over the same 65,536 ids, 256 KiB read once",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer counts, checked exactly (a count off by one is ~1e-4 of the norm)
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="count",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
