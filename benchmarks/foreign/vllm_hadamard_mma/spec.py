"""vLLM's Hadamard transform by MMA (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_hadamard_mma` and never committed.

Why this one as the set's dense Hadamard: vLLM's INT4 per-token-head KV cache
(`kv_cache_dtype="int4_per_token_head"`) gaussianizes every key and value row with a
randomized Hadamard transform before its asymmetric 4-bit quantization, and every query
row with the same transform before the packed-cache attention, so one runs per layer on
every token's heads.  Without the hadacore CUDA kernel (ROCm's MFMA/WMMA path, or a CUDA
build without it) `fast_hadamard_transform` takes its Triton tier for head sizes 16 to
128: one program per 16 rows loads them and the whole +-1 Hadamard matrix (head_dim^2
values from L2, the same for every program) and writes one tl.dot, fp32 accumulation, in
the rows' dtype: the O(d log d) transform done as an O(d^2) matrix product on tensor
cores, with no loop (so vLLM pins one stage).  The large trial is the queries of an
8,192-token prefill chunk of Llama-3.1-8B (32 heads of 128: 16,384 programs, 134 MB
moved); the small one the new keys of a 64-sequence decode step of Llama-3.2-1B (8 KV
heads of 64: 32 programs).  The floor is reading the rows once and writing them once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_hadamard_mma")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The rows read once and written once in the dtype, and the Hadamard matrix once
    (its re-reads by every program come from L2)."""
    values = d["tokens"] * d["heads"] * d["head_dim"]
    return 2 * values * ELEMENT_SIZE[dtype] + d["head_dim"] ** 2 * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """The dense product as the kernel runs it: 2 x head_dim multiply-adds per value."""
    return 2 * d["tokens"] * d["heads"] * d["head_dim"] ** 2


_make_inputs = _common.forward_make_inputs("vllm_hadamard_mma", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("vllm_hadamard_mma")
_baselines = _common.forward_baselines(
    "vllm_hadamard_mma",
    (
        "torch",
        "torch",
        "the same transform as vLLM's tier-3 fallback: log2(head_dim) torch butterfly "
        "stages of sums and differences in the dtype",
        "torch_hadamard",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_hadamard_mma.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "rows (token heads) per program, each a [block_m, head_dim] x [head_dim, "
         "head_dim] tl.dot; None: vLLM's 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "software pipeline stages (the kernel has no loop); None: vLLM's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_hadamard_mma",
    description=(
        "vLLM's Hadamard transform by MMA (v0.34.0, _hadamard_mma_kernel, the Triton tier "
        "of the INT4 per-token-head KV cache's randomized Hadamard transform): one program "
        "per 16 rows multiplies them by the whole +-1 head_dim x head_dim Hadamard matrix "
        "in one tl.dot, fp32 accumulation, out in the rows' dtype"
    ),
    dims=(
        Dim("tokens", "tokens whose rows are transformed", "batch"),
        Dim("heads", "heads per token (query or KV heads)", "num_heads"),
        Dim("head_dim", "values per row, a power of two from 16 to 128", "row_len"),
    ),
    trials=(
        Trial(
            "decode_keys_64_llama32_1b",
            {"tokens": 64, "heads": 8, "head_dim": 64},
            "the new keys of a 64-sequence decode step of Llama-3.2-1B (8 KV heads of 64) "
            "rotated before their INT4 store: 512 rows, 32 programs",
        ),
        Trial(
            "prefill_queries_8192_llama31_8b",
            {"tokens": 8192, "heads": 32, "head_dim": 128},
            "the queries of an 8,192-token prefill chunk of Llama-3.1-8B (32 heads of 128) "
            "rotated before the packed INT4 attention: 262,144 rows, 16,384 programs, "
            "134 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # +-1 products are exact and fp32 sums nearly so: the output's rounding in the dtype
    # (fp32 rows go through bf16, as vLLM does, so fp32 is held to bf16's tolerance)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-2},
    entry_point="transform",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
