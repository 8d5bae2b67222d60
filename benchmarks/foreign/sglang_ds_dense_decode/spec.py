"""SGLang's Double Sparsity dense decode (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_ds_dense_decode` and never committed.

Why this one: the decode attention SGLang's Double Sparsity backend runs on every step whose
longest request is below `ds_sparse_decode_threshold` (4096 tokens by default), i.e. every
decode step of a server started with `--enable-double-sparsity` until its contexts grow
long, and a lightllm-style flash decode unlike the set's other decodes.  Its splits are a
fixed 256 positions long, so their number grows with the context (16 at 4K) where
`sglang_mha_decode` and `sglang_mla_decode` cut each request into a fixed number of splits;
one program serves one query head, scores 16 gathered K rows by an element-wise product and
a row sum in a single warp (no tensor cores) and re-reads its KV head's rows that the other
query heads of its group read too, where `sglang_mha_decode` / `torch_sdpa_decode` share each
KV row among a group's heads through tl.dot; and the slots come from the request pool's
token table through the request's pool row rather than a flattened kv_indices list.
`sglang_ds_sparse_decode` is its sibling past the threshold (the same row-sum scoring over
each head's 256 heavy positions only).  Both trials are Llama 3.1 8B (32 query heads, 8 KV
heads of 128) just below the threshold and at decode size: a step of 64 requests of 3,003
to 4,000 tokens (16 splits, 32,768 programs, 0.82 GB of K and V) and one of 8 requests of
795 to 1,024 tokens.  Output: the attention output (q's dtype).  The floor is reading each
request's slots and K and V rows once (a group's four query heads re-reading them hit L2 at
best), q and the output once, plus the split buffers' round trip.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ds_dense_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "memory-bound")
SGLANG_BLOCK_SEQ = 256


def _lens(d: Mapping[str, int]) -> list[int]:
    ctx = d["ctx"]
    return [ctx - (b * 997) % max(ctx // 4, 1) for b in range(d["batch"])]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per request: its slots (int32) and the K and V rows of every KV head read once, its
    pool row index and length read once; q read and the output written once; the fp32 split
    outputs and log-sum-exps of its cdiv(len, 256) splits (SGLang's) written by the first
    launch and read by the second, per query head."""
    es = ELEMENT_SIZE[dtype]
    total = 0
    for n in _lens(d):
        splits = -(-n // SGLANG_BLOCK_SEQ)
        total += (
            n * (4 + 2 * d["kv_heads"] * d["head_dim"] * es)
            + 8 * 2
            + 2 * d["heads"] * d["head_dim"] * es
            + 2 * 4 * d["heads"] * splits * (d["head_dim"] + 1)
        )
    return total


def flops(d: Mapping[str, int]) -> int:
    """Per request, query head and position: a head_dim dot product for the score and a
    head_dim multiply-add of the V row."""
    return 4 * sum(_lens(d)) * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "sglang_ds_dense_decode", "batch", "ctx", "heads", "kv_heads", "head_dim"
)
_reference = _common.forward_reference("sglang_ds_dense_decode")
_baselines = _common.forward_baselines(
    "sglang_ds_dense_decode",
    (
        "torch",
        "torch",
        "the same by torch: each request's K and V rows gathered into a padded batch, then "
        "one masked scaled_dot_product_attention with GQA",
        "torch_dense_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ds_dense_decode.launcher")


TRITON_KNOBS = (
    Knob("block_seq", "int", (None, 64, 128, 256, 512, 1024), "tile_n",
         "positions per split (the first launch's third grid axis is the longest request / "
         "this; the second merges the splits); None: SGLang's 256"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "kv_tile",
         "positions gathered per loop step (must divide block_seq); None: SGLang's 16"),
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
    name="sglang_ds_dense_decode",
    description=(
        "SGLang's Double Sparsity dense decode (v0.5.9, _fwd_kernel_flash_decode_stage1 and "
        "_stage2, below the sparse threshold): per request, query head and 256 of its "
        "positions, the K and V rows gathered 16 at a time through the request pool's token "
        "table, scored without tensor cores under an online softmax; the splits merged in a "
        "second launch"
    ),
    dims=(
        Dim("batch", "requests in the decode step", "batch"),
        Dim("ctx", "the longest request's context tokens (the others 3/4 of it to all)", "kv_len"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kv_heads", "KV heads"),
        Dim("head_dim", "channels per head (16, 32, 64 or 128)", "head_dim"),
    ),
    trials=(
        Trial(
            "ds_dense_decode_llama31_8b_64x4k",
            {"batch": 64, "ctx": 4000, "heads": 32, "kv_heads": 8, "head_dim": 128},
            "Llama 3.1 8B with --enable-double-sparsity, 64 requests of 3,003 to 4,000 tokens "
            "(below the 4096-token sparse threshold): 16 splits of 256, 32,768 programs, "
            "3.3 GFLOP, 844 MB moved (bf16)",
        ),
        Trial(
            "ds_dense_decode_llama31_8b_8x1k",
            {"batch": 8, "ctx": 1024, "heads": 32, "kv_heads": 8, "head_dim": 128},
            "the same with 8 requests of 795 to 1,024 tokens: 4 splits, 1,024 programs, "
            "0.12 GFLOP, 31 MB moved (bf16)",
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
    entry_point="ds_dense_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
    # Every stage-1 program scores one query head, whatever the knobs: its KV head's rows are
    # read once for each of the group's query heads.
    fixed_metrics={"heads_per_program": 1},
)
