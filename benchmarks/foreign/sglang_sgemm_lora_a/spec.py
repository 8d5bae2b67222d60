"""SGLang's segmented LoRA A GEMM (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_sgemm_lora_a` and never committed.

Why this one: the A half of multi-LoRA serving under SGLang's `--lora-backend triton`, run
before every LoRA-wrapped projection (QKV, o, gate-up, down), and the same product as the
csgmv backend's `sglang_lora_shrink` laid out the other way: no adapter sort and no 16-token
chunks, but one program row per request over its contiguous tokens, the grid's first axis
sized by the longest request (cdiv(max_len, 16) row tiles x cdiv(stack x rank, 16) column
tiles), so the row tile, the column tile and the 256-deep hidden step are three independent
launch choices, and in a decode batch 15 of each program's 16 rows are masked.  Each
program walks the whole hidden size serially (no split-K) in fp32 tl.dot steps and reads
its x rows again for every column tile.  Both trials are Llama 3.1 8B with four adapters:
an 8 x 512-token prefill through the down projection's A at rank 64 (14,336 -> 64: a
56-step reduction), and a 32-request decode step through the fused QKV's A at rank 16
(4096 -> 3 x 16) as SGLang's CUDA graph launches it.  Output: [tokens, stack x rank] in the
input dtype.  The floor is reading x and the used adapters' A once and writing the output
once, and the products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_sgemm_lora_a")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x [tokens, hidden] and the used adapters' A [slices x rank, hidden] read once, the
    output [tokens, slices x rank] written once; each request's int32 length, start and
    adapter, and the adapters' ranks, read once."""
    es = ELEMENT_SIZE[dtype]
    n = d["slices"] * d["rank"]
    loras = min(d["loras"], d["seqs"])
    return (
        es * d["tokens"] * d["hidden"]
        + es * loras * n * d["hidden"]
        + es * d["tokens"] * n
        + 4 * (3 * d["seqs"] + 1 + d["loras"])
    )


def flops(d: Mapping[str, int]) -> int:
    """A hidden-deep product per token and output column (the masked rows of a request's
    last tile, and the idle tiles of shorter requests, not counted)."""
    return 2 * d["tokens"] * d["slices"] * d["rank"] * d["hidden"]


_make_inputs = _common.forward_make_inputs(
    "sglang_sgemm_lora_a", "tokens", "seqs", "loras", "rank", "slices", "hidden"
)
_reference = _common.forward_reference("sglang_sgemm_lora_a")
_baselines = _common.forward_baselines(
    "sglang_sgemm_lora_a",
    (
        "torch",
        "torch",
        "the same by torch: per adapter, its tokens' rows of x times its A^T in the input dtype",
        "torch_sgemm_lora_a",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_sgemm_lora_a.launcher")


TRITON_KNOBS = (
    Knob("block_s", "int", (None, 16, 32, 64, 128), "tile_m",
         "a request's token rows per program; None: SGLang's 16"),
    Knob("block_r", "int", (None, 16, 32, 64, 128), "tile_n",
         "output columns (of slices x rank) per program; None: SGLang's 16"),
    Knob("block_k", "int", (None, 32, 64, 128, 256, 512), "tile_k",
         "hidden per tl.dot step; None: SGLang's 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the hidden loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_sgemm_lora_a",
    description=(
        "SGLang's segmented LoRA A GEMM (v0.5.9, the triton LoRA backend's sgemm_lora_a): per "
        "request, 16 of its contiguous tokens and 16 output columns, the layer input's rows "
        "times the request's adapter's stacked A^T over the whole hidden size in 256-deep "
        "tl.dot steps, no split-K, rounded into a [tokens, slices x rank] buffer; the grid "
        "sized by the longest request"
    ),
    dims=(
        Dim("tokens", "tokens in the batch", "batch"),
        Dim(
            "seqs",
            "requests (equal lengths, the last takes the rest), request i on adapter "
            "i % loras; one program row each",
        ),
        Dim("loras", "adapters in the batch"),
        Dim("rank", "LoRA rank"),
        Dim(
            "slices",
            "stacked A's sharing the input (3: a fused QKV, 2: a gate-up, 1: a plain linear)",
        ),
        Dim("hidden", "the layer's input width (the product's depth)"),
    ),
    # A prefill through the deepest A (the down projection's, 14,336 wide) first, then a
    # decode step through the fused QKV's, where each program has one live row of 16.
    trials=(
        Trial(
            "prefill_down_llama31_8b_r64",
            {"tokens": 4096, "seqs": 8, "loras": 4, "rank": 64, "slices": 1, "hidden": 14336},
            "eight 512-token prompts on four rank-64 adapters through Llama 3.1 8B's down "
            "projection A (14,336 -> 64): 32 row tiles x 4 column tiles x 8 requests = 1,024 "
            "programs, each 56 steps of 256, 7.5 GFLOP, 125 MB moved (x 117 MB of it, read "
            "4 times through L2)",
        ),
        Trial(
            "decode_qkv_llama31_8b_r16",
            {"tokens": 32, "seqs": 32, "loras": 4, "rank": 16, "slices": 3, "hidden": 4096},
            "a 32-request decode step on four rank-16 adapters through Llama 3.1 8B's fused "
            "QKV A (4096 -> 3 x 16), on SGLang's CUDA-graph grid: 3 column tiles x 32 "
            "requests = 96 programs, each one live row of 16 over 16 steps, 12.6 MFLOP, "
            "1.8 MB moved (the adapters' A 1.6 MB of it)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sum over up to 14,336 products rounded once to the dtype; fp32 inputs go
    # through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 5e-3},
    entry_point="sgemm_lora_a",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
