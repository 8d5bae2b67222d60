"""SGLang's fused FP8 KV-cache store (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
sglang_fp8_kv_store` and never committed.

Why this one: SGLang's TRT-LLM MHA backend (its attention backend on Blackwell) runs it in
every attention layer at every step when the KV cache is fp8_e4m3, before the attention
itself: the step's post-RoPE keys and values, bf16, are multiplied by the layer's inverse
per-tensor scale, cast to e4m3 and written to the rows of the token pool that cache_loc
names.  One program per (token, up to 8 kv heads, K or V) loops over the head dimension in
128-wide steps of a [heads, dims] tile; Triton's default 4 warps and 3 stages.  Both trials
are Llama-3.3-70B / Qwen3-32B shaped (8 kv heads of 128, 64-token pages): a 128-sequence
decode step and an 8192-token prompt.  Outputs: the two fp8 pools (written in place).  The
floor is reading the new keys and values once (2 bytes a value) and writing them once as
fp8 (1 byte), plus the 8-byte slot of each token.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_fp8_kv_store")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The step's keys and values read once in the spec's dtype and written once as fp8,
    the int64 slot of each token read once (by both the K and the V program)."""
    row = d["heads"] * d["head_dim"]
    return 2 * d["tokens"] * row * (ELEMENT_SIZE[dtype] + 1) + 8 * d["tokens"]


_make_inputs = _common.forward_make_inputs(
    "sglang_fp8_kv_store", "tokens", "heads", "head_dim", "page_size"
)
_reference = _common.forward_reference("sglang_fp8_kv_store")
_baselines = _common.forward_baselines(
    "sglang_fp8_kv_store",
    (
        "torch",
        "torch",
        "the same store by torch (SGLang's naive fallback): scale, cast to fp8 and one "
        "index_put per pool",
        "torch_fp8_kv_store",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_fp8_kv_store.launcher")


TRITON_KNOBS = (
    Knob("block_head", "int", (None, 1, 2, 4, 8), "tile_m",
         "kv heads per program (rows of the tile); None: SGLang's min(kv heads, 8)"),
    Knob("block_dim", "int", (None, 32, 64, 128), "tile_n",
         "head-dimension values per step of the program's loop (the tile's columns); None: "
         "SGLang's min(head_dim, 128)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "pipeline stages asked of the compiler for the head-dimension loop; None: Triton's "
         "default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_fp8_kv_store",
    description=(
        "SGLang's fused FP8 KV-cache store (v0.5.9, _fused_fp8_set_kv_buffer_kernel): per "
        "token, 8 kv heads and K or V, the post-RoPE rows times the inverse per-tensor scale "
        "cast to e4m3 in 128-wide steps and written to the pool row of the token's slot"
    ),
    dims=(
        Dim("tokens", "new tokens in the step (a program per head block, K and V)"),
        Dim("heads", "kv heads", "num_heads"),
        Dim("head_dim", "elements per head", "head_dim"),
        Dim("page_size", "tokens per page of the pool (splits a slot into page and row)"),
    ),
    trials=(
        Trial(
            "decode_128_llama70b",
            {"tokens": 128, "heads": 8, "head_dim": 128, "page_size": 64},
            "a 128-sequence decode step of Llama-3.3-70B (8 kv heads of 128, 64-token "
            "pages): 256 programs of one 8 x 128 step each, 0.8 MB moved",
        ),
        Trial(
            "prefill_8k_llama70b",
            {"tokens": 8192, "heads": 8, "head_dim": 128, "page_size": 64},
            "an 8192-token prompt of the same model into scattered pool rows: 16384 "
            "programs, 50 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    # A program's [block_head, block_dim] tile: block_head spans the kv heads (rows), its loop
    # steps block_dim along one head's values (the row); one token per program.
    shape_metrics=lambda d: {"row_len": d["head_dim"], "rows": d["heads"]},
    reference=_reference,
    flops=lambda d: 2 * d["tokens"] * d["heads"] * d["head_dim"],
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # The same fp32 product rounded to e4m3 by both, exact on a GPU (cvt.rn); Triton's CPU
    # interpreter does not round its fp8 cast to nearest even (0.074 measured), and one e4m3
    # ulp is 12.5% of a value, so 0.1: a missing or misplaced row still reads as about 1.4.
    tolerances={"bfloat16": 0.1, "float16": 0.1, "float32": 0.1},
    entry_point="fp8_kv_store",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
