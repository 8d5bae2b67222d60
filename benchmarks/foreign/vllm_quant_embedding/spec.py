"""vLLM's compressed-tensors quantized embedding lookup (vLLM v0.34.0, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_quant_embedding` and never committed.

Why this one as the set's dequantizing gather: a compressed-tensors W4A16 checkpoint that
also quantizes its input embedding (worth it where the vocabulary is large: Gemma 3's
262,208 x 3840 table is 2 GB in bf16 and 0.5 GB in int4) keeps the table packed on the GPU,
and vLLM's `CompressedTensorsEmbeddingWNA16Int` looks tokens up in it without ever
densifying it: one program per token and column block gathers that row's packed int32 words
(eight 4-bit values a word), shifts and masks each lane's value out, takes off the offset
and multiplies by the row's per-128-column group scale, storing bf16.  No GEMM and no
cache: a random-row gather whose bytes in are a quarter of its bytes out, with the unpack
arithmetic in registers.  Both trials are Gemma 3 12B (262,208 x 3840, int4, group 128,
bf16 scales; hidden not a power of two, so vLLM's 1024-column blocks leave the fourth block
of each row a quarter masked): a decode step of 256 tokens (1024 programs, 2.5 MB moved) and
a 16,384-token prefill chunk (65,536 programs, 158 MB moved).  Memory-bound; the floor is
reading each token's packed row and scales once and writing its bf16 row once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_quant_embedding")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per token: its int32 id, its packed row (hidden x bits / 8 bytes) and its scales
    read once, its output row written once (the scales and output in the dtype)."""
    groups = d["hidden"] // d["group"] if d["group"] else 1
    per_token = (
        4 + d["hidden"] * d["bits"] // 8 + groups * ELEMENT_SIZE[dtype]
        + d["hidden"] * ELEMENT_SIZE[dtype]
    )  # fmt: skip
    return d["tokens"] * per_token


def flops(d: Mapping[str, int]) -> int:
    """One multiply by the scale per output value (the shifts, masks and the offset's
    subtraction are integer work, not counted)."""
    return d["tokens"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "vllm_quant_embedding", "tokens", "vocab", "hidden", "group", "bits"
)
_reference = _common.forward_reference("vllm_quant_embedding")
_baselines = _common.forward_baselines(
    "vllm_quant_embedding",
    (
        "torch",
        "torch",
        "the same by torch ops: index_select of the packed rows and scales, int32 shifts "
        "and masks, the offset subtracted, a multiply in the dtype",
        "torch_dequant_gather",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_quant_embedding.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "output columns per program (block x bits / 32 packed words gathered); None: "
         "vLLM's min(next_power_of_2(hidden), 1024)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_quant_embedding",
    description=(
        "vLLM's compressed-tensors quantized embedding lookup (v0.34.0, "
        "_dequant_gather_kernel): one program per token and 1024-column block gathers the "
        "token's packed int32 row, unpacks the 4-bit values by shifts and masks, subtracts "
        "the offset and multiplies by the per-128-column group scale, bf16 out"
    ),
    dims=(
        Dim("tokens", "token ids looked up in the step (output rows)", "rows"),
        Dim("vocab", "rows of the embedding table"),
        Dim("hidden", "embedding width (columns per output row)", "row_len"),
        Dim("group", "columns per quantization scale (0: one scale per row)"),
        Dim("bits", "bits per packed value (2, 4 or 8)"),
    ),
    trials=(
        Trial(
            "decode_256_gemma3_12b_w4a16",
            {"tokens": 256, "vocab": 262208, "hidden": 3840, "group": 128, "bits": 4},
            "a decode step of 256 requests of a compressed-tensors W4A16 Gemma 3 12B with an "
            "int4 group-128 embedding (262,208 x 3840): 256 x 4 programs, 2.5 MB moved",
        ),
        Trial(
            "prefill_16384_gemma3_12b_w4a16",
            {"tokens": 16384, "vocab": 262208, "hidden": 3840, "group": 128, "bits": 4},
            "a 16,384-token prefill chunk (max_num_batched_tokens = 16384) of the "
            "same model: 16,384 x 4 programs, 158 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # exact products rounded once to the dtype against the fp32 reference
    tolerances={"bfloat16": 5e-3, "float16": 1e-3, "float32": 1e-6},
    entry_point="embed",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
