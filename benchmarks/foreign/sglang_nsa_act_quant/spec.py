"""SGLang's NSA indexer activation quantization (SGLang v0.5.9, Apache-2.0), as kbopt sees
it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_nsa_act_quant` and never committed.

Why this one: DeepSeek-V3.2's sparse attention picks each query's 2048 keys with a lightning
indexer that scores the cached keys in fp8, and on CUDA (the model is served on H200 or
H100 nodes) SGLang's indexer quantizes its rotated query (64 heads of 128 per token) and key
(one row of 128) with this Triton kernel in every layer, prefill and decode alike, before
DeepGEMM's fp8 logits and the key's store to the index cache.  `act_quant` launches it
twice: one program per 32 rows of one 128-column group loads the [32, 128] tile, takes each
row's absolute maximum, rounds the scale up to a power of two (UE8M0, the indexer's
scale_fmt), and writes the e4m3 tile and 32 fp32 scales.  Memory-bound: 2 bytes read and
1 written per value plus a scale per 128, no loop, no tl.dot.  Nearest:
`sglang_fp8_group_quant` (the same absmax-and-cast per 128-column group, but one group per
one-warp program and a plain absmax / 448 scale) and `sglang_mla_tensor_quant` (one scale
for a whole tensor, by an atomic max and a second launch).  Here a program holds 32 rows
in 4 warps, the scale takes a log2, a ceil and an exp2, and the two launches differ 64-fold
in size.  Both trials are one DeepSeek-V3.2 layer's indexer (64 heads of 128): an 8192-token
prefill chunk (SGLang's chunked-prefill size on an H200; 16,640 programs, 207 MB moved) and
a 128-request decode step (260 programs, 3.2 MB).  The floor is reading the query and key
once and writing their e4m3 copies and scales once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_nsa_act_quant")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "elementwise", "memory-bound", "multi-kernel")
GROUP = 128  # as reference.py: one scale per 128 columns


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The query (tokens x heads rows) and the key (tokens rows) read once, their e4m3
    copies written once (a byte a value) and one fp32 scale per 128-column group written
    once."""
    rows = d["tokens"] * (d["heads"] + 1)
    return rows * d["head_dim"] * (ELEMENT_SIZE[dtype] + 1) + 4 * rows * (d["head_dim"] // GROUP)


def flops(d: Mapping[str, int]) -> int:
    """None counted: an absmax, a scale and a cast per value (no matmul)."""
    return 0


_make_inputs = _common.forward_make_inputs("sglang_nsa_act_quant", "tokens", "heads", "head_dim")
_reference = _common.forward_reference("sglang_nsa_act_quant")
_baselines = _common.forward_baselines(
    "sglang_nsa_act_quant",
    ("torch", "torch", "the same quantization in torch's kernels (abs, amax, log2, ceil, "
     "exp2, divide, clamp, cast to e4m3), the query, then the key", "torch_act_quant"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_nsa_act_quant.launcher")


TRITON_KNOBS = (
    Knob("q_block_m", "int", (None, 4, 8, 16, 32, 64, 128), "rows_per_program",
         "query rows (one token's head, 128 values a group) per program of the query "
         "launch; None: SGLang's 32"),
    Knob("q_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the query launch; None: Triton's default 4 (SGLang passes "
         "none)"),
    Knob("k_block_m", "int", (None, 4, 8, 16, 32, 64, 128), "rows_per_program",
         "key rows (one a token) per program of the key launch; None: SGLang's 32"),
    Knob("k_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program of the key launch; None: Triton's default 4 (SGLang passes "
         "none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_nsa_act_quant",
    description=(
        "SGLang's NSA indexer activation quantization (v0.5.9, _act_quant_kernel as act_quant "
        "launches it for DeepSeek-V3.2's lightning indexer): per 32 rows of a 128-column "
        "group, each row's absmax, a power-of-two (UE8M0) scale, the tile cast to e4m3; "
        "the query's tokens x 64 heads rows, then the key's tokens rows"
    ),
    dims=(
        Dim("tokens", "tokens in the batch (prefill chunk or decode requests)", "batch"),
        Dim("heads", "indexer query heads (DeepSeek-V3.2's 64; the key has one)", "num_heads"),
        Dim("head_dim", "indexer head size (a multiple of the 128-column group)", "row_len"),
    ),
    # A large prefill chunk first, then a decode step; both one DeepSeek-V3.2 layer.
    trials=(
        Trial(
            "prefill_8k_deepseek_v32_indexer",
            {"tokens": 8192, "heads": 64, "head_dim": 128},
            "an 8192-token prefill chunk (SGLang's chunked-prefill size on an H200) through "
            "one DeepSeek-V3.2 layer's indexer: 524,288 query rows in 16,384 programs, then "
            "8,192 key rows in 256; 207 MB moved",
        ),
        Trial(
            "decode_128_deepseek_v32_indexer",
            {"tokens": 128, "heads": 64, "head_dim": 128},
            "a decode step of 128 requests on one rank, same layer: 8,192 query rows in 256 "
            "programs, 128 key rows in 4 (SGLang's CUDA graph puts the key's launch on a "
            "second stream; in order here); 3.2 MB moved, launch-sized",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    shape_metrics=lambda d: {"rows": d["tokens"] * d["heads"]},
    # the same fp32 arithmetic (the scale a power of two, so the division is exact) and a
    # round-to-nearest-even cast: any difference is a rounding of log2 at a power of two
    tolerances={"bfloat16": 1e-3, "float16": 1e-3, "float32": 1e-3},
    entry_point="indexer_act_quant",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
