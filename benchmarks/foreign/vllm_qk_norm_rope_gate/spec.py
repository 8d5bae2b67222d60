"""vLLM's fused QK RMSNorm + partial RoPE + gate copy (vLLM v0.34.0, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_qk_norm_rope_gate` and never committed.

Why this one as the set's attention prologue: every full-attention layer of Qwen3-Next and
Qwen3.5 (one of every four layers; output-gated attention with NeoX partial RoPE) runs it on
CUDA at every step, in place of a chain of a q/gate chunk, two contiguous copies, two
per-head Gemma RMSNorms and a rotary embedding.  One program per token and head (q heads
and KV heads in one grid): a whole 256-wide head row in registers, its mean square reduced
in fp32, scaled by rsqrt and (1 + weight) and rounded; the 192 pass-through values stored,
the first 64 reloaded as two halves, normalized again and rotated by cos and sin gathered
from the cos|sin cache at the token's position (Qwen3.5's MRoPE: per frequency the t, h or
w position, interleaved); a q head's program then copies its 256-wide gate row.  No loop
and no reuse: one head-row reduction, a small gather and three row stores per program, the
rows strided views of the QKV projection.  The large trial is an 8192-token prefill chunk of
Qwen3-Next-80B-A3B on one GPU (16 q heads and 2 KV heads of 256, rotary 64: 147,456
programs, 286 MB moved); the small one a 64-sequence decode step of Qwen3.5-397B-A17B at
tensor parallel 8 with MRoPE (4 q heads and the 1 KV head a rank keeps: 320 programs, 0.6 MB
moved).  Memory-bound at prefill and latency-bound at decode; the floor is reading q, gate
and k once and writing them once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_qk_norm_rope_gate")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound", "elementwise")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, gate and k read once and written once in the dtype, the two norm weights once,
    and per token its cache row's rotary_dim values and its int64 position (three of each
    with MRoPE: an upper bound, the rows overlap)."""
    es = ELEMENT_SIZE[dtype]
    values = d["tokens"] * (2 * d["q_heads"] + d["kv_heads"]) * d["head_dim"]
    rows = d["pos_rows"]
    return (
        2 * es * values + 2 * es * d["head_dim"] + rows * d["tokens"] * (es * d["rotary_dim"] + 8)
    )


def flops(d: Mapping[str, int]) -> int:
    """Per q and k element the norm's square-and-add and two scales (4), per rotated value
    the rotation's two products and a sum (3); the per-row rsqrt not counted."""
    heads = d["q_heads"] + d["kv_heads"]
    return d["tokens"] * heads * (4 * d["head_dim"] + 3 * d["rotary_dim"])


_make_inputs = _common.forward_make_inputs(
    "vllm_qk_norm_rope_gate", "tokens", "q_heads", "kv_heads", "head_dim", "rotary_dim", "pos_rows"
)
_reference = _common.forward_reference("vllm_qk_norm_rope_gate")
_baselines = _common.forward_baselines(
    "vllm_qk_norm_rope_gate",
    (
        "torch",
        "torch",
        "vLLM's unfused path by torch ops: the q/gate chunk and contiguous copies, a Gemma "
        "RMSNorm of q and of k per head in fp32, a NeoX rotation of the first rotary_dim "
        "values with the cache rows gathered per token",
        "torch_qk_norm_rope_gate",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_qk_norm_rope_gate.launcher")


TRITON_KNOBS = (
    Knob("head_block", "int", (None, 64, 128, 256, 512, 1024), "tile_n",
         "lanes of a program's head row (at least head_dim: a program takes the whole "
         "head, the rest masked); None: vLLM's next_power_of_2(head_dim)"),
    Knob("rot_half_block", "int", (None, 16, 32, 64, 128), "vector_width",
         "lanes of each rotated half (at least rotary_dim / 2, the rest masked); None: "
         "vLLM's next_power_of_2(rotary_dim / 2)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's max(1, head_block / 64)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software pipeline stages (the kernel has no loop to pipeline); None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_qk_norm_rope_gate",
    description=(
        "vLLM's fused QK RMSNorm + partial RoPE + gate copy for Qwen3-Next/Qwen3.5 "
        "attention (v0.34.0, _fused_qk_rmsnorm_rope_gate_kernel): one program per token and "
        "q or KV head normalizes the head row (Gemma 1 + weight), rotates its first "
        "rotary_dim values NeoX-style from the cos|sin cache (MRoPE optional) and, for a q "
        "head, copies the head's output gate"
    ),
    dims=(
        Dim("tokens", "tokens in the step (all sequences packed)", "rows"),
        Dim("q_heads", "query heads on this rank (each with an output gate)"),
        Dim("kv_heads", "KV heads on this rank"),
        Dim("head_dim", "head size", "row_len"),
        Dim("rotary_dim", "rotated values of a head (the rest pass through)"),
        Dim(
            "pos_rows",
            "position rows: 3 for [3, tokens] MRoPE positions with interleaved "
            "sections (t, h, w), 1 for 1-D positions",
        ),
    ),
    trials=(
        Trial(
            "decode64_qwen3_5_397b_tp8_mrope",
            {
                "tokens": 64,
                "q_heads": 4,
                "kv_heads": 1,
                "head_dim": 256,
                "rotary_dim": 64,
                "pos_rows": 3,
            },
            "a 64-sequence decode step through a full-attention layer of Qwen3.5-397B-A17B "
            "(32 q heads and 2 KV heads of 256, rotary 64, MRoPE sections 11/11/10) at "
            "tensor parallel 8: 64 x 5 = 320 programs, 0.6 MB moved (bf16)",
        ),
        Trial(
            "prefill8k_qwen3_next_80b_tp1",
            {
                "tokens": 8192,
                "q_heads": 16,
                "kv_heads": 2,
                "head_dim": 256,
                "rotary_dim": 64,
                "pos_rows": 1,
            },
            "an 8192-token prefill chunk through a full-attention layer of "
            "Qwen3-Next-80B-A3B (16 q heads and 2 KV heads of 256, rotary 64) on one GPU: "
            "8192 x 18 = 147,456 programs, 286 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the normalized row rounded to the dtype before the rotation as the kernel does
    # (rsqrt vs torch's may differ by an ulp there and carry through); the gate a copy
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="qk_norm_rope_gate",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
