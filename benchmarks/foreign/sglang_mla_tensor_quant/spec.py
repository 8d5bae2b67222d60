"""SGLang's per-tensor fp8 quantization for absorbed MLA (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_fp8_mla_scaled_mm` and never committed.

Why this one: on an fp8 DeepSeek-V3/R1 checkpoint SGLang's absorbed MLA (the decode path)
quantizes, in every layer, the per-head no-RoPE query (`q_nope.transpose(0, 1)`, 128 wide)
before the batched fp8 GEMM with w_kc, and the latent attention output (512 wide) before the
one with w_vc, each to e4m3 with ONE fp32 scale for the whole tensor.  Two launches over the
same (tokens, heads) grid: the first takes each row's absolute maximum and folds it into the
scale with a global tl.atomic_max (every program contends for one address), the second reads
the scale and the row again and writes the e4m3 rows transposed, head-major and contiguous
(the strided [tokens, heads, dim] read becomes a [heads, tokens, dim] write).  Its row tile
must hold the whole row (no loop); its warps are the knobs.  The trials are DeepSeek-V3's:
a 32-sequence decode step at tensor parallelism 8 (16 of the 128 heads per GPU) quantizing
q_nope (dim 128), and a 2048-token batch with DP attention (all 128 heads on the GPU)
quantizing the latent attention output (dim 512).  The floor is reading the input twice
(the two stages cannot share it) and writing one byte per element.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_fp8_mla_scaled_mm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read by both stages, one e4m3 byte written per element, the scale's bytes
    ignored."""
    n = d["tokens"] * d["heads"] * d["head_dim"]
    return 2 * ELEMENT_SIZE[dtype] * n + n


def flops(d: Mapping[str, int]) -> int:
    """An abs and a max per element (stage 1), a multiply and a clamp (stage 2)."""
    return 4 * d["tokens"] * d["heads"] * d["head_dim"]


_make_inputs = _common.forward_make_inputs("sglang_mla_tensor_quant", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("sglang_mla_tensor_quant")
_baselines = _common.forward_baselines(
    "sglang_mla_tensor_quant",
    (
        "torch",
        "torch",
        "the same quantization in torch's kernels (abs, amax over the tensor, scale, clamp, "
        "cast to e4m3, a contiguous copy of the transposed view)",
        "torch_tensor_quant",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_mla_tensor_quant.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048), "tile_n",
         "values per program's row tile (at least next_pow2(dim): the kernels have no "
         "loop); None: SGLang's next_pow2(dim)"),
    Knob("stage1_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the absmax stage; None: Triton's default 4 (SGLang passes "
         "none)"),
    Knob("stage2_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the quantize-and-transpose stage; None: Triton's default 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_mla_tensor_quant",
    description=(
        "SGLang's per-tensor fp8 quantization for absorbed MLA (v0.5.9, "
        "_per_tensor_quant_mla_fp8_stage1/2): a global absmax by tl.atomic_max over every "
        "(token, head) row, then each row scaled, cast to e4m3 and written head-major"
    ),
    dims=(
        Dim("tokens", "tokens of the batch (sequences of a decode step)", "rows"),
        Dim("heads", "attention heads on this GPU"),
        # block_size is a (token, head) row's tile: it spans head_dim values (no loop).
        Dim(
            "head_dim",
            "values per head (128: q_nope; 512: the latent attention output)",
            "row_len",
        ),
    ),
    trials=(
        Trial(
            "decode_q_nope_deepseek_v3_tp8",
            {"tokens": 32, "heads": 16, "head_dim": 128},
            "DeepSeek-V3 fp8 at tensor parallelism 8 (16 of 128 heads per GPU): a 32-sequence "
            "decode step's q_nope (qk_nope_head_dim 128) before the w_kc batched GEMM, 512 "
            "programs per stage",
        ),
        Trial(
            "batch_attn_out_deepseek_v3_dp_attention",
            {"tokens": 2048, "heads": 128, "head_dim": 512},
            "DeepSeek-V3 fp8 with DP attention (all 128 heads per GPU): a 2048-token batch's "
            "latent attention output (kv_lora_rank 512) before the w_vc batched GEMM, 262,144 "
            "programs per stage, 268 MB of bf16 read twice",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the same fp32 scale and products as the reference, one e4m3 rounding each
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="per_tensor_quant_mla_fp8",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
