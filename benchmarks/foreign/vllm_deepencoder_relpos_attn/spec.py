"""vLLM's DeepEncoder relative-position attention (vLLM v0.34.0, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_deepencoder_relpos_attn` and never committed.

Why this one as the set's vision-encoder attention with a gathered 2-D position bias:
DeepSeek-OCR's DeepEncoder runs a SAM ViT-B over each page image, and in vLLM the global
attention blocks of that encoder (4 of its 12, the windowed ones go to torch) fuse SAM's
decomposed relative-position bias into one Triton attention: non-causal, every query of an
image attending to every patch, with the bias of each query and key pair read as rel_h at
the key's row plus rel_w at its column (two small per-query tables instead of a tokens x
tokens mask).  One program per 64 query patches of one image and head walks all the keys
in 64-key steps: q k^T in a tl.dot tile, the two bias gathers, an online base-2 softmax and
p v in a second tl.dot.  Both trials are SAM ViT-B (12 heads of 64) in DeepSeek-OCR's
modes: one 640 x 640 page in Small mode (a 40 x 40 patch grid, 1600 tokens: 300 programs,
7.9 GFLOP) and a batch of 4 pages in Base mode, 1024 x 1024 (64 x 64 patches, 4096 tokens
each: 3072 programs, 206 GFLOP).  Compute-bound at the floor (4 x tokens^2 x head_dim FLOP
per image and head against reading q, k, v, the bias tables and writing the output once).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_deepencoder_relpos_attn")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax", "compute-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k, v and the output once, and the two bias tables (grid_h + grid_w values per
    query) once."""
    tokens = d["grid_h"] * d["grid_w"]
    per_head = tokens * (4 * d["head_dim"] + d["grid_h"] + d["grid_w"])
    return d["images"] * d["heads"] * per_head * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """q k^T and p v: 4 x tokens^2 x head_dim per image and head (the bias adds and the
    softmax not counted)."""
    tokens = d["grid_h"] * d["grid_w"]
    return 4 * d["images"] * d["heads"] * tokens * tokens * d["head_dim"]


_make_inputs = _common.forward_make_inputs(
    "vllm_deepencoder_relpos_attn", "images", "heads", "grid_h", "grid_w", "head_dim"
)
_reference = _common.forward_reference("vllm_deepencoder_relpos_attn")
_baselines = _common.forward_baselines(
    "vllm_deepencoder_relpos_attn",
    ("torch", "torch", "vLLM's own fallback off CUDA: the bias materialised as a tokens x "
     "tokens mask, then torch's scaled_dot_product_attention", "torch_sdpa"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.vllm_deepencoder_relpos_attn.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "query patches per program; None: vLLM's 64"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "kv_tile",
         "keys per loop step; None: vLLM's 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the key loop; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_deepencoder_relpos_attn",
    description=(
        "vLLM's DeepEncoder relative-position attention (v0.34.0, "
        "_deepencoder_rel_pos_attention_kernel): non-causal flash attention over an image's "
        "patches with SAM's decomposed relative-position bias gathered per key from rel_h "
        "and rel_w, 64 x 64 tl.dot tiles, online base-2 softmax"
    ),
    dims=(
        Dim("images", "images (pages or crops) in the encoder batch", "batch"),
        Dim("heads", "attention heads", "num_heads"),
        Dim("grid_h", "patch rows of an image", "query_len"),
        Dim("grid_w", "patch columns of an image"),
        Dim("head_dim", "head size", "head_dim"),
    ),
    trials=(
        Trial(
            "small_mode_page_deepseek_ocr",
            {"images": 1, "heads": 12, "grid_h": 40, "grid_w": 40, "head_dim": 64},
            "DeepSeek-OCR's SAM ViT-B (12 heads of 64), a global attention block over one "
            "640 x 640 page in Small mode: 40 x 40 patches, 1600 tokens, 300 programs, "
            "7.9 GFLOP",
        ),
        Trial(
            "base_mode_4_pages_deepseek_ocr",
            {"images": 4, "heads": 12, "grid_h": 64, "grid_w": 64, "head_dim": 64},
            "the same block over a batch of 4 pages in Base mode, 1024 x 1024: 64 x 64 "
            "patches, 4096 tokens each, 3072 programs, 206 GFLOP",
        ),
    ),
    backoff_dim="images",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation and softmax; p is rounded to v's dtype before p v; fp32 inputs go
    # through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 3e-3},
    entry_point="relpos_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
