"""vLLM's Triton prefill attention as its vision encoders run it (vLLM v0.34.0, Apache-2.0),
as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_vit_prefill_attn` and never committed.

Non-causal flash attention over packed variable-length sequences (a ViT's images or windows,
cu_seqlens-packed): one program per (sequence, head, query tile), QK^T and PV in tl.dot tiles
around an online softmax in fp32, every program walking its sequence's whole KV; the head
dim padded to a power of two and masked.  Output: [tokens, heads, head_dim], bf16.  The
floor is the larger of the tensor-core time for the 4 x s^2 x head_dim flops per (sequence,
head) at the real head dim and the time to read q, k, v once and write the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_vit_prefill_attn")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax", "compute-bound")


def flops(d: Mapping[str, int]) -> int:
    """QK^T and PV over every (query, key) pair of each sequence, at the real head dim (the
    padding lanes of the power-of-two tile not counted)."""
    return 4 * d["b"] * d["h"] * d["d"] * d["s"] * d["s"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once and the output written once (the KV a program re-reads across
    query tiles not counted), plus the int32 start and length of each sequence."""
    tokens = d["b"] * d["s"]
    return ELEMENT_SIZE[dtype] * tokens * d["h"] * d["d"] * 4 + 8 * d["b"]


def shape_metrics(d: Mapping[str, int]) -> dict[str, float]:
    """`kv_len`: the keys each program walks, its whole sequence's s (non-causal);
    `attended_fraction`: 1, no causal triangle, window or mask leaves a walked key out."""
    return {"kv_len": d["s"], "attended_fraction": 1.0}


_make_inputs = _common.forward_make_inputs("vllm_vit_prefill_attn", "b", "s", "h", "d")
_reference = _common.forward_reference("vllm_vit_prefill_attn")
_baselines = _common.forward_baselines(
    "vllm_vit_prefill_attn",
    (
        "torch",
        "torch",
        "torch's scaled_dot_product_attention per sequence, non-causal",
        "torch_vit_prefill_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_vit_prefill_attn.launcher")


TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        (None, 16, 32, 64, 128),
        "tile_m",
        "query rows per program; None: vLLM's 128 for 16-bit inputs at compute capability "
        "8.0 and above (halved until its tiles fit shared memory)",
    ),
    Knob(
        "block_n",
        "int",
        (None, 16, 32, 64, 128),
        "kv_tile",
        "KV rows per loop step; None: vLLM's, equal to the query tile",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16),
        "warps",
        "warps per program; None: vLLM's 8 for a head wider than 64 (4 otherwise)",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the KV loop; None: vLLM's 1",
    ),
)

SPEC = KernelSpec(
    name="vllm_vit_prefill_attn",
    description=(
        "vLLM's Triton prefill attention (v0.34.0) as its vision encoders' TRITON_ATTN "
        "backend launches it: non-causal flash attention over cu_seqlens-packed images, "
        "QK^T and PV in tl.dot tiles, the head dim padded to a power of two, bf16"
    ),
    dims=(
        Dim("b", "sequences in the batch (images, or attention windows)", "batch"),
        Dim("s", "patches per sequence (queries, and the keys they attend)", "query_len"),
        Dim("h", "attention heads (query and KV: a ViT has no grouped KV)", "num_heads"),
        Dim("d", "head dimension (not a power of two in these encoders)", "head_dim"),
    ),
    # A large full-attention layer first, then a batch of smaller images; both encoders run
    # their vision attention through vLLM's TRITON_ATTN backend when it is selected.
    trials=(
        Trial(
            "qwen25vl_full_attn_9216",
            {"b": 1, "s": 9216, "h": 16, "d": 80},
            "one 1344 x 1344 image through a full-attention layer of Qwen2.5-VL-7B's vision "
            "encoder (patch 14: 96 x 96 = 9,216 patches, 16 heads of 80, padded to 128): "
            "435 GFLOP, 72 query tiles a head, 1,152 programs of 8 warps, each walking 72 "
            "KV tiles",
        ),
        Trial(
            "qwen3vl_8_images_1024",
            {"b": 8, "s": 1024, "h": 16, "d": 72},
            "8 images of 512 x 512 through a layer of Qwen3-VL-8B's vision encoder (patch "
            "16: 32 x 32 = 1,024 patches each, 16 heads of 72, padded to 128): 38.7 GFLOP, "
            "1,024 programs of 8 warps, each walking 8 KV tiles",
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    shape_metrics=shape_metrics,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the 16-bit q, k and P, v tiles feed the tensor cores (the spec's dtype, bf16)
    fixed_metrics={"matmul_operand_bits": 16},
    # fp32 accumulation and softmax; P is rounded to the input dtype before PV; fp32 inputs
    # go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 3e-3},
    entry_point="vit_prefill_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
