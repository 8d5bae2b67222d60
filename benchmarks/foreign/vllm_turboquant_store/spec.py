"""vLLM's TurboQuant KV-cache store, MSE path (vLLM v0.34.0, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_turboquant_store` and never committed.

Why this one as the set's codebook quantizer: with `--kv-cache-dtype turboquant_*`, vLLM's
TurboQuant attention backend stores every layer's new keys and values, at each step, as
a few bits per coordinate: the key normalized and rotated by a random orthogonal matrix
(cuBLAS, before the kernel), then each coordinate bucketed against a Lloyd-Max codebook
for N(0, 1/D) by a binary search over its sorted midpoints, and the value quantized
uniformly between its minimum and maximum.  One program per token and KV head does the
bucketing (3 search steps of one gathered midpoint per lane), the bit packing (eight
3-bit indices per three bytes, two 4-bit values per byte, as shifts summed over reshaped
tiles) and about ten byte-wide stores into its slot of the paged uint8 cache.  Both
trials are Llama 3.1 8B (8 KV heads, head size 128) with vLLM's default TurboQuant
(3-bit MSE keys, 4-bit values: turboquant_k3v4_nc, 118-byte slots) and 16-token pages: a
decode step of 64 requests (512 programs, 0.6 MB moved) and an 8192-token prefill chunk
(vLLM's default max_num_batched_tokens: 65,536 programs, 75 MB moved).  The floor is
reading the fp32 rotated keys and values once and writing the packed slots once.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_turboquant_store")

CONTEXTS = ("memory-bound", "reduction")  # each value row's min and max, then packing
FP32 = 4  # the kernel reads fp32 keys and values whatever the spec's dtype


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per token and head: the rotated key, the value (fp32) and the norm read, the packed
    slot written; per token its slot read."""
    del dtype
    rows = d["tokens"] * d["kv_heads"]
    hd = d["head_dim"]
    used = math.ceil(hd * d["key_bits"] / 8) + 2 + math.ceil(hd * d["value_bits"] / 8) + 4
    return rows * (2 * hd * FP32 + FP32 + used) + d["tokens"] * 4


def flops(d: Mapping[str, int]) -> int:
    """Per coordinate: key_bits comparisons of the search and the value's subtract,
    divide and add (the packing's integer shifts not counted)."""
    return d["tokens"] * d["kv_heads"] * d["head_dim"] * (d["key_bits"] + 3)


_make_inputs = _common.forward_make_inputs(
    "vllm_turboquant_store", "tokens", "kv_heads", "head_dim", "key_bits", "value_bits"
)
_reference = _common.forward_reference("vllm_turboquant_store")
_baselines = _common.forward_baselines(
    "vllm_turboquant_store",
    (
        "torch",
        "torch",
        "the same by torch ops: torch.searchsorted over the midpoints, integer packing, "
        "one indexed store into the cache",
        "torch_store",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_turboquant_store.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program (one token and head, a 128-lane row); None: vLLM's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3), "pipeline_stages",
         "software-pipeline depth of the binary search's loop; None: vLLM's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_turboquant_store",
    description=(
        "vLLM's TurboQuant KV-cache store, MSE path (v0.34.0, _tq_fused_store_mse): one "
        "program per token and KV head buckets the rotated key against a Lloyd-Max codebook "
        "by binary search, quantizes the value between its min and max, packs both into "
        "bytes of the paged uint8 cache"
    ),
    dims=(
        Dim("tokens", "tokens stored in the step", "batch"),
        Dim("kv_heads", "KV heads", "num_heads"),
        Dim("head_dim", "head size", "head_dim"),
        Dim("key_bits", "bits per key coordinate (3 or 4)"),
        Dim("value_bits", "bits per value coordinate (3 or 4)"),
    ),
    trials=(
        Trial(
            "decode64_llama31_8b_k3v4",
            {"tokens": 64, "kv_heads": 8, "head_dim": 128, "key_bits": 3, "value_bits": 4},
            "a decode step of 64 requests on Llama 3.1 8B (8 KV heads, head size 128) with "
            "vLLM's default TurboQuant, 3-bit keys and 4-bit values (118-byte slots): 512 "
            "programs, 0.6 MB moved",
        ),
        Trial(
            "prefill8k_llama31_8b_k3v4",
            {"tokens": 8192, "kv_heads": 8, "head_dim": 128, "key_bits": 3, "value_bits": 4},
            "an 8192-token prefill chunk (vLLM's default max_num_batched_tokens), the same "
            "cache: 65,536 programs, 75 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the whole cache as bytes: exact under the interpreter; on the GPU an fp32 division
    # (Triton's is not correctly rounded) may move a value at a rounding edge by one level,
    # a nibble off by one: 3.2e-3 at the 8,192-token check on an H100; a wrong packing or
    # bucket is off by far more
    tolerances={"bfloat16": 1e-2, "float16": 1e-2, "float32": 1e-2},
    entry_point="store",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
