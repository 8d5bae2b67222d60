"""vLLM's top-k bitmatrix packing for the triton_kernels MoE path (vLLM v0.34.0,
Apache-2.0), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py vllm_moe_bitmatrix` and never committed.

Why this one as the set's bit packing: gpt-oss runs its MoE layers through OpenAI's
triton_kernels (matmul_ogs over MXFP4 weights), which route from a bitmatrix, one bit per
(token, expert).  Under expert parallelism vLLM's `OAITritonExperts` gets the dispatched
tokens' top-k ids with the other ranks' experts remapped to -1 and rebuilds that bitmatrix
itself at every MoE layer: one program per 512 tokens loads a [512, 32] int16 tile of ids,
and for each 32-expert word of the bitmatrix ORs 1 << (id % 32) over the top-k axis where
id // 32 is that word (tl.reduce_or), storing one uint32 per token and word.  No floating
point at all: compares, shifts and an OR-reduction over a 3-D register tile, a grid of a
few programs.  Both trials are gpt-oss-120b (128 experts, top-4) served with data parallel
attention and expert parallelism over 2 GPUs (64 local experts, two words per token; vLLM's
all-gather dispatch hands each rank both ranks' tokens): a decode step of 2 x 256 tokens
(one program, 8 KB moved) and a prefill step of 2 x 16,384 tokens (64 programs, 512 KB
moved).  Launch- and latency-bound at these sizes; the floor is reading the int16 ids once
and writing the bitmatrix once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_moe_bitmatrix")

CONTEXTS = ("elementwise", "memory-bound", "small-grid")


def words(d: Mapping[str, int]) -> int:
    """uint32 words per token: one per 32 local experts."""
    return (d["experts"] // d["ep"] + 31) // 32


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The int16 ids read once and the uint32 bitmatrix written once (the dtype plays no
    part: the kernel moves integers only)."""
    del dtype
    return d["tokens"] * (d["topk"] * 2 + words(d) * 4)


def flops(d: Mapping[str, int]) -> int:
    """None counted: compares, shifts and ORs only."""
    return 0


_make_inputs = _common.forward_make_inputs("vllm_moe_bitmatrix", "tokens", "experts", "topk", "ep")
_reference = _common.forward_reference("vllm_moe_bitmatrix")
_baselines = _common.forward_baselines(
    "vllm_moe_bitmatrix",
    (
        "torch",
        "torch",
        "the same by torch ops: a scatter of ones into an int64 one-hot of the local "
        "experts, shifted by each bit's position and summed per 32-expert word",
        "torch_bitmatrix",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_moe_bitmatrix.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256, 512), "tile_m",
         "tokens per program (the grid is ceil(tokens / block_m)); None: vLLM's 512 "
         "(larger blocks left out: the [block_m, 32, 1] tile's compile time and stack grow "
         "with block_m / warps, 14 s at 2048 / 4 and 88 s at 1024 / 1 on sm_90)"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none); 1 left out for "
         "the same compile time (16 s at 512 / 1)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_moe_bitmatrix",
    description=(
        "vLLM's top-k bitmatrix packing for the triton_kernels MoE path (v0.34.0, "
        "pack_bitmatrix): one program per 512 tokens ORs 1 << (id % 32) of each token's "
        "top-k local expert ids into one uint32 word per 32 experts, -1 ids skipped"
    ),
    dims=(
        Dim("tokens", "token rows after the dispatch (every DP rank's tokens)", "batch"),
        Dim("experts", "routed experts of the model, over all ranks"),
        Dim("topk", "experts per token"),
        Dim("ep", "expert-parallel ranks (this rank holds experts / ep of them)"),
    ),
    trials=(
        Trial(
            "decode_512_gpt_oss_120b_ep2",
            {"tokens": 512, "experts": 128, "topk": 4, "ep": 2},
            "a decode step of gpt-oss-120b (128 experts, top-4) with DP attention and EP "
            "over 2 GPUs, 256 tokens a rank all-gathered (64 local experts, 2 words a "
            "token): one program, 8 KB moved",
        ),
        Trial(
            "prefill_32768_gpt_oss_120b_ep2",
            {"tokens": 32768, "experts": 128, "topk": 4, "ep": 2},
            "a prefill step of the same deployment, 16,384 tokens a rank (max_num_batched_tokens = "
            "16384) all-gathered: 64 programs, 512 KB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer words: one flipped bit of 64k words near 2^31 is still ~1e-12 of the norm
    tolerances={"bfloat16": 1e-15, "float16": 1e-15, "float32": 1e-15},
    entry_point="pack",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
