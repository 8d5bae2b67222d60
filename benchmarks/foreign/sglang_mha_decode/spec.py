"""SGLang's Triton MHA decode (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang` (the whole decode_attention.py, shared with
`sglang_mla_decode`) and never committed.

Why this one: the decode attention SGLang's Triton backend runs for every model without
grouped KV heads (Llama-2, Phi-3, Qwen1.5 and other MHA models), and a decode attention
unlike the set's others.  One program per (request, query head, KV split) walks its split
of the request's slots 64 at a time, gathers the K rows of its own head through
kv_indices (page size 1), scores them by an element-wise product and a row sum (one query
row: no tensor cores), keeps an online softmax and accumulates the V rows; a second launch
merges the 8 splits of each head by their log-sum-exps.  `sglang_mla_decode` runs the
grouped kernel of the same file (a block of query heads sharing one latent KV head through
tl.dot); `torch_sdpa_decode` reads KV contiguously and shares it within a group;
`sglang_ds_sparse_decode` gathers a fixed 256 heavy rows per head.  Here nothing is shared:
every KV row is read by exactly one program, so the kernel is a pure stream of the KV cache
through scattered 256-byte rows, its speed set by the split count, the rows in flight and
the merge's fp32 round trip.  Trials: Llama-2-7B (32 heads of 128), 32 requests of 3,073
to 4,096 tokens (8,192 programs, 1.9 GB of KV read in bf16) and Phi-3-mini (32 heads of
96, BLOCK_DMODEL 128 masked), 4 requests of 769 to 1,024 tokens.  Output: the attention
output (q's dtype).  The floor is reading each request's K and V rows and its slots once,
q once and writing the output once, plus the split buffers' round trip.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "memory-bound", "multi-kernel")
SGLANG_SPLITS = 8


def _tokens(d: Mapping[str, int]) -> int:
    from foreign.sglang_mha_decode.reference import seq_lens_of

    return sum(seq_lens_of(d["batch"], d["ctx"]))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Every request's K and V rows of every head read once and its slots (int32) once; q
    read and the output written once; the fp32 split outputs and log-sum-exps (SGLang's 8
    splits) written by the first launch and read by the second."""
    es = ELEMENT_SIZE[dtype]
    hd, pairs = d["head_dim"], d["batch"] * d["heads"]
    tokens = _tokens(d)
    return (
        tokens * (d["heads"] * 2 * hd * es + 4)
        + pairs * 2 * hd * es
        + pairs * 2 * 4 * SGLANG_SPLITS * (hd + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per cached token and head: a head_dim dot product for the score and a head_dim
    multiply-add of the V row."""
    return 4 * _tokens(d) * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("sglang_mha_decode", "batch", "ctx", "heads", "head_dim")
_reference = _common.forward_reference("sglang_mha_decode")
_baselines = _common.forward_baselines(
    "sglang_mha_decode",
    (
        "torch",
        "torch",
        "the same by torch: each request's K and V rows gathered into a padded block, then "
        "one masked scaled_dot_product_attention with one query per (request, head)",
        "torch_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_mha_decode.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (None, 16, 32, 64, 128), "kv_tile",
         "stage 1: KV rows gathered per loop step; None: SGLang's 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "stage 1: warps per program; None: SGLang's 4 (kv_group_num 1)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "stage 1: pipelining of the KV loop; None: SGLang's 2"),
    Knob("num_kv_splits", "int", (None, 1, 2, 4, 8, 16, 32), "splits",
         "KV splits per request (stage 1's third grid axis; stage 2 merges them); None: "
         "SGLang's default max_kv_splits 8"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps",
         "stage 2 (the split merge): warps per program; None: SGLang's 4"),
    Knob("merge_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "stage 2: pipelining of the split loop; None: SGLang's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_mha_decode",
    description=(
        "SGLang's Triton MHA decode (v0.5.9, _fwd_kernel_stage1 and _fwd_kernel_stage2, "
        "kv_group_num 1): per request, query head and KV split, the head's K and V rows "
        "gathered 64 at a time through kv_indices, scored without tensor cores under an "
        "online softmax; the 8 splits merged in a second launch"
    ),
    dims=(
        Dim("batch", "requests in the decode step", "batch"),
        Dim("ctx", "the longest request's cached tokens (the others 3/4 of it to all)", "kv_len"),
        Dim("heads", "query heads (as many KV heads)", "num_heads"),
        Dim("head_dim", "channels per head", "head_dim"),
    ),
    trials=(
        Trial(
            "mha_decode_llama2_7b_32x4k",
            {"batch": 32, "ctx": 4096, "heads": 32, "head_dim": 128},
            "Llama-2-7B (32 heads of 128, no GQA), 32 requests of 3,073 to 4,096 tokens: "
            "8,192 stage-1 programs, 1.8 GFLOP, 1.9 GB moved (bf16)",
        ),
        Trial(
            "mha_decode_phi3_mini_4x1k",
            {"batch": 4, "ctx": 1024, "heads": 32, "head_dim": 96},
            "Phi-3-mini (32 heads of 96, no GQA; BLOCK_DMODEL 128 masked), 4 requests of 769 "
            "to 1,024 tokens: 1,024 stage-1 programs, 44 MB moved (bf16)",
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
    entry_point="mha_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
