"""DeepSeek-V4's fused inverse RoPE and block fp8 quantization of the attention output
(vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py vllm_dsv4_inv_rope_quant` and never
committed.

Why this one: DeepSeek-V4 (Flash: 43 layers, 64 query heads of 512, one shared KV head)
applies RoPE to the last 64 values of each head, keys and queries alike, so the attention
output carries the rotation too, and its output projection is grouped: `wo_a` maps each
group of 8 heads on its own (one GEMM per group, `o_groups` 8) before `wo_b` mixes them.
On Hopper with an fp8 `wo_a` (the attention projections are 128 x 128 block fp8 in the
FP8/FP4 checkpoints) every attention layer of every step calls `fused_inv_rope_fp8_quant`
between FlashMLA's sparse attention and DeepGEMM's `fp8_einsum`: one program per token
(rounded up to 4) and 4 heads of its group rotates the 64 rope values of each head back by
the token's angle, takes every 128 values' absolute maximum into a power-of-two fp32 scale,
and writes the e4m3 values group-major ([groups, tokens, 8 x 512], the einsum's batch axis
first) and the scales MN-major (tokens the fastest axis, padded to 4: DeepGEMM's TMA-aligned
layout), zero scales for the padding tokens.  The attention output it reads is a view of
FlashMLA's buffer, whose heads are padded to 64 or 128, so a token's row is 64 x 512 values
long whatever the rank holds.  Unlike `vllm_silu_mul_colmajor_quant` and
`sglang_nsa_act_quant` (an activation, or nothing, before a per-128 power-of-two
quantization of row-major rows) a program here holds several heads, rotates a
pair-interleaved tail in registers (a reshape into (even, odd), the token's cos/sin row, a
join back) and transposes its output into the grouped GEMM's layout on the store; nearest
also `vllm_vit_rotary` (a rotation in place, no quantization).  Both trials are
DeepSeek-V4-Flash at tensor parallel 2 on H200s (the layout the community's FP8-attention
checkpoints validate on Hopper: 32 local heads in 4 groups, FlashMLA's buffer padded to 64
heads): an 8192-token prefill chunk (vLLM's default token budget for an API server on an
H200; 65,536 programs of 1 warp, 409 MB moved) and a 128-sequence decode step (1,024
programs of 4 warps, 6.4 MB).  Memory-bound: the floor is reading the live heads and each
token's table row once and writing the e4m3 values and the scales once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_dsv4_inv_rope_quant")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "reduction", "memory-bound")
FP32 = 4
INT64 = 8


def aligned_tokens(tokens: int) -> int:
    """The scale buffer's token stride (`get_tma_aligned_size(tokens, 4)`)."""
    return -(-tokens // 4) * 4


def heads(d: Mapping[str, int]) -> int:
    return d["groups"] * d["heads_per_group"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The live heads of the attention output read once (the padded heads never), each
    token's position (int64) and fp32 cos/sin row read once, the e4m3 values written once
    (a byte a value) and one fp32 scale per group_size values written once for every token
    of the buffer's aligned token axis (the padding tokens' zero scales included)."""
    t, h, hd = d["tokens"], heads(d), d["head_dim"]
    reads = t * h * hd * ELEMENT_SIZE[dtype] + t * (INT64 + FP32 * d["rope_dim"])
    scales = aligned_tokens(t) * h * (hd // d["group_size"]) * FP32
    return reads + t * h * hd + scales


def flops(d: Mapping[str, int]) -> int:
    """The rotation: per rotated pair four multiplies and two adds (3 per rope value); the
    absmax, the power-of-two scale, the division and the cast are not counted."""
    return 3 * d["tokens"] * heads(d) * d["rope_dim"]


def shape_metrics(d: Mapping[str, int]) -> dict[str, int]:
    """`rows`: the (token, head) rows the kernel rotates and quantizes; `row_len`: a row's
    head_dim values (a program holds block_h rows of one token and reduces each group_size
    values of them into a scale); `num_heads`: the rank's live query heads."""
    return {"rows": d["tokens"] * heads(d), "row_len": d["head_dim"], "num_heads": heads(d)}


_make_inputs = _common.forward_make_inputs(
    "vllm_dsv4_inv_rope_quant",
    "tokens", "groups", "heads_per_group", "padded_heads", "head_dim", "rope_dim",
    "group_size", "context",
)  # fmt: skip
_reference = _common.forward_reference("vllm_dsv4_inv_rope_quant")
_baselines = _common.forward_baselines(
    "vllm_dsv4_inv_rope_quant",
    ("torch", "torch", "the same in torch's kernels (the table rows gathered, the rope pairs "
     "rotated in fp32, abs, amax, log2, ceil, exp2, divide, clamp, cast to e4m3), then copies "
     "into the group-major values and the MN-major scale buffer", "torch_inv_rope_fp8_quant"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.vllm_dsv4_inv_rope_quant.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 1, 2, 4, 8), "rows_per_program",
         "heads (rows of head_dim values of one token, all in one output group) per "
         "program; a power of two dividing the heads per group; None: vLLM's gcd(heads per "
         "group, 4)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: vLLM's 4 below 2048 programs, else 1"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_dsv4_inv_rope_quant",
    description=(
        "DeepSeek-V4's fused inverse RoPE and block fp8 quantization of the attention "
        "output (vLLM v0.34.0, FusedInvRopeFP8QuantKernel as fused_inv_rope_fp8_quant "
        "launches it on Hopper before the grouped wo_a fp8 einsum): per token and 4 heads, "
        "the 64-value rope tail rotated back in fp32, a power-of-two fp32 scale per 128 "
        "values, e4m3 values stored group-major and the scales MN-major over the tokens "
        "rounded up to 4"
    ),
    dims=(
        Dim("tokens", "tokens in the step (a prefill chunk or the decode batch)", "batch"),
        Dim("groups", "the rank's wo_a groups (o_groups / tensor parallel)"),
        Dim("heads_per_group", "query heads per wo_a group (DeepSeek-V4's 8)"),
        Dim(
            "padded_heads",
            "heads of FlashMLA's output buffer (64 or 128; the live heads are its first "
            "groups x heads_per_group, a view whose token stride this sets)",
        ),
        Dim("head_dim", "values per head (DeepSeek-V4's 512: 448 nope, 64 rope)", "head_dim"),
        Dim("rope_dim", "rotated values at the end of each head (DeepSeek-V4's 64)"),
        Dim("group_size", "values per fp8 scale (the einsum's 128 on Hopper)"),
        Dim("context", "rows of the rotary cos/sin table (positions drawn below it)"),
    ),
    # A large prefill chunk first (65,536 one-warp programs), then a decode step (1,024
    # four-warp programs); both DeepSeek-V4-Flash at tensor parallel 2 on H200s.
    trials=(
        Trial(
            "deepseek_v4_flash_tp2_prefill8k",
            {
                "tokens": 8192,
                "groups": 4,
                "heads_per_group": 8,
                "padded_heads": 64,
                "head_dim": 512,
                "rope_dim": 64,
                "group_size": 128,
                "context": 16384,
            },
            "DeepSeek-V4-Flash on H200s at tensor parallel 2 (32 local heads in 4 wo_a "
            "groups, FlashMLA's buffer padded to 64 heads), an 8192-token prefill chunk "
            "(vLLM's default token budget on an H200), positions within a 16,384-token "
            "context: vLLM's launch, 4 heads a program, 8192 x 8 = 65,536 programs of 1 "
            "warp; 409 MB moved (bf16)",
        ),
        Trial(
            "deepseek_v4_flash_tp2_decode128",
            {
                "tokens": 128,
                "groups": 4,
                "heads_per_group": 8,
                "padded_heads": 64,
                "head_dim": 512,
                "rope_dim": 64,
                "group_size": 128,
                "context": 16384,
            },
            "the same deployment's decode step of 128 sequences, one token each: 128 x 8 = "
            "1,024 programs of 4 warps (vLLM's decode choice below 2048 programs), one wave "
            "on 132 SMs; 6.4 MB moved (bf16), launch-sized",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    shape_metrics=shape_metrics,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same fp32 rotation (a fused multiply-add on the GPU may move a value by one ulp,
    # so an e4m3 value by one step) and a power-of-two scale, so the division is exact
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="fused_inv_rope_fp8_quant",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
