"""MiniMax M3's block-sparse GQA decode attention on Hopper (vLLM v0.34.0, Apache-2.0), as
kbopt sees it: kernels nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_m3_sparse_decode` and never committed.

Why this one as the set's block-sparse decode attention: in MiniMax M3's sparse layers the
lightning indexer picks, for every query token and KV head, 16 128-token KV blocks (its own
block forced in), and on Hopper vLLM runs the decode tokens' main attention over them with
the common split-K pair (`minimax_m3_sparse_attn_decode`; the prefill tokens go to the
query-tiled `vllm_m3_sparse_prefill`).  One token per request leaves nothing to tile over
the queries, so the split launch parallelises over the selected blocks instead: one
program per (token, chunk of its top-k list, KV head) stacks the KV head's 16 query heads
into a 16-row tile and walks its chunk's blocks, each a page looked up in the block table,
K [128, 128] and V [128, 128] loaded from the page's packed [128, 2 x 128] rows, two
tl.dots and an online base-2 softmax a block, and stores a partial output in the dtype and
an fp32 log-sum-exp; a merge launch, one program per (token, head), combines the chunks.
vLLM sizes the chunk count for about 256 split programs whatever the batch: at a large
batch every program walks a token's whole list (16 blocks) and the merge only rescales;
at a small one each program gets a single block and the merge does the reduction.  The
nearest specs are `vllm_step5_swa_decode` (split-K decode over a contiguous window of
16-token pages, 64 keys a step) and `sglang_ds_sparse_decode` (top-k sparse decode over
gathered single tokens); here each step is a whole 128-token page chosen per token and KV
head.  Both trials are MiniMax M3 on the rank as in `vllm_m3_sparse_prefill`'s (4 KV
heads, 16 query heads each, head 128, top-16; the model's config class is transformers',
not in the wheel) in plain decode: 64 requests of 16K to 32K tokens (one chunk: 256 split
programs of 16 blocks, 4.2 GFLOP, 262 MB moved) and 4 requests of 4K to 8K tokens (16
chunks of one block each, merged).  Memory-bound: the floor is reading each token's
selected K and V rows, q and the ids once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_m3_sparse_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "online-softmax", "memory-bound", "multi-kernel")
SPARSE_BLOCK = 128


def _lengths(d: Mapping[str, int]) -> list[int]:
    """reference.py's `seq_lengths`: the longest request ctx tokens, the others down to
    half of it."""
    ctx, q_len = d["ctx"], d["q_len"]
    return [max(q_len, ctx - (r * 7919) % max(1, ctx // 2)) for r in range(d["reqs"])]


def _keys(p: int, topk: int) -> int:
    """Keys a token at position p attends to per query head: its own block up to itself and
    its other min(topk, p // 128 + 1) - 1 blocks whole."""
    return (min(topk, p // SPARSE_BLOCK + 1) - 1) * SPARSE_BLOCK + p % SPARSE_BLOCK + 1


def selected_keys(d: Mapping[str, int]) -> int:
    """Keys the batch's tokens attend to, summed over its tokens (per query head)."""
    q_len = d["q_len"]
    return sum(_keys(length - q_len + t, d["topk"]) for length in _lengths(d) for t in range(q_len))


def visible_keys(d: Mapping[str, int]) -> int:
    """Keys the batch's tokens could attend to causally (position + 1 each), summed."""
    q_len = d["q_len"]
    return sum(length - q_len + t + 1 for length in _lengths(d) for t in range(q_len))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q read and the output written once, the int32 top-k ids read once, and per request
    and KV head the keys its last token selects read once, K and V (a lower bound on the
    union of its tokens' selections), plus those blocks' table entries and the lengths; the
    split launch's partial buffers (their size is a launch choice) not counted."""
    e = ELEMENT_SIZE[dtype]
    tokens = d["reqs"] * d["q_len"]
    heads = d["kv_heads"] * d["group"]
    lengths = _lengths(d)
    last_keys = sum(_keys(length - 1, d["topk"]) for length in lengths)
    kv = last_keys * d["kv_heads"] * 2 * d["head_dim"] * e
    qo = 2 * tokens * heads * d["head_dim"] * e
    ids = tokens * d["kv_heads"] * d["topk"] * 4
    table = sum(min(d["topk"], -(-length // SPARSE_BLOCK)) for length in lengths)
    return qo + kv + ids + 4 * (table + d["reqs"])


def flops(d: Mapping[str, int]) -> int:
    """Q K^T and P V over the selected causal keys of each token and query head, 2 FLOPs a
    multiply-add each (the padded tile rows of a group under 16, the masked positions of
    the token's own block and the merge not counted)."""
    heads = d["kv_heads"] * d["group"]
    return 4 * selected_keys(d) * heads * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "vllm_m3_sparse_decode", "reqs", "q_len", "ctx", "kv_heads", "group", "head_dim", "topk"
)
_reference = _common.forward_reference("vllm_m3_sparse_decode")
_baselines = _common.forward_baselines(
    "vllm_m3_sparse_decode",
    (
        "torch",
        "torch",
        "the same by torch ops: each token's selected blocks gathered per KV head through "
        "the block table (in token chunks), the causal and selection mask applied, two "
        "einsums with an fp32 softmax",
        "torch_sparse_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_m3_sparse_decode.launcher")


TRITON_KNOBS = (
    Knob("splits", "int", (None, 1, 2, 4, 8, 16), "splits",
         "chunks each token's top-k list is cut into (the split launch's programs per token "
         "and KV head, merged by the second launch; a power of two); None: vLLM's, about "
         "256 split programs"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "split launch: warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "split launch: pipelining of the block loop; None: Triton's default 3"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps",
         "merge launch: warps per program; None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_m3_sparse_decode",
    description=(
        "MiniMax M3's Hopper block-sparse GQA decode in vLLM (v0.34.0, "
        "_gqa_sparse_decode_kernel, _merge_topk_attn_out_kernel): per (token, chunk of its "
        "top-k list, KV head), the 16 query heads' rows against the chunk's indexer-selected "
        "128-token pages through the block table, two tl.dots and an online base-2 softmax "
        "a page; a second launch merges the chunks by their log-sum-exps"
    ),
    dims=(
        Dim("reqs", "requests in the decode step", "batch"),
        Dim("q_len", "query tokens per request (1 decode, 1 + drafts)", "query_len"),
        Dim("ctx", "the longest request's tokens (the others down to half of it)", "kv_len"),
        Dim("kv_heads", "KV heads on the rank (the indexer's heads)"),
        Dim("group", "query heads per KV head"),
        Dim("head_dim", "channels per head", "head_dim"),
        Dim("topk", "blocks the indexer selects per token and KV head"),
    ),
    trials=(
        Trial(
            "decode_64x32k_minimax_m3",
            {
                "reqs": 64,
                "q_len": 1,
                "ctx": 32768,
                "kv_heads": 4,
                "group": 16,
                "head_dim": 128,
                "topk": 16,
            },
            "a decode step of MiniMax M3's sparse attention on the rank at a large batch: 64 "
            "requests of 16,655 to 32,768 tokens, 4 KV heads of 16 query heads of 128, top-16 "
            "blocks; vLLM's launch keeps one chunk (256 split programs of 16 blocks each, "
            "4,096 merge programs): 4.2 GFLOP, 262 MB moved (bf16)",
        ),
        Trial(
            "decode_4x8k_minimax_m3",
            {
                "reqs": 4,
                "q_len": 1,
                "ctx": 8192,
                "kv_heads": 4,
                "group": 16,
                "head_dim": 128,
                "topk": 16,
            },
            "the same layer at a small batch: 4 requests of 4,369 to 8,192 tokens; vLLM's "
            "launch cuts each top-k list into 16 chunks of one block (256 split programs, "
            "256 merge programs): 16.3 MB moved (bf16)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    # query heads; a program's query heads (all `group` of its KV head); the share of the
    # batch's (query, key) pairs the selection keeps
    shape_metrics=lambda d: {
        "num_heads": d["kv_heads"] * d["group"],
        "heads_per_program": d["group"],
        "attended_fraction": selected_keys(d) / visible_keys(d),
    },
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # scores from tl.dots in the dtype (fp32 accumulation; TF32 for fp32 on GPUs), P rounded
    # to the dtype for P V, each chunk's output rounded to the dtype before the merge
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="sparse_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
