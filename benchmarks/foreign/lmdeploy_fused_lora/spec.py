"""LMDeploy's fused LoRA (LMDeploy v0.18.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
lmdeploy_fused_lora` and never committed.

Why this one: the whole LoRA branch of every LoRA-wrapped linear under LMDeploy's PyTorch
engine (multi-adapter serving, `TritonLoRAImpl`) in ONE kernel, where the wrapped SGLang
and vLLM LoRA kernels run a shrink and an expand as two: each program computes its tokens'
rank-wide x @ A^T over the whole hidden size in fp32 tl.dot steps, keeps it in registers
(rounded, scaled by the adapter's alpha / rank), and walks the whole output width
multiplying it by B and adding each tile into the linear's base output.  So one program
does a deep, narrow reduction and then a long, shallow sweep of stores, the token tile,
the shrink's hidden step and the expand's column step are three independent launch
choices, and the grid's first axis is sized by the batch's whole token count (LMDeploy
passes it as max_seqlen), so all but one request's worth of each program column returns
at once.  Both trials are Llama 3.1 8B with four adapters: an 8 x 512-token prefill
through the down projection at rank 64 (14,336 -> 64 -> 4,096), and a 32-request decode
step through the o projection at rank 16 (4,096 -> 16 -> 4,096).  Output: [tokens, n],
the base output plus the LoRA term, in the input dtype.  The floor is reading x, the used
adapters' A and B and the base output once and writing the output once, and the two
products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "lmdeploy_fused_lora")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x [tokens, hidden] read once, the used adapters' A [rank, hidden] and B [rank, n]
    read once each, the base output [tokens, n] read once and the output written once (the
    timed call's copy of the base into the output buffer, which makes that traffic twice,
    not counted); each request's int64 start, length and adapter, and each adapter's int64
    rank start and rank and fp32 scaling, read once."""
    es = ELEMENT_SIZE[dtype]
    loras = min(d["loras"], d["seqs"])
    return (
        es * d["tokens"] * d["hidden"]
        + es * loras * d["rank"] * (d["hidden"] + d["n"])
        + 2 * es * d["tokens"] * d["n"]
        + 8 * 3 * d["seqs"]
        + (8 * 2 + 4) * d["loras"]
    )


def flops(d: Mapping[str, int]) -> int:
    """The shrink (a hidden-deep product per token and rank) and the expand (a rank-deep
    product per token and output column); the scaling, the add into the base output, the
    rank tile's padding past the rank (to 16) and the idle programs not counted."""
    return 2 * d["tokens"] * d["rank"] * (d["hidden"] + d["n"])


_make_inputs = _common.forward_make_inputs(
    "lmdeploy_fused_lora", "tokens", "seqs", "loras", "rank", "hidden", "n"
)
_reference = _common.forward_reference("lmdeploy_fused_lora")
_baselines = _common.forward_baselines(
    "lmdeploy_fused_lora",
    (
        "torch",
        "torch",
        "the same by torch: per adapter, its tokens' rows of x times its A^T, scaled, times "
        "its B, added to the base output, in the input dtype",
        "torch_fused_lora",
    ),
)


_launch_info = _common.triton_launch_info("foreign.lmdeploy_fused_lora.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "a request's tokens per program; None: LMDeploy's first autotune config, 32"),
    Knob("block_n", "int", (None, 32, 64, 128, 256), "tile_n",
         "output columns per expand step; None: LMDeploy's 128"),
    Knob("block_k", "int", (None, 32, 64, 128, 256), "tile_k",
         "hidden per shrink tl.dot step; None: LMDeploy's 128"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: LMDeploy's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the shrink and expand loops; None: LMDeploy's 4"),
)  # fmt: skip

SPEC = KernelSpec(
    name="lmdeploy_fused_lora",
    description=(
        "LMDeploy's fused LoRA (v0.18.0, the PyTorch engine's TritonLoRAImpl): per request "
        "and 32 of its tokens, x @ A^T over the whole hidden size in 128-deep tl.dot steps "
        "into a rank-wide fp32 tile, rounded and scaled, then times B across the whole "
        "output width in 128-column steps, each tile added into the base output; the grid "
        "sized by the batch's token count"
    ),
    dims=(
        Dim("tokens", "tokens in the batch (packed requests)", "batch"),
        Dim(
            "seqs",
            "requests (equal lengths, the last takes the rest), request i on adapter "
            "i % loras; one program column each",
        ),
        Dim("loras", "adapters in the batch"),
        Dim("rank", "LoRA rank (the shrink's output width, the expand's depth)"),
        Dim("hidden", "the layer's input width (the shrink's depth)"),
        Dim("n", "the layer's output width (the expand's columns)"),
    ),
    # A prefill through the deepest A (the down projection's, 14,336 wide) first, then a
    # decode step through the o projection, where each program has one live token of 32.
    trials=(
        Trial(
            "prefill_down_llama31_8b_r64",
            {"tokens": 4096, "seqs": 8, "loras": 4, "rank": 64, "hidden": 14336, "n": 4096},
            "eight 512-token prompts on four rank-64 adapters through Llama 3.1 8B's down "
            "projection (14,336 -> 64 -> 4,096): 128 token tiles x 8 requests = 1,024 "
            "programs, 128 of them live, each 112 shrink steps of 128 then 32 expand steps "
            "of 128 columns, 9.7 GFLOP, 194 MB moved (x 117 MB of it)",
        ),
        Trial(
            "decode_o_llama31_8b_r16",
            {"tokens": 32, "seqs": 32, "loras": 4, "rank": 16, "hidden": 4096, "n": 4096},
            "a 32-request decode step on four rank-16 adapters through Llama 3.1 8B's o "
            "projection (4,096 -> 16 -> 4,096): 1 token tile x 32 requests = 32 programs, "
            "each one live token of 32 over 32 shrink steps and 32 expand steps, 8.4 MFLOP, "
            "1.8 MB moved (the adapters' A and B 1 MB of it)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 shrink over up to 14,336 products rounded to the dtype and scaled there, then
    # an fp32 expand rounded once and added to the base in the dtype; fp32 inputs go through
    # tf32 tl.dot on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="fused_lora",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
