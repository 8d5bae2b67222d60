"""vLLM's prefix-caching prefill attention (vLLM v0.34.0, Apache-2.0; adapted there from
LightLLM), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py vllm_prefix_prefill` and never committed.

Why this one as the set's prefix attention: vLLM's ROCm attention backend (and any batch
that `chunked_prefill_paged_decode` serves) runs every sequence with more than one new
token through `context_attention_fwd`: one program per (sequence, head, 128 new query
rows) first attends to the sequence's cached prefix in 32-token steps, each step looking
its tokens' physical blocks up in the block table and gathering K from vLLM's split
[blocks, kvheads, head / x, block_size, x] cache (x = 16 bytes: a transposed [head, 32]
tile) and V from [blocks, kvheads, head, block_size] (also key-minor), then attends to the
new tokens' dense K and V causally in 64-key steps; an online softmax over both loops, two
tl.dots a step, fp32 accumulation.  The large trial is Llama-3.1-8B chunked prefill (4
sequences of 2,048 new tokens over 2,048 cached each, 32 heads over 8 KV heads of 128,
16-token blocks: 4 x 32 x 16 programs); the small one a speculative-decoding verification
step (32 sequences of 4 new tokens over 2,048 cached: one 128-row program per head with
124 rows masked).  Compute-bound at prefill, bound by the cache gather when verifying.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_prefix_prefill")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, the new keys and values read and the output written once, every sequence's
    cached keys and values read once (the re-reads by its other heads of a KV head and
    query blocks not counted), the int32 block table, starts and lengths."""
    e = ELEMENT_SIZE[dtype]
    new = d["seqs"] * d["q_len"]
    qo = 2 * new * d["heads"] * d["head"] * e
    kv = 2 * d["seqs"] * (d["ctx"] + d["q_len"]) * d["kvheads"] * d["head"] * e
    per_seq = max(1, -(-(d["ctx"] + d["q_len"]) // d["block_size"]))
    return qo + kv + 4 * (d["seqs"] * per_seq + 2 * d["seqs"] + 1)


def flops(d: Mapping[str, int]) -> int:
    """Q K^T and P V over the keys each new token sees (all ctx cached ones and the new
    ones up to itself), 2 FLOPs a multiply-add each."""
    q_len = d["q_len"]
    visible = q_len * d["ctx"] + q_len * (q_len + 1) // 2
    return 4 * d["seqs"] * visible * d["heads"] * d["head"]


_make_inputs = _common.forward_make_inputs(
    "vllm_prefix_prefill", "seqs", "q_len", "ctx", "heads", "kvheads", "head", "block_size"
)
_reference = _common.forward_reference("vllm_prefix_prefill")
_baselines = _common.forward_baselines(
    "vllm_prefix_prefill",
    (
        "torch",
        "torch",
        "the same by torch ops: the cached keys and values gathered through the block table "
        "and un-split in one index each, the new ones appended, one SDPA over the batch with "
        "GQA and the offset causal mask",
        "torch_prefix_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_prefix_prefill.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "new query rows of one head per program; None: vLLM's 128"),
    Knob("block_size", "int", (None, 16, 32, 64, 128), "kv_tile",
         "cached keys per step of the prefix loop (gathered through the block table, a "
         "step may cross a block); None: vLLM's 32"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "new keys per step of the causal loop over the dense K and V; None: vLLM's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "software-pipeline depth of the two loops; None: vLLM's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_prefix_prefill",
    description=(
        "vLLM's prefix-caching prefill attention (v0.34.0, context_attention_fwd's "
        "_fwd_kernel): one program per (sequence, head, 128 new rows) attends to the cached "
        "prefix in 32-token steps gathered from the split paged K/V cache through the block "
        "table, then to the new tokens' dense K/V causally in 64-key steps, online softmax"
    ),
    dims=(
        Dim("seqs", "sequences with new tokens", "batch"),
        Dim("q_len", "new (query) tokens per sequence"),
        Dim("ctx", "cached prefix tokens per sequence"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kvheads", "KV heads (query heads share them)"),
        Dim("head", "channels per head", "head_dim"),
        Dim("block_size", "tokens per KV cache block"),
    ),
    trials=(
        Trial(
            "chunked_prefill_4x2048_over_2048_llama31_8b",
            {
                "seqs": 4,
                "q_len": 2048,
                "ctx": 2048,
                "heads": 32,
                "kvheads": 8,
                "head": 128,
                "block_size": 16,
            },
            "Llama-3.1-8B chunked prefill: 4 sequences of 2,048 new tokens over 2,048 cached "
            "each, 32 heads over 8 KV heads of 128, 16-token blocks: 2,048 programs, 413 "
            "GFLOP",
        ),
        Trial(
            "spec_verify_32x4_over_2048_llama31_8b",
            {
                "seqs": 32,
                "q_len": 4,
                "ctx": 2048,
                "heads": 32,
                "kvheads": 8,
                "head": 128,
                "block_size": 16,
            },
            "a speculative-decoding verification step of the same model: 32 sequences of "
            "4 new tokens (3 drafts) over 2,048 cached: 1,024 programs of one 128-row block, "
            "each reading its KV head's whole prefix",
        ),
    ),
    backoff_dim="seqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="prefix_prefill",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
