"""SGLang's Mamba-2 chunk states (SGLang v0.5.9, Apache-2.0; adapted there from vLLM and
mamba_ssm), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_ssd_chunk_state` and never committed.

Why this one: the one SSD prefill kernel of a Mamba-2 layer the set had not scored, and a
different product from its neighbours.  `sglang_ssd_bmm` reduces over the state size (C
B^T, chunk x chunk), `vllm_ssd_chunk_scan` forms outputs and `vllm_ssd_state_passing`
chains states across chunks with one vector per step; this one reduces over the chunk's
tokens: per chunk and head, x^T (headdim) times B (dstate), each token's B row first scaled
in fp32 by its decay to the chunk's end and its dt and cast back (a prologue on the tl.dot
operand, not an epilogue), tokens of an earlier packed sequence zeroed.  SGLang launches it
with the kernel's default 16 x 16 x 16 tiles and Triton's defaults: a 64 x 128 state is 32
programs that each stream the chunk's x and B columns 16 tokens at a time, every head
rereading its group's B; the fp32 states written outweigh the inputs.  Both trials are
prefills: an 8k prompt through a Nemotron-H 8B Mamba-2 layer, and four short prompts
packed through a Mamba-2 2.7B layer (a launch-sized grid).  Output: the chunk states
(fp32).  The floor is the larger of reading x, B, dt and dA_cumsum once and writing the
states once, and the products' flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ssd_chunk_state")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")


def _nchunks(d: Mapping[str, int]) -> int:
    return -(-d["seqlen"] // d["chunk"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x and B read once, fp32 dt and dA_cumsum ([batch, nheads, nchunks, chunk]) read once,
    the int32 sequence index read once, the fp32 states written once."""
    tokens = d["batch"] * d["seqlen"]
    padded = d["batch"] * _nchunks(d) * d["chunk"]
    states = d["batch"] * _nchunks(d) * d["nheads"] * d["headdim"] * d["dstate"]
    return (
        ELEMENT_SIZE[dtype] * tokens * (d["nheads"] * d["headdim"] + d["ngroups"] * d["dstate"])
        + 8 * padded * d["nheads"]
        + 4 * tokens
        + 4 * states
    )


def flops(d: Mapping[str, int]) -> int:
    """A headdim x dstate x tokens product per chunk and head (every token once)."""
    return 2 * d["batch"] * d["seqlen"] * d["nheads"] * d["headdim"] * d["dstate"]


_make_inputs = _common.forward_make_inputs(
    "sglang_ssd_chunk_state", "batch", "seqlen", "nheads", "headdim", "ngroups", "dstate",
    "chunk", "seqs",
)  # fmt: skip
_reference = _common.forward_reference("sglang_ssd_chunk_state")
_baselines = _common.forward_baselines(
    "sglang_ssd_chunk_state",
    (
        "torch",
        "torch",
        "the same states by torch: B scaled by the decay, dt and the sequence mask in fp32 "
        "and cast back, then one einsum over the chunk's tokens in the input dtype",
        "torch_chunk_state",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ssd_chunk_state.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "state rows (headdim) per program; None: the kernel's default 16"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns (dstate) per program; None: the kernel's default 16"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "chunk tokens per tl.dot step; None: the kernel's default 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ssd_chunk_state",
    description=(
        "SGLang's Mamba-2 chunk states (v0.5.9): per chunk and head, x^T B over the chunk's "
        "tokens with each B row scaled by its decay to the chunk's end and dt, in 16 x 16 x "
        "16 tl.dot tiles, packed sequences masked, bf16 in, fp32 states out"
    ),
    dims=(
        Dim("batch", "batch rows (SGLang packs a prefill into one)", "batch"),
        Dim("seqlen", "tokens per batch row (packed sequences)"),
        Dim("nheads", "SSM heads", "num_heads"),
        Dim("headdim", "channels per head (the state's rows)", "head_dim"),
        Dim("ngroups", "B groups (heads share them)"),
        Dim("dstate", "SSM state size (the state's columns)"),
        Dim("chunk", "tokens per SSD chunk (the products' depth)"),
        Dim("seqs", "sequences packed along seqlen (equal lengths)"),
    ),
    trials=(
        Trial(
            "prefill_nemotron_h_8b",
            {
                "batch": 1,
                "seqlen": 8192,
                "nheads": 128,
                "headdim": 64,
                "ngroups": 8,
                "dstate": 128,
                "chunk": 128,
                "seqs": 1,
            },
            "an 8k-token prompt through a Nemotron-H 8B Mamba-2 layer (128 heads of 64, 8 "
            "groups, state 128, 128-token chunks): 262,144 programs over 8192 64 x 128 "
            "states, 17.2 GFLOP, 428 MB moved (the fp32 states 268 MB of it)",
        ),
        Trial(
            "packed_prompts_mamba2_2_7b",
            {
                "batch": 1,
                "seqlen": 1024,
                "nheads": 80,
                "headdim": 64,
                "ngroups": 1,
                "dstate": 128,
                "chunk": 256,
                "seqs": 4,
            },
            "four 256-token prompts packed through a Mamba-2 2.7B layer (80 heads of 64, one "
            "group, state 128, 256-token chunks): 10,240 programs, 1.3 GFLOP, 22 MB moved, a "
            "launch-sized grid",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over chunk terms of B rows rounded to the input dtype after scaling;
    # fp32 inputs go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="chunk_state",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
