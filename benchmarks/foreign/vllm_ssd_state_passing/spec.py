"""vLLM's Mamba-2 state passing (vLLM v0.34.0, Apache-2.0; Tri Dao and Albert Gu's kernel
as vLLM adapted it), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py vllm_ssd_state_passing
vllm_mamba_fast_exp` and never committed.

Why this one: the set has never had a serial scan across chunks, a first-order linear
recurrence over a long state vector.  vLLM's Mamba-2 prefill (`mamba_chunk_scan_combined`,
third of its five kernels) runs it in every Mamba layer of a hybrid model such as NVIDIA's
Nemotron-H: each chunk's own final state (from `_chunk_state_fwd`, fp32) is chained into
the true state at every chunk boundary, h <- exp(dA_last) * h + state, starting from the
sequence's cached state and ending in its cache slot.  One program per 64 state elements,
sequence and head walks the sequence's chunks in order (a load of the chunk's state, a
load of its decay, a store per step, each step depending on the last), so the grid is wide
(state_dim / 64 x sequences x heads) but each program's time is the chain of chunk loads.
Both trials are Nemotron-H 8B's Mamba layers (128 heads of 64 x 128 states, 128-token
chunks): a 2048-token chunked-prefill step of four 512-token prompts (4 chunks each,
16,384 programs, 117 MB moved) and four 8192-token prompts (64 chunks each, 1.6 GB moved).
The floor is reading the chunk states once and writing the passed states once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_ssd_state_passing", "vllm_mamba_fast_exp")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("memory-bound",)


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The fp32 chunk states and the decays read once, the passed states written once in
    the dtype, and per sequence its initial state read and its final state written."""
    chunks = d["seqs"] * d["chunks_per_seq"]
    per_chunk = d["heads"] * d["state_dim"]
    return (
        chunks * per_chunk * (4 + ELEMENT_SIZE[dtype])
        + chunks * d["heads"] * 4
        + 2 * d["seqs"] * per_chunk * ELEMENT_SIZE[dtype]
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per state element and chunk (the exp once per chunk)."""
    return 2 * d["seqs"] * d["chunks_per_seq"] * d["heads"] * d["state_dim"]


_make_inputs = _common.forward_make_inputs(
    "vllm_ssd_state_passing", "seqs", "chunks_per_seq", "heads", "state_dim", "chunk_size"
)
_reference = _common.forward_reference("vllm_ssd_state_passing")
_baselines = _common.forward_baselines(
    "vllm_ssd_state_passing",
    ("torch", "torch", "the recurrence in fp32 torch ops, one chunk index per step",
     "torch_state_passing"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.vllm_ssd_state_passing.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "state elements per program (vLLM's autotune range); None: the first config, 64"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (vLLM's configs set none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipelining stages of the chunk loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_ssd_state_passing",
    description=(
        "vLLM's Mamba-2 state passing (v0.34.0, _state_passing_fwd_kernel): one program "
        "per 64 state elements, sequence and head walks the chunks, h = exp(dA) * h + "
        "state in fp32, from the cached state into the cache slot"
    ),
    dims=(
        Dim("seqs", "prefill sequences in the batch"),
        Dim("chunks_per_seq", "chunks per sequence (its tokens / chunk_size)"),
        Dim("heads", "Mamba heads"),
        Dim("state_dim", "state elements per head (head_dim x d_state, flattened)"),
        Dim("chunk_size", "tokens per chunk (only the last position's decay is read)"),
    ),
    trials=(
        Trial(
            "nemotron_h_8b_prefill_4x512",
            {"seqs": 4, "chunks_per_seq": 4, "heads": 128, "state_dim": 8192, "chunk_size": 128},
            "Nemotron-H 8B's Mamba-2 layer (128 heads, head_dim 64 x d_state 128, chunk "
            "128) in vLLM's chunked prefill: four 512-token prompts, 16,384 programs of 4 "
            "steps, 117 MB moved (bf16)",
        ),
        Trial(
            "nemotron_h_8b_prefill_4x8k",
            {"seqs": 4, "chunks_per_seq": 64, "heads": 128, "state_dim": 8192, "chunk_size": 128},
            "the same for four 8192-token prompts: 16,384 programs of 64 serial steps, "
            "1.6 GB moved (bf16)",
        ),
    ),
    backoff_dim="chunks_per_seq",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 recurrence whose states are rounded once to the dtype (exp2 for exp)
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="state_passing",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
