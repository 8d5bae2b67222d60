"""SGLang's chunked-SGMV LoRA expand (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_lora_expand` and never committed.

Why this one: the B half of multi-LoRA serving under SGLang's default LoRA backend (csgmv),
run after every LoRA-wrapped projection, and a GEMM shaped unlike the set's others.  Its
reduction is the adapter's rank (16 to 64: one to four BLOCK_K steps), its output is as
wide as the layer (a fused QKV's three slices, a gate-up's two), and it is an epilogue on
the base layer's output: each program gathers up to 16 rows of a segment through the
adapter permutation, makes a 16 x 64 tile from a few tl.dots, rounds it and adds it to the
base rows it reads and scatters back in place.  So it moves the base output twice for very
few flops (memory-bound at any rank), and with SGLang's 16-token segments a prefill is
launched as hundreds of thousands of small programs.  `vllm_lora_shrink` is the other half
(vLLM's, hidden -> rank: a long K split across programs, a narrow output); here K is short
and N long, the segments are SGLang's fixed-size chunks of each adapter's run rather than
vLLM's per-adapter token lists, and the output is an in-place add.  Both trials are
Llama 3.1 8B with four adapters: a 4096-token prefill (four 1024-token prompts) through the
gate-up expand at rank 64, and a 32-request decode step through the QKV expand at rank 16
(q 4096 wide, k and v 1024: three quarters of the k and v slices' programs fully
masked).  Output: the base output with the LoRA term added (the input dtype).  The floor
is reading x, the adapters' B and the base once and writing the base once, and the
products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_lora_expand")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def _widths(d: Mapping[str, int]) -> list[int]:
    return [d["first_out"]] + [d["other_out"]] * (d["slices"] - 1)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x [tokens, slices x rank] and the used adapters' B [out, rank] read once, the base
    output read and written once, the token permutation, segments and per-adapter scalars
    read once."""
    es = ELEMENT_SIZE[dtype]
    out = sum(_widths(d))
    loras = min(d["loras"], d["seqs"])
    return (
        es * d["tokens"] * len(_widths(d)) * d["rank"]
        + es * loras * out * d["rank"]
        + 2 * es * d["tokens"] * out
        + 4 * d["tokens"] * 2
    )


def flops(d: Mapping[str, int]) -> int:
    """A rank-deep product per token and output column (and the scale and add)."""
    return 2 * d["tokens"] * sum(_widths(d)) * d["rank"]


_make_inputs = _common.forward_make_inputs(
    "sglang_lora_expand", "tokens", "seqs", "loras", "rank", "slices", "first_out", "other_out"
)
_reference = _common.forward_reference("sglang_lora_expand")
_baselines = _common.forward_baselines(
    "sglang_lora_expand",
    (
        "torch",
        "torch",
        "the same by torch: per adapter and slice, its tokens' rows of x times its B^T in "
        "the input dtype, scaled and added to the base, copied back in place",
        "torch_lora_expand",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_lora_expand.launcher")


TRITON_KNOBS = (
    Knob("chunk_size", "int", (None, 16, 32, 64, 128), "tile_m",
         "tokens per segment and BLOCK_M (SGLang ties them); None: SGLang's 16 "
         "(--max-lora-chunk-size's default)"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per program; None: SGLang's 64"),
    Knob("block_k", "int", (None, 16, 32, 64), "tile_k",
         "rank per tl.dot step; None: SGLang's 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the rank loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_lora_expand",
    description=(
        "SGLang's chunked-SGMV LoRA expand (v0.5.9, the csgmv backend's B product): per "
        "16-token segment of one adapter's tokens, slice and 64 output columns, the gathered "
        "rows of the shrink output times the adapter's B^T in rank-16 tl.dot steps, scaled, "
        "rounded and added in place to the base layer's output"
    ),
    dims=(
        Dim("tokens", "tokens in the batch", "batch"),
        Dim("seqs", "requests (equal lengths), request i on adapter i % loras"),
        Dim("loras", "adapters in the batch"),
        Dim("rank", "LoRA rank (the product's depth)"),
        Dim("slices", "output slices (3: a fused QKV, 2: a gate-up, 1: a plain linear)"),
        Dim("first_out", "output width of the first slice (q, or gate)"),
        Dim("other_out", "output width of each later slice (k and v, or up)"),
    ),
    trials=(
        Trial(
            "prefill_gate_up_llama31_8b_r64",
            {
                "tokens": 4096,
                "seqs": 4,
                "loras": 4,
                "rank": 64,
                "slices": 2,
                "first_out": 14336,
                "other_out": 14336,
            },
            "four 1024-token prompts on four rank-64 adapters through Llama 3.1 8B's gate-up "
            "expand (2 x 14336 columns): 256 segments, 114,688 programs, 15.0 GFLOP, 486 MB "
            "moved (the base output read and written, 470 MB of it)",
        ),
        Trial(
            "decode_qkv_llama31_8b_r16",
            {
                "tokens": 32,
                "seqs": 32,
                "loras": 4,
                "rank": 16,
                "slices": 3,
                "first_out": 4096,
                "other_out": 1024,
            },
            "a 32-request decode step on four rank-16 adapters through Llama 3.1 8B's QKV "
            "expand (q 4096, k and v 1024 columns): 4 segments, 768 programs (the k and v "
            "slices' 48 column blocks past 1024 fully masked), 6.3 MFLOP, 1.6 MB moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the fp32 LoRA term rounded once to the dtype, then added to the base and rounded
    # again; fp32 inputs go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="lora_expand",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
