"""SGLang's Triton prefill attention (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_prefill` and never committed.

Causal flash attention over packed variable-length sequences with grouped KV heads: one
program per (sequence, query head, query tile), QK^T and PV in tl.dot tiles around an
online softmax in fp32, KV walked up to the causal diagonal.  Output: [tokens, q heads,
head_dim], bf16.  The floor is the larger of the tensor-core time for the causal half of
4 * s^2 * head_dim flops per (sequence, query head) and the time to read q, k, v once and
write the output once (every query head re-reads its KV head here: GQA is not exploited).
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_prefill")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax", "compute-bound")


def flops(d: Mapping[str, int]) -> int:
    """QK^T and PV over the causal triangle (s (s + 1) / 2 query-key pairs)."""
    return 4 * d["b"] * d["hq"] * d["d"] * d["s"] * (d["s"] + 1) // 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    tokens = d["b"] * d["s"]
    return ELEMENT_SIZE[dtype] * tokens * d["d"] * (2 * d["hq"] + 2 * d["hk"]) + 8 * d["b"]


_make_inputs = _common.forward_make_inputs("sglang_prefill_attention", "b", "s", "hq", "hk", "d")
_reference = _common.forward_reference("sglang_prefill_attention")
_baselines = _common.forward_baselines(
    "sglang_prefill_attention",
    (
        "torch",
        "torch",
        "torch's scaled_dot_product_attention per sequence, causal, KV heads repeated",
        "torch_prefill_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_prefill_attention.launcher")


TRITON_KNOBS = (
    Knob(
        "block_m",
        "int",
        (None, 16, 32, 64, 128),
        "tile_m",
        "query rows per program; None: SGLang's 128 above compute capability 8.x (64 below)",
    ),
    Knob(
        "block_n",
        "int",
        (None, 16, 32, 64, 128),
        "kv_tile",
        "KV rows per loop step; None: SGLang's, equal to the query tile",
    ),
    Knob(
        "num_warps",
        "int",
        (None, 2, 4, 8, 16),
        "warps",
        "warps per program; None: SGLang's 8 for a head wider than 64 (4 otherwise)",
    ),
    Knob(
        "num_stages",
        "int",
        (None, 1, 2, 3, 4),
        "pipeline_stages",
        "software-pipeline depth of the KV loop; None: SGLang's 1",
    ),
)

SPEC = KernelSpec(
    name="sglang_prefill_attention",
    description=(
        "SGLang's Triton prefill attention (v0.5.9): causal flash attention over packed "
        "sequences with grouped KV heads, QK^T and PV in tl.dot tiles, bf16"
    ),
    dims=(
        Dim("b", "sequences in the batch", "batch"),
        Dim("s", "tokens per sequence (queries, and the keys they attend)", "query_len"),
        Dim("hq", "query heads", "num_heads"),
        Dim("hk", "KV heads"),
        Dim("d", "head dimension", "head_dim"),
    ),
    trials=(
        Trial(
            "prefill_llama3_8b",
            {"b": 1, "s": 4096, "hq": 32, "hk": 8, "d": 128},
            "a 4k-token prompt through a Llama-3-8B layer (32 query heads on 8 KV heads of "
            "128): 137 GFLOP over the causal triangle, 1024 programs of 128 query rows",
        ),
        Trial(
            "short_prompts_llama3_70b",
            {"b": 8, "s": 512, "hq": 64, "hk": 8, "d": 128},
            "8 short prompts of 512 tokens through a Llama-3-70B layer (64 query heads on 8): "
            "34 GFLOP, 2048 programs whose KV walks are 1 to 4 tiles long",
        ),
    ),
    backoff_dim="b",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation and softmax; P is rounded to the input dtype before PV; fp32 inputs
    # go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 3e-3},
    entry_point="prefill_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
