"""SGLang's Qwen3-Next projection split (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_qkvzba_split` and never committed.

Why this one as the set's layout shuffle: every gated-delta-net layer of Qwen3-Next (36 of
its 48) calls it on each CUDA-graph decode step, between its two input projections and the
causal conv1d.  The projections come out grouped per key head ([q, k, v, z] and [b, a]);
one program per token and key head copies its q, k and v into the token's row of mixed_qkv
(all q, then all k, then all v), its z into z and its b and a, one element at a time, into
b and a.  Pure data movement with compile-time head sizes, no masks, one warp per program:
latency-bound at a decode batch, memory-bound when the batch grows.  Both trials are
Qwen3-Next-80B-A3B (16 key heads and 32 value heads of 128): a decode batch of 8 at tensor
parallel 4 (4 key heads per rank: 32 programs, 99 KB moved) and a CUDA-graph decode batch
of 256 on one GPU (the FP8 checkpoint on an H200: 4096 programs, 12.6 MB moved).  The floor
is reading both projections once and writing the four outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_qkvzba_split")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Both projections read once and the same elements written once (to the four
    outputs)."""
    r = d["v_heads"] // d["k_heads"]
    qkvz = d["k_heads"] * (2 * d["head_k"] + 2 * r * d["head_v"])
    ba = 2 * d["v_heads"]
    return 2 * d["tokens"] * (qkvz + ba) * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """None: a copy."""
    return 0


_make_inputs = _common.forward_make_inputs(
    "sglang_qkvzba_split", "tokens", "k_heads", "v_heads", "head_k", "head_v"
)
_reference = _common.forward_reference("sglang_qkvzba_split")
_baselines = _common.forward_baselines(
    "sglang_qkvzba_split",
    (
        "torch",
        "torch",
        "SGLang's own fallback: views split per key head, reshapes and one torch.cat",
        "torch_split",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_qkvzba_split.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program (one token and key head); None: SGLang's 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_qkvzba_split",
    description=(
        "SGLang's Qwen3-Next projection split (v0.5.9, fused_qkvzba_split_reshape_cat_kernel): "
        "one program per token and key head copies its q, k, v, z, b and a from the two "
        "interleaved input projections into mixed_qkv, z, b and a"
    ),
    dims=(
        Dim("tokens", "decode tokens (one per request)", "batch"),
        Dim("k_heads", "key heads on this rank (linear_num_key_heads / tensor parallel)"),
        Dim("v_heads", "value heads on this rank (1, 2 or 4 per key head)"),
        Dim("head_k", "key head size (a power of two)"),
        Dim("head_v", "value head size (value heads per key head x it a power of two)"),
    ),
    trials=(
        Trial(
            "decode8_qwen3_next_80b_tp4",
            {"tokens": 8, "k_heads": 4, "v_heads": 8, "head_k": 128, "head_v": 128},
            "Qwen3-Next-80B-A3B (16 key and 32 value heads of 128) at tensor parallel 4, a "
            "decode batch of 8: 32 programs, 99 KB moved (bf16)",
        ),
        Trial(
            "decode256_qwen3_next_80b_tp1",
            {"tokens": 256, "k_heads": 16, "v_heads": 32, "head_k": 128, "head_v": 128},
            "the same model on one GPU (the FP8 checkpoint on an H200), a CUDA-graph decode "
            "batch of 256: 4096 programs, 12.6 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="qkvzba_split",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
