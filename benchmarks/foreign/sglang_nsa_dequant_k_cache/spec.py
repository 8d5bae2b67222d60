"""SGLang's NSA fp8 K-cache dequantization through a flat page table (SGLang v0.5.9,
Apache-2.0), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_nsa_dequant_k_cache` and never
committed.

Why this one as the set's dequantizing gather: DeepSeek-V3.2 served with an fp8 KV cache
(`--kv-cache-dtype fp8_e4m3`) keeps each token's MLA latent as a 656-byte record (512 e4m3
bytes, four fp32 scales for its 128-column tiles, the 64 bf16 rotary columns); for an
extend batch with cached prefixes, the NSA backend's flashmla_sparse path (and the MHA
prefill path) first calls `dequantize_k_cache_paged`, which gathers every token's record
through the batch's flat page table and writes it out as 576 bf16 values.  A [tokens, 5]
grid: four programs per token scale one 128-byte e4m3 tile each by its fp32 scale, the
fifth copies the rotary key; each reads its slot from the page table first.  Memory-bound:
656 bytes gathered and 1152 written per token, in 128-element programs.  Both trials are
DeepSeek-V3.2 extends over 64-token pages: a launch-sized one, a 4096-token sequence (a
cached prefix plus its new chunk) from a 65,536-slot pool (20,480 programs, 7.4 MB moved),
and a large one, a chunked-prefill batch of 8 requests of 16,384 tokens (131,072 tokens)
from a 262,144-slot pool (655,360 programs, 237 MB moved).  The floor is reading each
gathered record and slot once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_nsa_dequant_k_cache")

CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each gathered token's int32 slot and 656-byte record read once, its 576 bf16 values
    written once (bf16 out whatever the dtype)."""
    del dtype
    return d["tokens"] * (4 + 656 + 2 * 576)


def flops(d: Mapping[str, int]) -> int:
    """One multiply per latent value."""
    return d["tokens"] * 512


_make_inputs = _common.forward_make_inputs(
    "sglang_nsa_dequant_k_cache", "tokens", "pool_tokens", "page_size"
)
_reference = _common.forward_reference("sglang_nsa_dequant_k_cache")
_baselines = _common.forward_baselines(
    "sglang_nsa_dequant_k_cache",
    (
        "torch",
        "torch",
        "the same by torch ops: an index_select of the records, then SGLang's reference "
        "slicing (fp32 product per tile, the rotary key copied)",
        "torch_dequant",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_nsa_dequant_k_cache.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per 128-element program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_nsa_dequant_k_cache",
    description=(
        "SGLang's NSA fp8 K-cache dequantization for DeepSeek-V3.2 (v0.5.9, "
        "_dequantize_k_cache_paged_kernel): per token of a flat page table, four programs "
        "scale one 128-byte e4m3 tile each by its fp32 scale into bf16, a fifth copies the "
        "rotary key"
    ),
    dims=(
        Dim("tokens", "gathered tokens (the extend batch's whole sequences)", "batch"),
        Dim("pool_tokens", "KV slots of the layer's fp8 pool"),
        Dim("page_size", "slots per KV page (64 for DeepSeek-V3.2's NSA)"),
    ),
    trials=(
        Trial(
            "extend_4k_deepseek_v32_fp8kv",
            {"tokens": 4096, "pool_tokens": 65536, "page_size": 64},
            "a DeepSeek-V3.2 extend of one 4096-token sequence (cached prefix and new chunk) "
            "with an fp8 KV cache of 64-token pages, from a 65,536-slot pool: 20,480 "
            "programs, 7.4 MB moved",
        ),
        Trial(
            "extend_8x16k_deepseek_v32_fp8kv",
            {"tokens": 131072, "pool_tokens": 262144, "page_size": 64},
            "a chunked-prefill batch of 8 requests of 16,384 tokens (131,072 tokens) from a "
            "262,144-slot pool: 655,360 programs, 237 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # bf16 out whatever the dtype: one rounding of an fp32 product (truncated, not rounded,
    # under the CPU interpreter); the rotary key exact
    tolerances={"bfloat16": 1e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="nsa_dequant",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
