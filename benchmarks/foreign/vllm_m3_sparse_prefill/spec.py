"""MiniMax M3's block-sparse GQA prefill attention on Hopper (vLLM v0.34.0, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_m3_sparse_prefill` and never committed.

Why this one as the set's block-sparse prefill attention: in MiniMax M3's sparse layers the
lightning indexer picks, for every query token and KV head, 16 128-token KV blocks (its own
block forced in; `vllm_block_topk` is that selection), and on Hopper vLLM runs the main
attention over them with `_gqa_sparse_fwd_tiled_kernel`: one program per (16 consecutive
query tokens, KV head, request) stacks the tokens' 16 query heads of that KV head into one
256-row tile and walks the UNION of the 16 tokens' selected blocks in ascending order (a
min-reduction over the remaining ids per step, a data-dependent while loop), loading each
block's page through the block table as K [128, 128] and V [128, 128] from packed
[128, 2 x 128] cache rows, masking the rows whose token did not select the block and the
causal part, two tl.dots and an online softmax a block, 16 warps.  The dense prefill
attentions of the set (`vllm_prefix_prefill`, `sglang_extend_attention`) walk every
cached key; the sparse ones (`flaggems_sparse_attn_sink`, `sglang_ds_sparse_decode`)
gather per-token rows for one query at a time; here tiles of tokens share block visits,
so the work grows with how much neighbouring tokens' selections differ (modelled: about
32 distinct blocks per 16-token tile for 16 per token).  Both trials are MiniMax M3 on the
rank (4 KV heads, 16 query heads each, head 128, top-16): a 32K-context chunked prefill (4
requests adding 2,048 tokens after 30,720: 2,048 programs, 533 GFLOP over the selected
keys) and a short one (2 requests of 256 after 3,840: 128 programs).  Tensor-core-bound
at the large shape; the floor is reading every request's cache, q and the ids once and
writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_m3_sparse_prefill")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax", "compute-bound")
SPARSE_BLOCK = 128


def selected_keys(d: Mapping[str, int]) -> int:
    """Keys one request's tokens attend to, summed over its tokens (per query head): token
    p's own block up to itself and its other min(topk, p // 128 + 1) - 1 blocks whole."""
    total = 0
    for j in range(d["q_len"]):
        p = d["prefix"] + j
        total += (min(d["topk"], p // SPARSE_BLOCK + 1) - 1) * SPARSE_BLOCK
        total += p % SPARSE_BLOCK + 1
    return total


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q read and the output written once, the int32 top-k ids read once, and per request
    and KV head the blocks its tokens select read once (at most its whole cache: every
    block, K and V), plus the block table and the three int32 length arrays."""
    e = ELEMENT_SIZE[dtype]
    tokens = d["reqs"] * d["q_len"]
    heads = d["kv_heads"] * d["group"]
    blocks = -(-(d["prefix"] + d["q_len"]) // SPARSE_BLOCK)
    read_blocks = min(blocks, d["q_len"] * d["topk"])
    kv = d["reqs"] * d["kv_heads"] * read_blocks * SPARSE_BLOCK * 2 * d["head_dim"] * e
    qo = 2 * tokens * heads * d["head_dim"] * e
    ids = tokens * d["kv_heads"] * d["topk"] * 4
    return qo + kv + ids + 4 * (d["reqs"] * blocks + 3 * d["reqs"] + 1)


def flops(d: Mapping[str, int]) -> int:
    """Q K^T and P V over the selected causal keys of each token and query head, 2 FLOPs a
    multiply-add each (the keys a tile visits for its other tokens, masked, not counted)."""
    heads = d["kv_heads"] * d["group"]
    return 4 * d["reqs"] * selected_keys(d) * heads * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "vllm_m3_sparse_prefill", "reqs", "q_len", "prefix", "kv_heads", "group", "head_dim", "topk"
)
_reference = _common.forward_reference("vllm_m3_sparse_prefill")
_baselines = _common.forward_baselines(
    "vllm_m3_sparse_prefill",
    (
        "torch",
        "torch",
        "the same by torch ops: each token's selected blocks gathered per KV head through "
        "the block table (in token chunks), the causal and selection mask applied, two "
        "einsums with an fp32 softmax",
        "torch_sparse_prefill",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_m3_sparse_prefill.launcher")


TRITON_KNOBS = (
    Knob("tile_q", "int", (None, 2, 4, 8, 16, 32), "tile_m",
         "consecutive query tokens per program (the tile is tile_q x group rows, and walks "
         "the union of its tokens' blocks); None: vLLM's 16"),
    Knob("num_warps", "int", (None, 4, 8, 16), "warps",
         "warps per program; None: vLLM's min(16, max(4, tile_q x group // 16))"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages (the block walk is a while loop); None: Triton's default 3 "
         "(vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_m3_sparse_prefill",
    description=(
        "MiniMax M3's Hopper block-sparse GQA prefill in vLLM (v0.34.0, "
        "_gqa_sparse_fwd_tiled_kernel): one program per (16 query tokens, KV head, request) "
        "walks the union of its tokens' indexer-selected 128-token blocks through the block "
        "table, the 16 x 16 query rows masked to the blocks each token chose, online softmax"
    ),
    dims=(
        Dim("reqs", "prefill requests in the step", "batch"),
        Dim("q_len", "new (query) tokens per request"),
        Dim("prefix", "cached tokens before them per request"),
        Dim("kv_heads", "KV heads on the rank (the indexer's heads)"),
        Dim("group", "query heads per KV head"),
        Dim("head_dim", "channels per head", "head_dim"),
        Dim("topk", "blocks the indexer selects per token and KV head"),
    ),
    trials=(
        Trial(
            "prefill_4x2048_ctx32k_minimax_m3",
            {
                "reqs": 4,
                "q_len": 2048,
                "prefix": 30720,
                "kv_heads": 4,
                "group": 16,
                "head_dim": 128,
                "topk": 16,
            },
            "a 32K-context chunked prefill of MiniMax M3's sparse attention on the rank: 4 "
            "requests each adding 2,048 tokens after 30,720 (256 blocks each), 4 KV heads of "
            "16 query heads of 128, top-16 blocks: 2,048 programs, 533 GFLOP, 539 MB moved",
        ),
        Trial(
            "prefill_2x256_ctx4k_minimax_m3",
            {
                "reqs": 2,
                "q_len": 256,
                "prefix": 3840,
                "kv_heads": 4,
                "group": 16,
                "head_dim": 128,
                "topk": 16,
            },
            "a short chunked prefill of the same: 2 requests of 256 tokens after 3,840 (32 "
            "blocks each, 16 selected), 128 programs",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    # query heads; a program's query heads (all `group` of its KV head, with its tokens);
    # the keys each request's tokens see (prefix + q_len); the share of those (query, key)
    # pairs the selection keeps
    shape_metrics=lambda d: {
        "num_heads": d["kv_heads"] * d["group"],
        "heads_per_program": d["group"],
        "kv_len": d["prefix"] + d["q_len"],
        "attended_fraction": selected_keys(d) / (d["q_len"] * (d["prefix"] + d["q_len"])),
    },
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # scores from bf16 tl.dots (fp32 accumulation), P rounded to the dtype for P V
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="sparse_prefill",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
