"""vLLM's TurboQuant decode attention, MSE-key path (vLLM v0.34.0, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_turboquant_decode vllm_decode_stage2` and never
committed.

Why this one: with `--kv-cache-dtype turboquant_*` on a CUDA GPU, vLLM's TurboQuant
attention backend runs every decode step through `triton_turboquant_decode_attention`,
reading the cache that `vllm_turboquant_store` writes (a few bits per coordinate).  One
program per (request, query head, KV split) walks its split of the request's tokens 4 at a
time through the block table and, per token, unpacks its KV head's key bucket indices from
16-bit byte windows, gathers the Lloyd-Max centroids, renormalises them, dots them with the
rotated query row, multiplies by the fp16 norm read as two bytes; an online softmax; the
value's 3- or 4-bit indices unpacked the same way, times the fp16 scale plus zero,
accumulated; 1 warp, no tensor cores.  A second launch merges the 32 splits by their
log-sum-exps.  The nearest specs are the set's split-KV decodes (`sglang_mha_decode`
streams bf16 K/V rows, `vllm_unified_attention` tiles them through tl.dot), but here the
cache is read as bytes and every element is decoded by shifts, masks, a codebook gather
and a per-token renormalisation before it is used: integer and gather work per value, 118
bytes per token and head instead of 512, and each KV head's slots read again by every
query head of its group.  Trials: Llama 3.1 8B (32 heads, 8 KV heads of 128) with vLLM's
default turboquant_k3v4_nc, 32 requests of 6,145 to 8,192 tokens (32,768 stage-1
programs, 0.2 GB of cache read) and Qwen2.5-7B (28 heads, 4 KV heads of 128) with
turboquant_3bit_nc (3-bit values), 4 requests of 1,537 to 2,048 tokens.  The floor is
reading each request's slots and pages once, the rotated query once, the split buffer's
fp32 round trip and the output written once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_turboquant_decode", "vllm_decode_stage2")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention-decode", "memory-bound", "multi-kernel")
VLLM_SPLITS = 32
PAGE = 16


def _lens(d: Mapping[str, int]) -> list[int]:
    from foreign.vllm_turboquant_decode.reference import seq_lens_of

    return seq_lens_of(d["batch"], d["ctx"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each request's slots of every KV head read once (the bytes a slot uses), its pages
    (int32) once; the rotated fp32 query read once and the output written once; the fp32
    split outputs and log-sum-exps (vLLM's 32 splits) written by the first launch and read
    by the second."""
    from foreign.vllm_turboquant_decode.reference import layout

    lay = layout(d["head_dim"], d["key_bits"], d["value_bits"])
    used = lay["kps"] + lay["vdata"] + 4
    lens = _lens(d)
    tokens = sum(lens)
    pages = sum((n + PAGE - 1) // PAGE for n in lens)
    hd, pairs = d["head_dim"], d["batch"] * d["heads"]
    return (
        tokens * d["kv_heads"] * used
        + pages * 4
        + pairs * hd * (4 + ELEMENT_SIZE[dtype])
        + pairs * 2 * 4 * VLLM_SPLITS * (hd + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per cached token and query head: a head_dim dot product for the score and a head_dim
    multiply-add of the dequantized value (the decoding's integer work not counted)."""
    return 4 * sum(_lens(d)) * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "vllm_turboquant_decode", "batch", "ctx", "heads", "kv_heads", "head_dim", "key_bits",
    "value_bits",
)  # fmt: skip
_reference = _common.forward_reference("vllm_turboquant_decode")
_baselines = _common.forward_baselines(
    "vllm_turboquant_decode",
    (
        "torch",
        "torch",
        "the same by torch: every request's pages gathered into a padded block, unpacked "
        "and dequantized in fp32, then one masked scaled_dot_product_attention",
        "torch_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_turboquant_decode.launcher")


TRITON_KNOBS = (
    Knob("block_kv", "int", (None, 2, 4, 8, 16, 32), "kv_tile",
         "stage 1: tokens decoded per loop step; None: vLLM's 4"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "stage 1: warps per program; None: vLLM's 1"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "stage 1: pipelining of the token loop; None: vLLM's 1"),
    Knob("num_kv_splits", "int", (None, 4, 8, 16, 32, 64), "splits",
         "KV splits per request (stage 1's third grid axis; stage 2 merges them); None: "
         "vLLM's tq_max_kv_splits_for_cuda_graph 32"),
    Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps",
         "stage 2 (the split merge): warps per program; None: vLLM's 4"),
    Knob("merge_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "stage 2: pipelining of the split loop; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_turboquant_decode",
    description=(
        "vLLM's TurboQuant decode attention (v0.34.0, _tq_decode_stage1 and "
        "_fwd_kernel_stage2, MSE keys with norm correction): per request, query head and "
        "KV split, packed key indices and values unpacked from the uint8 paged cache 4 "
        "tokens at a time, keys decoded through a Lloyd-Max codebook, scored without "
        "tensor cores under an online softmax; the 32 splits merged in a second launch"
    ),
    dims=(
        Dim("batch", "requests in the decode step", "batch"),
        Dim("ctx", "the longest request's cached tokens (the others 3/4 of it to all)", "kv_len"),
        Dim("heads", "query heads", "num_heads"),
        Dim("kv_heads", "KV heads (each read by heads / kv_heads programs)"),
        Dim("head_dim", "channels per head", "head_dim"),
        Dim("key_bits", "bits per key coordinate (Lloyd-Max bucket index)"),
        Dim("value_bits", "bits per value coordinate (uniform index, 3 or 4)"),
    ),
    trials=(
        Trial(
            "tq_decode_llama31_8b_k3v4_32x8k",
            {
                "batch": 32,
                "ctx": 8192,
                "heads": 32,
                "kv_heads": 8,
                "head_dim": 128,
                "key_bits": 3,
                "value_bits": 4,
            },
            "Llama 3.1 8B (32 heads, 8 KV heads of 128) with vLLM's default "
            "turboquant_k3v4_nc (118-byte slots), 32 requests of 6,145 to 8,192 tokens: "
            "32,768 stage-1 programs, 0.25 GB moved",
        ),
        Trial(
            "tq_decode_qwen25_7b_3bit_4x2k",
            {
                "batch": 4,
                "ctx": 2048,
                "heads": 28,
                "kv_heads": 4,
                "head_dim": 128,
                "key_bits": 3,
                "value_bits": 3,
            },
            "Qwen2.5-7B (28 heads, 4 KV heads of 128) with turboquant_3bit_nc (102-byte "
            "slots), 4 requests of 1,537 to 2,048 tokens: 3,584 stage-1 programs, 7 MB "
            "moved (over half of it the split buffers)",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 decoding, scores, softmax and sums in both; the output rounded to the dtype
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 1e-4},
    entry_point="tq_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
