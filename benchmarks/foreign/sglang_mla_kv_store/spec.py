"""SGLang's MLA latent-cache store (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_mla_kv_store` and never committed.

Why this one as the set's MLA cache write: DeepSeek-V2/V3/R1, Kimi-K2 and the other MLA
models keep one [nope | rope] latent row per token and layer, and under SGLang's default
MLA backends (FA3 on Hopper, FlashInfer-MLA, TRT-LLM-MLA, Cutlass-MLA, NSA) every MLA
layer of every step writes its new tokens' rows with `set_mla_kv_buffer_triton`: one
program per token and 128 values of the 576-wide row loads the token's int64 slot and
copies the block from the normed latent (512 values, contiguous) or from the rotated key
position part (64 values, a strided view of the projection output), a block across the
boundary taking both under complementary masks.  No arithmetic; a scatter of short rows to
random slots of a large pool, with the block size deciding which of three branches a
program takes.  Trials: DeepSeek-V3 on a 128-sequence decode step (640 programs, 296 KB
moved) and an 8192-token prefill chunk (40,960 programs, 19 MB moved).  Memory- and
latency-bound; the floor is reading the two parts once and writing the rows once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_mla_kv_store")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The nope and rope parts read once and the rows written once in the dtype, plus the
    int64 slots."""
    return d["tokens"] * (2 * (d["nope"] + d["rope"]) * ELEMENT_SIZE[dtype] + 8)


def flops(d: Mapping[str, int]) -> int:
    """None counted: a copy."""
    return 0


_make_inputs = _common.forward_make_inputs("sglang_mla_kv_store", "tokens", "nope", "rope", "slots")
_reference = _common.forward_reference("sglang_mla_kv_store")
_baselines = _common.forward_baselines(
    "sglang_mla_kv_store",
    (
        "torch",
        "torch",
        "the same by torch ops: a torch.cat of the two parts and an index_put into the pool",
        "torch_store",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_mla_kv_store.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 32, 64, 128, 256, 512, 1024), "tile_n",
         "values of the token's row per program (the grid is tokens x ceil(row / block); a "
         "block across the nope | rope boundary takes the two-load branch); None: SGLang's "
         "128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_mla_kv_store",
    description=(
        "SGLang's MLA latent-cache store (v0.5.9, set_mla_kv_buffer_kernel): one program per "
        "token and 128 values of its [nope | rope] row loads the token's slot and copies the "
        "block from the latent or the rope part (both across the boundary) into the pool"
    ),
    dims=(
        Dim("tokens", "new tokens of the step (rows stored)", "batch"),
        Dim("nope", "latent values per token (kv_lora_rank)"),
        Dim("rope", "rotated key position values per token (qk_rope_head_dim)"),
        Dim("slots", "token slots of the layer's pool"),
    ),
    trials=(
        Trial(
            "decode_128_deepseek_v3",
            {"tokens": 128, "nope": 512, "rope": 64, "slots": 8192},
            "a decode step of DeepSeek-V3 (kv_lora_rank 512, rope 64) over 128 sequences, "
            "one MLA layer's store: 640 programs, 296 KB moved",
        ),
        Trial(
            "prefill_8192_deepseek_v3",
            {"tokens": 8192, "nope": 512, "rope": 64, "slots": 65536},
            "an 8192-token prefill chunk of DeepSeek-V3 (chunked_prefill_size 8192) into a "
            "65,536-slot pool, one MLA layer's store: 40,960 programs, 19 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    # A token's row is both parts, latent then rope (the grid is tokens x its blocks): a
    # block of 1024 still spans it in one program.
    shape_metrics=lambda d: {"row_len": d["nope"] + d["rope"]},
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a copy, checked exactly
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="store",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
