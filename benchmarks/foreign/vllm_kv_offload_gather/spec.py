"""vLLM's HF3FS KV connector gather (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_kv_offload_gather` and never committed.

Why this one as the set's KV offload copy: with the HF3FS connector (KV cache offloaded to
DeepSeek's 3FS distributed file system for prefix reuse across instances) every full KV
block a request fills is saved by `gather_kv_caches` into a pooled contiguous staging
buffer, one launch per block: one program per (layer, token of the block) loads the layer's
cache base address from an int64 pointer table and casts it into a pointer, then walks the
token's heads x content values in 128-value steps, each value's head and column found by a
divide and a modulo, read through the layer's paged [blocks, heads, block_size, content]
strides and written at [layer, head, token, column].  No arithmetic on the values: an
address-table gather across all layers at once, with integer index math per element.  The
large trial is DeepSeek-V3's MLA cache (61 layers, one 576-wide latent + rope head, 64-token
blocks: 3,904 programs, 9 MB moved); the small one Llama-3.2-1B on FlashInfer's HND cache
(16 layers, 2 x 8 KV heads of 64, 16-token blocks: 256 programs, 1 MB moved).  Memory- and
latency-bound; the floor is reading the block of every layer once and writing it once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_kv_offload_gather")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The block of every layer read once and written once in the dtype, plus the int32
    token indices and the int64 pointer table."""
    values = d["layers"] * d["heads"] * d["block_size"] * d["content"]
    return 2 * values * ELEMENT_SIZE[dtype] + d["block_size"] * 4 + d["layers"] * 8


def flops(d: Mapping[str, int]) -> int:
    """None counted: a copy (the index divides and modulos are integer work)."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "vllm_kv_offload_gather", "layers", "heads", "block_size", "content", "blocks"
)
_reference = _common.forward_reference("vllm_kv_offload_gather")
_baselines = _common.forward_baselines(
    "vllm_kv_offload_gather",
    (
        "torch",
        "torch",
        "the same by torch ops: one strided copy of each layer's block into the staging "
        "buffer (a launch a layer)",
        "torch_gather",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_kv_offload_gather.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 32, 64, 128, 256, 512, 1024), "tile_n",
         "values (heads x content of one token) per loop step of each program; None: "
         "vLLM's 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages of the value loop's loads; None: Triton's default 3 "
         "(vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_kv_offload_gather",
    description=(
        "vLLM's HF3FS KV connector gather (v0.34.0, kv_cache_gather_kernel): one program "
        "per (layer, token of a KV block) loads its layer's cache address from a pointer "
        "table and copies the token's heads x content values in 128-value steps into a "
        "contiguous [layers, heads, tokens, content] staging buffer"
    ),
    dims=(
        Dim("layers", "attention layers whose caches the block is gathered from", "batch"),
        Dim("heads", "heads of the [blocks, heads, block_size, content] view (MLA: 1)"),
        Dim("block_size", "tokens per KV block (the block gathered)", "rows"),
        Dim("content", "values per head and token"),
        Dim("blocks", "KV blocks of each layer's cache"),
    ),
    trials=(
        Trial(
            "block_llama32_1b_flashinfer_hnd",
            {"layers": 16, "heads": 16, "block_size": 16, "content": 64, "blocks": 256},
            "one 16-token block of Llama-3.2-1B on FlashInfer's HND cache (16 layers, K "
            "and V of 8 KV heads of 64 as 16 heads), saved to 3FS: 256 programs, 1 MB moved",
        ),
        Trial(
            "block_deepseek_v3_mla",
            {"layers": 61, "heads": 1, "block_size": 64, "content": 576, "blocks": 64},
            "one 64-token block of DeepSeek-V3's MLA cache (61 layers, a 512 latent + 64 "
            "rope head), saved to 3FS: 3,904 programs, 9 MB moved",
        ),
    ),
    backoff_dim="blocks",
    make_inputs=_make_inputs,
    # A program's loop walks its token's heads x content values, not one head's content.
    shape_metrics=lambda d: {"row_len": d["heads"] * d["content"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy, checked exactly
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="gather",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
