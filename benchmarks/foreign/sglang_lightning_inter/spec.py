"""SGLang's lightning attention, inter-block launches (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: kernels nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_lightning_inter` and never committed.

Why these: SGLang's hybrid linear-attention backend runs lightning attention (a linear
attention with a per-head exponential decay, after MiniMax-Text-01) for the Bailing linear
models' prompts, one request at a time with its cached state.  After the intra-block part
(`vllm_lightning_attn_diag` wraps vLLM's copy of that first launch) three launches carry
every earlier block: per 256-token block a d x e fp32 state from decayed k^T v products in
64-deep fp32 tl.dot steps (one program per head and block, the whole 128 x 128 state in its
registers), a sequential decayed prefix over the blocks that also updates the request's
history in place (one program per head), and per 64 queries one fp32 tl.dot with the
block's prefix state added to the intra-block output in place.  So it is a chunked
linear-attention product in three launches, with an fp32 state buffer of heads x blocks x
64 KB between them and a serial reduce.  The nearest specs are `vllm_lightning_attn_diag`
(the same attention's intra-block launch: Q K^T masked, then times V, no state) and the
chunked GDN/KDA/SSD state launches (`sglang_gdn_chunk_h`, `sglang_ssd_chunk_state`,
`vllm_ssd_state_passing`), which carry a state through one sequential kernel or pass it in
a separate scan without the rank-d query product fused to an in-place add.  Both trials
are one Bailing linear-attention layer's 16 heads of 128 (batch 1, as SGLang's backend
calls it; fp32 q, k, v and o, as the layer casts its qkv): a 16384-token prompt (64 blocks) and a 384-token one (a block and a half: the
last block partial).  Outputs: o with the inter-block part added, and the new history.
The floor is reading q, k, v and o and the history once and writing o and the history
once, or the state and output products at the matmul rate.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_lightning_inter")

ELEMENT_SIZE = _common.ELEMENT_SIZE
BLOCK = 256
CONTEXTS = ("attention", "gemm")  # fp32 (tf32) tl.dot state and output products


def bytes_moved(d: Mapping[str, int], dtype: str = "float32") -> int:
    """q, k and v read once, o read and written once, the fp32 history read and written
    once, the fp32 decay table and rates read once (the block-state buffer between the
    launches not counted)."""
    es = ELEMENT_SIZE[dtype]
    bh = d["batch"] * d["heads"]
    return (
        es * bh * d["seqlen"] * (2 * d["d"] + 3 * d["e"])
        + 2 * 4 * bh * d["d"] * d["e"]
        + 4 * d["heads"] * (BLOCK + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """The k^T v state products and the q times state products: 2 x d x e a token each."""
    return 2 * 2 * d["batch"] * d["heads"] * d["seqlen"] * d["d"] * d["e"]


_make_inputs = _common.forward_make_inputs(
    "sglang_lightning_inter", "batch", "heads", "seqlen", "d", "e"
)
_reference = _common.forward_reference("sglang_lightning_inter")
_baselines = _common.forward_baselines(
    "sglang_lightning_inter",
    (
        "torch",
        "torch",
        "the same by torch in fp32, block by block: decayed K^T V per block, Q times the "
        "prefix state, added to o and the history in place",
        "torch_lightning_inter",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_lightning_inter.launcher")


TRITON_KNOBS = (
    Knob("cblock_kv", "int", (None, 16, 32, 64, 128, 256), "tile_k",
         "tokens per tl.dot step of the block-state launch (a divisor of the 256-token "
         "block); None: SGLang's 64"),
    Knob("cblock_out", "int", (None, 16, 32, 64, 128), "tile_m",
         "queries per program of the output launch (a divisor of the block); None: "
         "SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program of all three launches; None: Triton's default 4 (SGLang "
         "passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the state launch's token loop and the reduce's block "
         "loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_lightning_inter",
    description=(
        "SGLang's lightning attention, inter-block launches (v0.5.9, _fwd_kv_parallel, "
        "_fwd_kv_reduce, _fwd_none_diag_kernel): per 256-token block a decayed K^T V fp32 "
        "state in 64-deep tl.dot steps, a sequential decayed prefix over the blocks and the "
        "history, and 64 queries per program times their block's prefix state added to "
        "the output in place"
    ),
    dims=(
        Dim("batch", "sequences (SGLang's backend passes one request at a time)", "batch"),
        Dim("heads", "heads on this GPU", "num_heads"),
        Dim("seqlen", "prompt tokens", "query_len"),
        Dim("d", "query and key head size (a power of two)", "head_dim"),
        Dim("e", "value head size (a power of two)"),
    ),
    trials=(
        Trial(
            "prompt_16k_bailing_linear",
            {"batch": 1, "heads": 16, "seqlen": 16384, "d": 128, "e": 128},
            "a 16384-token prompt through a Bailing linear-attention layer (16 heads of "
            "128): 64 blocks, 1,024 state programs, 16 reduce programs, 4,096 output "
            "programs, 17.2 GFLOP, 673 MB moved (and a 67 MB fp32 block-state buffer written "
            "and read between the launches)",
        ),
        Trial(
            "prompt_384_bailing_linear",
            {"batch": 1, "heads": 16, "seqlen": 384, "d": 128, "e": 128},
            "a 384-token prompt through the same layer: two blocks (the second half full), "
            "32 state programs, 16 reduce programs, 128 output programs (32 fully masked), "
            "0.4 GFLOP, 17.8 MB moved",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    dtype="float32",  # the Bailing layer runs lightning attention on fp32 q, k and v
    # fp32 tl.dot is tf32 on the GPU (10-bit mantissas), states summed over 256 tokens and
    # decayed over up to 64 blocks; the inputs are fp32 whatever the dtype asked for
    tolerances={"bfloat16": 5e-3, "float16": 5e-3, "float32": 5e-3},
    entry_point="lightning_inter",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
