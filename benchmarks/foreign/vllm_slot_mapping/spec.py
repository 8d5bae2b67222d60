"""vLLM's KV-cache slot mapping (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_slot_mapping vllm_load_ptr` and never committed.

Why this one as the set's paged-KV index gather: vLLM's GPU model runner calls it on every
step, before the forward pass, to turn each scheduled token's position into the KV-cache
slot that attention writes its key and value to.  The grid is one program per KV-cache
group and request, plus one per group that pads the rest of the persistent
max_num_batched_tokens-wide mapping with -1 (for CUDA graphs).  A request's program walks
its tokens 1024 at a time: each position gives a block-table entry (position // 16, an
int32 gathered from the request's row through a pointer read from a uint64 table) and the
slot, block * 16 + position % 16, stored as int64.  Latency-bound and integer-only: the
work per program is its request's new tokens, so a decode batch is many one-token
programs and the padding program's long store, a prefill a few long walks.  Both trials
use 16-token KV blocks: a decode step of Llama 3.1 8B with 256 running requests of up to
4096 tokens (one group, 257 programs, the padding program storing 7936 slots of an
8192-token mapping) and a chunked-prefill step of gpt-oss-120b (two groups, its sliding-
window and full-attention layers) with 16 requests of 2048 new tokens after up to 8192
cached ones (34 programs, 32,768 tokens filling the mapping).  The floor is reading the
positions and each token's block entry once per group and writing the whole mapping once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_slot_mapping", "vllm_load_ptr")

CONTEXTS = ("small-grid", "inference-step")
KV_BLOCK_SIZE = 16


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The request map and token offsets read once (int32); per group, the int64 positions
    read once, one int32 block entry per block in use (each request's row read once) and
    the whole int64 mapping written once (integers whatever the dtype)."""
    del dtype
    tokens = d["reqs"] * d["query_len"]
    entries = tokens // KV_BLOCK_SIZE + d["reqs"]
    per_group = 8 * tokens + 4 * entries + 8 * d["max_tokens"]
    return 8 * d["reqs"] + d["groups"] * per_group


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer index arithmetic only."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "vllm_slot_mapping", "groups", "reqs", "query_len", "context", "max_tokens"
)
_reference = _common.forward_reference("vllm_slot_mapping")
_baselines = _common.forward_baselines(
    "vllm_slot_mapping",
    (
        "torch",
        "torch",
        "the same mapping by torch ops: repeat_interleave for each token's request row, "
        "one gather from the flattened block tables, a fill for the padding",
        "torch_slot_mapping",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_slot_mapping.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "tokens per loop step of a request's walk and of the padding store; None: "
         "vLLM's TRITON_BLOCK_SIZE, 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the token loops; None: Triton's default 3 (vLLM "
         "passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_slot_mapping",
    description=(
        "vLLM's KV-cache slot mapping (v0.34.0, _compute_slot_mappings_kernel): one program "
        "per KV-cache group and request walks its tokens 1024 at a time, each position's "
        "block-table entry gathered through a pointer table and turned into an int64 slot; "
        "one more program per group pads the persistent mapping with -1"
    ),
    dims=(
        Dim("groups", "KV-cache groups (one block table and one mapping row each)"),
        Dim("reqs", "requests in the batch (one program each per group)", "batch"),
        Dim("query_len", "new tokens scheduled per request", "query_len"),
        Dim("context", "mean computed tokens before them (drawn in [0, 2 * context])", "kv_len"),
        Dim("max_tokens", "the persistent mapping's width (max_num_batched_tokens)"),
    ),
    trials=(
        Trial(
            "decode_llama31_8b_256reqs",
            {"groups": 1, "reqs": 256, "query_len": 1, "context": 2048, "max_tokens": 8192},
            "a decode step of Llama 3.1 8B served by vLLM (one KV-cache group, 16-token "
            "blocks, max_num_batched_tokens 8192) with 256 running requests of up to 4096 "
            "tokens: 257 programs, the padding one storing 7936 slots; 71 KB moved",
        ),
        Trial(
            "chunked_prefill_gpt_oss_120b",
            {"groups": 2, "reqs": 16, "query_len": 2048, "context": 4096, "max_tokens": 32768},
            "a chunked-prefill step of gpt-oss-120b (two KV-cache groups: its sliding-window "
            "and full-attention layers; max_num_batched_tokens 32,768) with 16 requests of "
            "2048 new tokens after up to 8192 cached ones: 34 programs walking 2048 tokens "
            "each; 1.1 MB moved",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integers: exact
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="slot_mapping",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
