"""SGLang's rope-fused MLA decode, stage 1 (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_mla_decode_rope` and never committed.

Why this one: the MLA decode with the rotary embedding fused into it, the path DeepSeek V2/V3
take in SGLang with SGLANG_ROCM_FUSED_DECODE_MLA=1 (`forward_absorb_fused_mla_rope_core`):
the step's latent and rope part go to the KV pool unrotated, and one program per (request,
16 query heads, KV split) rotates the heads' q_pe and the last token's rope part by the
request's position (GPT-J pairs, cos and sin from the cache), then walks its split 32
tokens at a time: latent rows and rope parts gathered through kv_indices, the last token's
rope part swapped for the rotated one, two tl.dots for the scores (64-wide rope, 512-wide
latent), an online softmax, a third tl.dot with the latent rows as values; it writes the
split's fp32 output and log-sum-exp, and the rotated rope part from the last split.
`sglang_mla_decode` is the nearest: the same grouped stage 1 over a 576-wide latent head,
but with q_pe and the cache already rotated, its log-sum-exps in a separate buffer, and
the split merge timed with it; here the rotation (two gathers of the rope part per token
row, cos/sin loads, a select in every last tile) is inside the kernel, the split lengths
are cdiv(seq_len, splits) without SGLang's 32-token rounding, the log-sum-exp rides in
column 512 of each split row (a 2,052-byte fp32 row), and only stage 1 is wrapped (SGLang
0.5.9's wrapper calls a split merge whose arguments have changed).  Both trials are
DeepSeek-style MLA (rank 512, rope 64) with the Triton backend's 8 splits: DeepSeek-V3
under TP 8 (16 local heads) with 64 requests of 3,074 to 4,096 tokens, and
DeepSeek-V2-Lite (16 heads) with 4 requests of 795 to 1,024.  Outputs: the split rows
(fp32) and the rotated rope parts (the dtype).  The floor is each request's latent rows
and rope parts read once (every program holds all 16 heads), their indices, q read once,
the split rows and rope parts written once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_mla_decode_rope")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "mla", "online-softmax")


def _tokens(d: Mapping[str, int]) -> int:
    """The step's cached tokens (reference.seq_lens_of, without importing torch)."""
    ctx = d["ctx"]
    return sum(ctx - (b * 997) % max(ctx // 4, 1) for b in range(d["batch"]))


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each token's latent row and rope part read once with its int32 index; q read once;
    per request, head and split the fp32 output row and log-sum-exp written once; per
    request the rotated rope part written, its position and cos/sin row read."""
    es = ELEMENT_SIZE[dtype]
    width = d["rank"] + d["rope"]
    return (
        _tokens(d) * (width * es + 4)
        + d["batch"] * d["heads"] * (width * es + 4 * d["splits"] * (d["rank"] + 1))
        + d["batch"] * (2 * d["rope"] * es + 8 + 4 * 2)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per token and head: the rank + rope score dot product and the rank-wide value
    multiply-add."""
    return 2 * _tokens(d) * d["heads"] * (2 * d["rank"] + d["rope"])


_make_inputs = _common.forward_make_inputs(
    "sglang_mla_decode_rope", "batch", "ctx", "heads", "rank", "rope", "splits"
)
_reference = _common.forward_reference("sglang_mla_decode_rope")
_baselines = _common.forward_baselines(
    "sglang_mla_decode_rope",
    (
        "torch",
        "torch",
        "the same by torch in the input dtype, one request at a time: the rotations, the "
        "scores by two matmuls, per split a softmax and a matmul with the latent rows",
        "torch_stage1",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_mla_decode_rope.launcher")


TRITON_KNOBS = (
    Knob("block_n", "int", (16, 32, 64, 128), "kv_tile",
         "tokens per loop step (the K/V tile of the three tl.dots); SGLang's 32"),
    Knob("block_h", "int", (16, 32, 64), "heads_per_program",
         "query heads per program (the grid's second axis is heads / min(this, heads)); "
         "SGLang's 16"),
    Knob("num_warps", "int", (2, 4, 8, 16), "warps", "warps per program; SGLang's 4"),
    Knob("num_stages", "int", (1, 2, 3, 4), "pipeline_stages",
         "pipelining of the token loop; SGLang's 2 on CUDA (1 on ROCm)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_mla_decode_rope",
    description=(
        "SGLang's rope-fused MLA decode stage 1 (v0.5.9, _fwd_grouped_kernel_stage1_rope, "
        "DeepSeek's ROCm fused-decode path): per request, 16 query heads and KV split, q_pe "
        "and the new token's rope part rotated in the kernel, latent rows gathered 32 at a "
        "time, scores and values by tl.dot under an online softmax, fp32 split rows with "
        "their log-sum-exps out"
    ),
    dims=(
        Dim("batch", "requests in the decode step", "batch"),
        Dim("ctx", "the longest request's cached tokens (the others 3/4 of it to all)", "kv_len"),
        Dim("heads", "query heads (all over the one latent KV head)", "num_heads"),
        Dim("rank", "latent width (kv_lora_rank): the values and the scores' first part"),
        Dim("rope", "rope width (qk_rope_head_dim, all rotated)"),
        Dim(
            "splits", "KV splits per request (the attention backend's num_kv_splits)", "num_splits"
        ),
    ),
    trials=(
        Trial(
            "dsv3_tp8_64x4k",
            {"batch": 64, "ctx": 4096, "heads": 16, "rank": 512, "rope": 64, "splits": 8},
            "DeepSeek-V3 under TP 8 (16 local heads, rank 512, rope 64), 64 requests of 3,074 "
            "to 4,096 tokens, 8 splits: 512 programs, 7.8 GFLOP, 279 MB moved (bf16)",
        ),
        Trial(
            "dsv2_lite_4x1k",
            {"batch": 4, "ctx": 1024, "heads": 16, "rank": 512, "rope": 64, "splits": 8},
            "DeepSeek-V2-Lite (16 heads) with 4 requests of 795 to 1,024 tokens, 8 splits: "
            "32 programs, 0.12 GFLOP, 5.2 MB moved (bf16)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # scores and values by tl.dot on operands in the dtype (q_pe and the rope part rotated
    # in the dtype), fp32 accumulation and softmax, against fp32 throughout
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 1e-4},
    entry_point="mla_decode_rope",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
