"""SGLang's Double Sparsity sparse decode (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_ds_sparse_decode` and never committed.

Why this one: the attention of a sparse long-context decode, and a decode attention unlike
the set's others.  With `--enable-double-sparsity` SGLang scores each context token from 32
heavy channels (`sglang_ds_label_scores`), keeps each query head's 256 best positions with
torch.topk and attends to those alone: one program per (request, query head, 128 heavy
positions) walks them 16 at a time, loads the positions, maps them to KV slots through the
request's token table and gathers 16 scattered 256-byte K rows and V rows, scores them by an
element-wise product and a row sum in one warp (one query row: no tensor cores), and keeps
an online softmax; a second launch merges the two splits of each head by their log-sum-exps.
`sglang_mla_decode` and `torch_sdpa_decode` read each request's KV contiguously in its page
order and share every KV row among the query heads of its group (tl.dot over a block of
heads); here each query head gathers its own 256 rows through two levels of indices, so a
KV head's rows are read by its four query heads separately and the reads are row-sized
scatter, latency- and memory-bound.  Both trials are Llama 3.1 8B (32 query heads, 8 KV
heads of 128) with SGLang's 256 heavy tokens: a step of 64 requests of 6,173 to 8,192
tokens (4096 programs, 268 MB gathered) and one of 8 requests at the sparse threshold
(4096 tokens: 512 programs).  Output: the attention output (q's dtype).  The floor is
gathering each head's heavy K and V rows, positions and slots once, reading q and writing
the output once, plus the split buffers' round trip.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ds_sparse_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "memory-bound")
SGLANG_BLOCK_SEQ = 128


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per request and query head: its heavy positions (int64) and their slots (int32) read
    once, the heavy K and V rows of its KV head gathered once, q read and the output written
    once; the fp32 split outputs and log-sum-exps (SGLang's 128-position splits) written by
    the first launch and read by the second."""
    es = ELEMENT_SIZE[dtype]
    pairs = d["batch"] * d["heads"]
    splits = -(-d["heavy"] // SGLANG_BLOCK_SEQ)
    return pairs * (
        d["heavy"] * (8 + 4 + 2 * d["head_dim"] * es)
        + 2 * d["head_dim"] * es
        + 2 * 4 * splits * (d["head_dim"] + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per request, query head and heavy position: a head_dim dot product for the score and
    a head_dim multiply-add of the V row."""
    return 4 * d["batch"] * d["heads"] * d["heavy"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "sglang_ds_sparse_decode", "batch", "ctx", "heads", "kv_heads", "head_dim", "heavy"
)
_reference = _common.forward_reference("sglang_ds_sparse_decode")
_baselines = _common.forward_baselines(
    "sglang_ds_sparse_decode",
    (
        "torch",
        "torch",
        "the same by torch: the heavy K and V rows gathered per head, then one batched "
        "scaled_dot_product_attention with one query per (request, head)",
        "torch_sparse_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ds_sparse_decode.launcher")


TRITON_KNOBS = (
    Knob("block_seq", "int", (None, 32, 64, 128, 256, 512), "tile_n",
         "heavy positions per split (the first launch's third grid axis is heavy / this; the "
         "second merges the splits); None: SGLang's 128"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "kv_tile",
         "heavy positions gathered per loop step (must divide block_seq); None: SGLang's 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "first launch: warps per program; None: SGLang's 1"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "first launch: pipelining of the gather loop; None: SGLang's 2"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps",
         "second launch (the split merge): warps per program; None: SGLang's 4"),
    Knob("merge_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "second launch: pipelining of the split loop; None: SGLang's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ds_sparse_decode",
    description=(
        "SGLang's Double Sparsity sparse decode (v0.5.9, _sparse_fwd_kernel_flash_decode_"
        "stage2 and _stage3): per request, query head and 128 of its top-k positions, the "
        "positions' K and V rows gathered 16 at a time through the token table, scored "
        "without tensor cores under an online softmax; the splits merged in a second launch"
    ),
    dims=(
        Dim("batch", "requests in the decode step", "batch"),
        Dim("ctx", "the longest request's context tokens (the others 3/4 of it to all)"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kv_heads", "KV heads"),
        Dim("head_dim", "channels per head", "head_dim"),
        Dim("heavy", "heavy tokens each query head attends to (ds_heavy_token_num)"),
    ),
    trials=(
        Trial(
            "ds_decode_llama31_8b_64x8k",
            {"batch": 64, "ctx": 8192, "heads": 32, "kv_heads": 8, "head_dim": 128, "heavy": 256},
            "Llama 3.1 8B with --enable-double-sparsity, 64 requests of 6,173 to 8,192 tokens, "
            "SGLang's 256 heavy tokens: 4096 programs gathering 524,288 K and V rows, 0.27 "
            "GFLOP, 280 MB moved (bf16)",
        ),
        Trial(
            "ds_decode_llama31_8b_8x4k",
            {"batch": 8, "ctx": 4096, "heads": 32, "kv_heads": 8, "head_dim": 128, "heavy": 256},
            "the same with 8 requests at SGLang's sparse-decode threshold (3,099 to 4,096 "
            "tokens): 512 programs, 35 MB moved (bf16)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # scores from products in the input dtype summed over head_dim (fp32 softmax and sums),
    # the output rounded to the dtype, against fp32 throughout
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 1e-4},
    entry_point="ds_sparse_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
