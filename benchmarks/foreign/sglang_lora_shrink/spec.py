"""SGLang's chunked-SGMV LoRA shrink (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_lora_shrink` and never committed.

Why this one: the A half of multi-LoRA serving under SGLang's default LoRA backend (csgmv),
run before every LoRA-wrapped projection, and a GEMM shaped unlike the set's others: its
reduction is the layer's whole hidden size (4096 to 14336, walked serially in 256-deep
tl.dot steps, no split-K), its output only slices x rank wide (48 to 192 columns), its M a
16-token segment of one adapter's tokens gathered through the adapter permutation.  With
SGLang's BLOCK_N of 16, each segment's x rows are read again by every one of the
N / 16 column blocks (through L2), and a 16 x 16 output tile per program is a small
tensor-core tile.  `sglang_lora_expand` is the other half in the same backend (rank-deep,
layer-wide, an in-place epilogue on the base output); `vllm_lora_shrink` is the same product
in vLLM's code, which splits K across programs and reduces in fp32 atomics or a second pass
over per-adapter token lists, where SGLang has no split-K and fixed-size segments.  Both
trials are Llama 3.1 8B with four adapters: a 4096-token prefill (four 1024-token prompts)
through the QKV shrink at rank 64 (hidden 4096 -> 3 x 64), and a 32-request decode step
through the gate-up shrink at rank 16 (hidden 4096 -> 2 x 16), launched as SGLang's CUDA
graph launches it (one program row per request, those past the 4 live segments returning
at once).  Output: [tokens, slices x rank] in the input dtype.  The floor is reading x and
the used adapters' A once and writing the output once, and the products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_lora_shrink")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x [tokens, hidden] and the used adapters' A [slices x rank, hidden] read once, the
    output [tokens, slices x rank] written once, the token permutation and segments read
    once."""
    es = ELEMENT_SIZE[dtype]
    n = d["slices"] * d["rank"]
    loras = min(d["loras"], d["seqs"])
    return (
        es * d["tokens"] * d["hidden"]
        + es * loras * n * d["hidden"]
        + es * d["tokens"] * n
        + 4 * d["tokens"] * 2
    )


def flops(d: Mapping[str, int]) -> int:
    """A hidden-deep product per token and output column."""
    return 2 * d["tokens"] * d["slices"] * d["rank"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "sglang_lora_shrink", "tokens", "seqs", "loras", "rank", "slices", "hidden"
)
_reference = _common.forward_reference("sglang_lora_shrink")
_baselines = _common.forward_baselines(
    "sglang_lora_shrink",
    (
        "torch",
        "torch",
        "the same by torch: per adapter, its tokens' rows of x times its A^T in the input dtype",
        "torch_lora_shrink",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_lora_shrink.launcher")


TRITON_KNOBS = (
    Knob("chunk_size", "int", (None, 16, 32, 64, 128), "tile_m",
         "tokens per segment and BLOCK_M (SGLang ties them); None: SGLang's 16 "
         "(--max-lora-chunk-size's default)"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns (of slices x rank) per program; None: SGLang's 16"),
    Knob("block_k", "int", (None, 32, 64, 128, 256, 512), "tile_k",
         "hidden per tl.dot step; None: SGLang's 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_lora_shrink",
    description=(
        "SGLang's chunked-SGMV LoRA shrink (v0.5.9, the csgmv backend's A product): per "
        "16-token segment of one adapter's tokens and 16 output columns, the gathered rows "
        "of the layer input times the adapter's A^T over the whole hidden size in 256-deep "
        "tl.dot steps, no split-K, rounded into a [tokens, slices x rank] buffer"
    ),
    dims=(
        Dim("tokens", "tokens in the batch", "batch"),
        Dim(
            "seqs",
            "requests (equal lengths), request i on adapter i % loras; tokens == "
            "seqs is a decode batch, launched on SGLang's CUDA-graph grid",
        ),
        Dim("loras", "adapters in the batch"),
        Dim("rank", "LoRA rank"),
        Dim(
            "slices",
            "stacked A's sharing the input (3: a fused QKV, 2: a gate-up, 1: a plain linear)",
        ),
        Dim("hidden", "the layer's input width (the product's depth)"),
    ),
    trials=(
        Trial(
            "prefill_qkv_llama31_8b_r64",
            {"tokens": 4096, "seqs": 4, "loras": 4, "rank": 64, "slices": 3, "hidden": 4096},
            "four 1024-token prompts on four rank-64 adapters through Llama 3.1 8B's QKV "
            "shrink (4096 -> 3 x 64): 256 segments x 12 column blocks = 3,072 programs, each "
            "16 steps of 256, 6.4 GFLOP, 41 MB moved (x 34 MB of it, read 12 times through "
            "L2)",
        ),
        Trial(
            "decode_gate_up_llama31_8b_r16",
            {"tokens": 32, "seqs": 32, "loras": 4, "rank": 16, "slices": 2, "hidden": 4096},
            "a 32-request decode step on four rank-16 adapters through Llama 3.1 8B's gate-up "
            "shrink (4096 -> 2 x 16) on SGLang's CUDA-graph grid: 2 x 32 programs, 8 of them "
            "live (4 segments of 8 tokens), 8.4 MFLOP, 1.3 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sum over 4096 products rounded once to the dtype; fp32 inputs go through tf32
    # tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 5e-3},
    entry_point="lora_shrink",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
