"""SGLang's Mamba-2 per-sequence final states (SGLang v0.5.9, Apache-2.0; adapted there from
vLLM and mamba_ssm), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py sglang_ssd_varlen_states` and
never committed.

Why this one: on SGLang's CUDA path every Mamba-2 layer's prefill (`MambaMixer2` through
`mamba_chunk_scan_combined` with the prompts' cu_seqlens) ends with this kernel, which makes
each packed prompt's final SSM state for the request's slot in the state pool.  Its work is
per sequence, not per chunk: one program per (16 x 16 tile of the headdim x dstate state,
sequence, head) reads the sequence's bounds, walks only the sequence's tokens in its last
chunk (from the chunk's start or the sequence's, whichever is later) in 16-token tl.dot
steps of x^T times B rows scaled in fp32 by their decay and dt, then adds the state entering
that chunk (or the request's cached initial state, when the sequence starts inside it)
decayed to the last token.  So the grid follows the requests, each program's loop length is
its sequence's tail in the chunk (one to chunk tokens, data-dependent), and the fp32
boundary states read and the final states written outweigh the tokens' reads.  The nearest
spec is `sglang_ssd_chunk_state`, the same kernel file's per-chunk states: the same
decay-scaled x^T B product, but over every chunk from a zero start, a grid of chunks and a
fixed chunk-long loop; here only the tails of the sequences' last chunks, with a boundary
state gathered per sequence and added in the epilogue.  `vllm_ssd_state_passing` makes the
boundary states this kernel reads.  Trials: 24 prompts (about 341 tokens each) packed into
an 8192-token prefill through a Nemotron-H 8B Mamba-2 layer, and four 25-token follow-ups
in one chunk through a Mamba-2 2.7B layer (every sequence in chunk 0, so all four take
their initial state, three with an edge decay).  Output: the final states, fp32.  The floor is reading the tails' x, B,
dt and dA_cumsum and the boundary states once and writing the final states once.
"""

from __future__ import annotations

from collections.abc import Mapping
from itertools import pairwise

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ssd_varlen_states")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "memory-bound", "small-grid")


def _tail_tokens(d: Mapping[str, int]) -> int:
    """Tokens of every sequence in its last chunk (reference.make_inputs' bounds)."""
    per = d["seqlen"] // d["seqs"]
    bounds = [i * per for i in range(d["seqs"])] + [d["seqlen"]]
    total = 0
    for start, end in pairwise(bounds):
        cs = (end - 1) // d["chunk"] * d["chunk"]
        total += end - max(start, cs)
    return total


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The tails' x and B rows read once (B once per group), their fp32 dt and dA_cumsum per
    head, one fp32 boundary state per sequence and head read (a chunk state or the initial
    state) and the fp32 final state written, the bounds (int32)."""
    es = ELEMENT_SIZE[dtype]
    tail = _tail_tokens(d)
    state = d["seqs"] * d["nheads"] * d["headdim"] * d["dstate"]
    return (
        es * tail * (d["nheads"] * d["headdim"] + d["ngroups"] * d["dstate"])
        + 8 * tail * d["nheads"]
        + 2 * 4 * state
        + 4 * (d["seqs"] + 1)
    )


def flops(d: Mapping[str, int]) -> int:
    """A headdim x dstate product per tail token and head, and the boundary state's scale
    and add."""
    state = d["seqs"] * d["nheads"] * d["headdim"] * d["dstate"]
    return 2 * _tail_tokens(d) * d["nheads"] * d["headdim"] * d["dstate"] + 2 * state


_make_inputs = _common.forward_make_inputs(
    "sglang_ssd_varlen_states", "seqlen", "seqs", "nheads", "headdim", "ngroups", "dstate",
    "chunk",
)  # fmt: skip
_reference = _common.forward_reference("sglang_ssd_varlen_states")
_baselines = _common.forward_baselines(
    "sglang_ssd_varlen_states",
    (
        "torch",
        "torch",
        "the same by torch, one sequence at a time: B scaled by the decay and dt in fp32 and "
        "cast back, one einsum over the sequence's last-chunk tokens in the input dtype, the "
        "decayed boundary state added in fp32",
        "torch_varlen_states",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ssd_varlen_states.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "state rows (headdim) per program; None: the kernel's default 16"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns (dstate) per program; None: the kernel's default 16"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "tail tokens per tl.dot step; None: the kernel's default 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the token loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ssd_varlen_states",
    description=(
        "SGLang's Mamba-2 per-sequence final states (v0.5.9, the SSD prefill's last kernel): "
        "per sequence, head and 16 x 16 state tile, x^T B over the sequence's tokens in its "
        "last chunk in 16-deep tl.dot steps, B scaled by decay and dt, plus the decayed "
        "boundary or cached initial state; bf16 in, fp32 states out"
    ),
    dims=(
        Dim("seqlen", "packed prefill tokens", "batch"),
        Dim("seqs", "prompts packed (equal lengths, the last takes the rest)"),
        Dim("nheads", "SSM heads", "num_heads"),
        Dim("headdim", "channels per head (the state's rows)", "head_dim"),
        Dim("ngroups", "B groups (heads share them)"),
        Dim("dstate", "SSM state size (the state's columns)"),
        Dim("chunk", "tokens per SSD chunk"),
    ),
    trials=(
        Trial(
            "prefill_nemotron_h_8b_24_prompts",
            {
                "seqlen": 8192,
                "seqs": 24,
                "nheads": 128,
                "headdim": 64,
                "ngroups": 8,
                "dstate": 128,
                "chunk": 128,
            },
            "24 prompts of about 341 tokens packed into an 8192-token prefill through a "
            "Nemotron-H 8B Mamba-2 layer (128 heads of 64, 8 groups, state 128, 128-token "
            "chunks): 98,304 programs over 3072 states, tails of 1 to 128 tokens (1,956 in "
            "all), 4.2 GFLOP, 239 MB moved (the fp32 states read and written 201 MB of it)",
        ),
        Trial(
            "followups_mamba2_2_7b",
            {
                "seqlen": 100,
                "seqs": 4,
                "nheads": 80,
                "headdim": 64,
                "ngroups": 1,
                "dstate": 128,
                "chunk": 256,
            },
            "four 25-token follow-ups packed in one chunk through a Mamba-2 2.7B layer (80 "
            "heads of 64, one group, state 128, 256-token chunks; all four take their "
            "initial state, three from inside the chunk): 10,240 programs, 0.14 GFLOP, 22 MB moved "
            "(21 MB of it the fp32 states)",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over tail terms of B rows rounded to the input dtype after scaling,
    # an fp32 boundary state added; fp32 inputs go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="varlen_states",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
