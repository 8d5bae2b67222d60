"""vLLM's unified Triton attention (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_unified_attention vllm_attention_helpers` and never committed.

Why this one: `kernel_unified_attention` is vLLM's TRITON_ATTN backend, its portable
attention (the default on ROCm, and on CUDA wherever FlashAttention and FlashInfer do not
serve the model or `--attention-backend TRITON_ATTN` asks for it): one launch for a whole
mixed batch of prefills and decodes over the paged KV cache.  A program owns BLOCK_Q query
tokens of one sequence times one KV head's query heads (16 rows), finds its sequence by a
binary search over the cumulative query lengths, and walks the keys in 32-token tiles
through the block table with tl.dot for S = Q K^T and P V and an online softmax.  Both
trials are Llama-3.1-8B layers (32 query heads over 8 KV heads of 128, 16-token blocks),
both on the 2D launch: four 2,048-token prefill chunks over 2,048 cached tokens each
(compute-bound, 412 GFLOP), and a decode step of 64 sequences at 2k context (above the
backend's 3D threshold of 16 sequences for 8 KV heads, so 2D: bound by reading 537 MB of
KV through the block table with 4 of each program's 16 rows live).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_unified_attention", "vllm_attention_helpers")

CONTEXTS = ("attention", "online-softmax")

_SIZES = {"float32": 4, "float16": 2, "bfloat16": 2}


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q read and the output written once, every sequence's keys and values read once
    (the re-reads by the sequence's other query blocks not counted), the int32 block table,
    lengths and starts."""
    e = _SIZES[dtype]
    seq_len = d["ctx"] + d["q_len"]
    qo = 2 * d["seqs"] * d["q_len"] * d["heads"] * d["head"] * e
    kv = 2 * d["seqs"] * seq_len * d["kvheads"] * d["head"] * e
    per_seq = -(-seq_len // d["block_size"])
    return qo + kv + 4 * (d["seqs"] * per_seq + 2 * d["seqs"] + 1)


def flops(d: Mapping[str, int]) -> int:
    """Q K^T and P V over the keys each query sees (causal: query i of a sequence sees its
    ctx + i + 1 keys), 2 FLOPs a multiply-add each."""
    q_len = d["q_len"]
    visible = q_len * d["ctx"] + q_len * (q_len + 1) // 2
    return 4 * d["seqs"] * visible * d["heads"] * d["head"]


_make_inputs = _common.forward_make_inputs(
    "vllm_unified_attention", "seqs", "q_len", "ctx", "heads", "kvheads", "head", "block_size"
)
_reference = _common.forward_reference("vllm_unified_attention")
_baselines = _common.forward_baselines(
    "vllm_unified_attention",
    (
        "torch",
        "torch",
        "the same by torch ops: every sequence's keys and values gathered through the block "
        "table in one index, one SDPA over the batch with GQA and the offset causal mask",
        "torch_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_unified_attention.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "query rows per program (BLOCK_Q = block_m / queries-per-kv query tokens of one "
         "sequence); None: vLLM's 16"),
    Knob("tile_size", "int", (None, 16, 32, 64, 128), "tile_n",
         "keys per step of the loop over the sequence (gathered through the block table); "
         "None: vLLM's 32 for the 2D launch"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none on CUDA)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the key loop; None: Triton's default 3 (vLLM passes "
         "none on CUDA)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_unified_attention",
    description=(
        "vLLM's unified Triton attention (v0.34.0, kernel_unified_attention, the TRITON_ATTN "
        "backend, 2D launch): per KV head and block of query tokens of one sequence (found "
        "by binary search), an online softmax over the keys gathered through the paged "
        "block table in 32-key tiles, causal, GQA rows packed 16 to a program"
    ),
    dims=(
        Dim("seqs", "sequences in the batch", "batch"),
        Dim("q_len", "new (query) tokens per sequence"),
        Dim("ctx", "cached tokens per sequence before the new ones"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kvheads", "KV heads (query heads share them)"),
        Dim("head", "channels per head", "head_dim"),
        Dim("block_size", "tokens per KV cache block"),
    ),
    trials=(
        Trial(
            "chunked_prefill_4x2048_llama31_8b",
            {
                "seqs": 4,
                "q_len": 2048,
                "ctx": 2048,
                "heads": 32,
                "kvheads": 8,
                "head": 128,
                "block_size": 16,
            },
            "four 2,048-token prefill chunks over 2,048 cached tokens each through a "
            "Llama-3.1-8B layer (32 heads over 8 KV heads of 128, 16-token blocks): 2,052 "
            "query blocks x 8 KV heads, 412 GFLOP, 201 MB moved",
        ),
        Trial(
            "decode_64_llama31_8b",
            {
                "seqs": 64,
                "q_len": 1,
                "ctx": 2047,
                "heads": 32,
                "kvheads": 8,
                "head": 128,
                "block_size": 16,
            },
            "a decode step of 64 sequences at 2,048 tokens of the same layer (above the "
            "backend's 3D threshold of 16, so the 2D launch): 80 query blocks (16 empty) x 8 "
            "KV heads, one live token of four per program, 537 MB of KV read",
        ),
    ),
    backoff_dim="seqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 softmax and accumulation, P rounded to the value dtype before P V, out in q's
    # dtype; fp32 operands are tf32 on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="unified_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
