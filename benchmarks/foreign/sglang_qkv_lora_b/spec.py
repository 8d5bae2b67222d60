"""SGLang's fused QKV LoRA B of the triton LoRA backend (SGLang v0.5.9, Apache-2.0), as
kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_qkv_lora_b` and never committed.

Why this one: the B half of multi-LoRA serving on a fused QKV projection under
`--lora-backend triton`, run after every attention block's QKV shrink.  Its reduction is
the adapter's rank (16 to 64: one to four BLOCK_K steps), its output is the whole QKV width,
and it is an in-place epilogue on the base QKV output, so it moves the base output twice
for very few flops.  Nearest is `sglang_lora_expand` (the same product under the default
csgmv backend); here the batch is cut by request rather than into fixed 16-token chunks of
each adapter's run: one segment per request, read straight from x (no permutation gather),
and the grid's first axis is sized by the longest request times the q width, so a batch of
unequal requests or a decode step (one token a request: 15 of each program's 16 rows
masked) runs many fully or mostly masked programs.  Both trials are Llama 3.1 8B (q 4096,
k and v 1024: three quarters of the k and v slices' column programs masked) with four
adapters: a 4096-token prefill (four 1024-token prompts) at rank 64 and a 32-request decode
step at rank 16.  Output: the base QKV output with the LoRA term added (the input dtype).
The floor is reading x, the used adapters' B and the base once, writing the base once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_qkv_lora_b")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x [tokens, 3 x rank] and the used adapters' B [out, rank] read once, the base output
    read and written once, the per-request segments and adapter ids read once."""
    es = ELEMENT_SIZE[dtype]
    out = d["q_out"] + 2 * d["kv_out"]
    loras = min(d["loras"], d["seqs"])
    return (
        es * d["tokens"] * 3 * d["rank"]
        + es * loras * out * d["rank"]
        + 2 * es * d["tokens"] * out
        + 4 * 3 * d["seqs"]
    )


def flops(d: Mapping[str, int]) -> int:
    """A rank-deep product per token and output column (and the scale and add)."""
    return 2 * d["tokens"] * (d["q_out"] + 2 * d["kv_out"]) * d["rank"]


_make_inputs = _common.forward_make_inputs(
    "sglang_qkv_lora_b", "tokens", "seqs", "loras", "rank", "q_out", "kv_out"
)
_reference = _common.forward_reference("sglang_qkv_lora_b")
_baselines = _common.forward_baselines(
    "sglang_qkv_lora_b",
    (
        "torch",
        "torch",
        "the same by torch: per request and slice, its rows of x times its adapter's B^T in "
        "the input dtype, scaled and added to the base, copied back in place",
        "torch_qkv_lora_b",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_qkv_lora_b.launcher")


TRITON_KNOBS = (
    Knob("block_s", "int", (None, 16, 32, 64, 128), "tile_m",
         "token rows of a request per program; None: SGLang's 16"),
    Knob("block_n", "int", (None, 16, 32, 64, 128, 256), "tile_n",
         "output columns per program (SGLang's BLOCK_OUT); None: SGLang's 64"),
    Knob("block_k", "int", (None, 16, 32, 64), "tile_k",
         "rank per tl.dot step (SGLang's BLOCK_R); None: SGLang's 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the rank loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_qkv_lora_b",
    description=(
        "SGLang's fused QKV LoRA B (v0.5.9, the triton LoRA backend's _qkv_lora_b_kernel): "
        "per 16 rows of one request, slice (q, k, v) and 64 output columns, the request's "
        "rows of the shrink output times its adapter's B^T in rank-16 tl.dot steps, scaled, "
        "rounded and added in place to the base QKV output"
    ),
    dims=(
        Dim("tokens", "tokens in the batch", "batch"),
        Dim(
            "seqs",
            "requests (equal lengths, the last takes the rest), request i on adapter i % loras",
        ),
        Dim("loras", "adapters in the batch"),
        Dim("rank", "LoRA rank (the product's depth)"),
        Dim("q_out", "output width of the q slice"),
        Dim("kv_out", "output width of each of the k and v slices"),
    ),
    trials=(
        Trial(
            "prefill_qkv_llama31_8b_r64",
            {"tokens": 4096, "seqs": 4, "loras": 4, "rank": 64, "q_out": 4096, "kv_out": 1024},
            "four 1024-token prompts on four rank-64 adapters through Llama 3.1 8B's QKV B "
            "(q 4096, k and v 1024 columns): 49,152 programs (the k and v slices' 48 of 64 "
            "column blocks masked), 3.2 GFLOP, 106 MB moved (the base read and written, "
            "101 MB of it)",
        ),
        Trial(
            "decode_qkv_llama31_8b_r16",
            {"tokens": 32, "seqs": 32, "loras": 4, "rank": 16, "q_out": 4096, "kv_out": 1024},
            "a 32-request decode step on four rank-16 adapters through the same QKV B: 6,144 "
            "programs of one live row each, 6.3 MFLOP, 1.6 MB moved",
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
    entry_point="qkv_lora_b",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
