"""vLLM's NVFP4 emulation MoE GEMM (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_nvfp4_moe vllm_nvfp4_e2m1 vllm_moe_write_zeros` and
never committed.

Why this one as the set's FP4 weight-decoding MoE GEMM: an NVFP4 checkpoint (NVIDIA's
ModelOpt exports, e.g. DeepSeek-R1-0528's FP4) served on a GPU without FP4 tensor cores,
Hopper among them, runs its experts through vLLM's NVFP4 emulation backend when it is asked
for (`--moe-backend emulation`; vLLM also takes it for online requantization sources,
while its automatic choice on Hopper ranks Marlin and Humming ahead of it).  The weights
stay packed, two E2M1 codes a byte with an e4m3 scale per 16 and an fp32 scale per expert,
and are decoded inside the GEMM's K loop: per BLOCK_SIZE_K step each program loads
BLOCK_SIZE_K / 2 bytes of each of its columns and one scale byte per packed byte, splits
the nibbles, rebuilds each E2M1 value from its bits (a shift, an add, a bitcast and three
selects), scales both halves in fp32, interleaves and transposes them into the dot's
operand and casts it to bf16 before one tl.dot over the assignments sorted and padded by
expert.  The nearest specs: `sglang_moe_wna16`, the same grouped GEMM over expert-sorted
assignments with int4 weights (zero points and a scale gathered per element from 128-wide
groups; here a scale per 16, a float code decoded by bit construction and an extra global
scale), and `sglang_fused_moe`, the same grid with bf16 weights read straight into tl.dot
(here a quarter of the weight bytes, plus scales an eighth of those, and the decode on the
dot's critical path).  vLLM's tiles come from `get_default_config` (no tuned table matches
the packed w2 shape) and its num_warps and num_stages are never passed: Triton's 4 and 3.
Both trials are DeepSeek-R1-0528's FP4 MoE layer on a tensor-parallel-8 rank
(256 routed experts, top-8, hidden 7168, each expert's 2048-wide intermediate split 256 a
rank): a 4096-token prefill chunk, about 128 assignments an expert, compute-bound on the
decode and the dots, and a 64-sequence decode step that streams the packed weights and
scales of the ~222 experts it hits.  Output: vLLM's [tokens, topk, 2 * inter]
intermediate cache in the activations' dtype.  The floor is the larger of reading the
hidden states, the hit experts' packed weights, block scales and global scales once and
writing the intermediate once, and the routed matmul's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_nvfp4_moe", "vllm_nvfp4_e2m1", "vllm_moe_write_zeros")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # decode streams the packed weights, prefill is compute-bound
NVFP4_GROUP = 16


def experts_hit(d: Mapping[str, int]) -> float:
    """The expected number of experts that receive at least one token under the uniform
    routing `make_inputs` draws (each token picks topk distinct experts)."""
    e = d["experts"]
    return e * (1.0 - (1.0 - d["topk"] / e) ** d["tokens"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The hidden states read once; per expert hit its packed weights (half a byte each),
    its e4m3 block scales (a byte per 16 weights) and its fp32 global scale read once; the
    intermediate written once; the sorted assignment ids (int32) read once.  The padding
    ids and the block-to-expert map are not counted."""
    es = ELEMENT_SIZE[dtype]
    n = 2 * d["inter"]
    assignments = d["tokens"] * d["topk"]
    per_expert = n * d["hidden"] // 2 + n * d["hidden"] // NVFP4_GROUP + 4
    return int(
        d["tokens"] * d["hidden"] * es
        + experts_hit(d) * per_expert
        + assignments * n * es
        + 4 * assignments
    )


def flops(d: Mapping[str, int]) -> int:
    """One hidden x (2 * inter) product per routed (token, expert) pair (the decode of the
    weights, redone by every row block of an expert, not counted)."""
    return 2 * d["tokens"] * d["topk"] * 2 * d["inter"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "vllm_nvfp4_moe", "tokens", "hidden", "inter", "experts", "topk"
)
_reference = _common.forward_reference("vllm_nvfp4_moe")
_baselines = _common.forward_baselines(
    "vllm_nvfp4_moe",
    (
        "torch",
        "torch",
        "the same by torch: per expert that received tokens, its NVFP4 weights dequantized "
        "to the input dtype, then its tokens' rows times them by torch's matmul",
        "torch_nvfp4_moe",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_nvfp4_moe.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128, 256), "tile_m",
         "expert-sorted assignments per program (each expert's run is padded to a multiple); "
         "None: vLLM's default for the batch (128 above 512 tokens, 32 at 65 to 96)"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per program, each decoded from its own packed bytes and scales; "
         "None: vLLM's 128 (64 at 64 tokens or fewer)"),
    Knob("block_k", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "hidden-size depth per step (half as many packed bytes per column, a scale per "
         "16); None: vLLM's 64 (128 at 64 tokens or fewer)"),
    Knob("group_m", "int", (None, 1, 2, 4, 8, 16, 32), "grouping",
         "row blocks launched together before the column moves on; None: vLLM's 1 (16 "
         "above 128 tokens per expert)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM's config says 8 above 128 "
         "tokens, but the invoke never passes it)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden-size loop; None: Triton's default 3 (the "
         "invoke passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_nvfp4_moe",
    description=(
        "vLLM's NVFP4 emulation MoE GEMM (v0.34.0, fused_moe_nvfp4_emulation_kernel): each "
        "routed (token, expert) pair's hidden state times the expert's gate and up weights, "
        "decoded from packed E2M1 nibbles with an e4m3 scale per 16 and a per-expert fp32 "
        "scale inside the K loop, tl.dot tiles over assignments sorted and padded by "
        "expert, bf16 in and out"
    ),
    dims=(
        Dim("tokens", "tokens in the batch (each routed to topk experts)", "rows"),
        Dim("hidden", "model width (the GEMM's depth; a multiple of 16)"),
        Dim("inter", "an expert's intermediate size on the rank (the GEMM's width is twice it)"),
        Dim("experts", "routed experts in the layer"),
        Dim("topk", "experts per token"),
    ),
    trials=(
        Trial(
            "prefill_deepseek_r1_fp4_tp8",
            {"tokens": 4096, "hidden": 7168, "inter": 256, "experts": 256, "topk": 8},
            "a 4096-token prefill chunk through a DeepSeek-R1-0528 FP4 MoE layer on a "
            "tensor-parallel-8 rank (256 routed experts, top-8, 7168 -> 2 x 256): 32,768 "
            "assignments, about 128 per expert, 241 GFLOP over 621 MB (vLLM's 128 x 128 x "
            "64 tiles, 4 warps, 3 stages: 2040 programs, about 1500 past the early exit)",
        ),
        Trial(
            "decode_deepseek_r1_fp4_tp8",
            {"tokens": 64, "hidden": 7168, "inter": 256, "experts": 256, "topk": 8},
            "a 64-sequence decode step through the same layer: 512 assignments hit about "
            "222 experts, whose 2.1 MB of packed weights and scales each are streamed, "
            "461 MB for 3.8 GFLOP (vLLM's 32 x 64 x 128 tiles: 2112 programs, about 1780 "
            "past the early exit)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the decoded weights rounded once to the compute dtype, fp32 accumulation over the
    # hidden size, one rounding to the output dtype (fp32 inputs: tf32 tl.dot on the GPU)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 5e-3},
    entry_point="nvfp4_moe_gemm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
