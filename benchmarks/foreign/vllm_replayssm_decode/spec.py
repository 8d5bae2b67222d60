"""vLLM's ReplaySSM Mamba-2 decode step (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel
nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_replayssm_decode` and never committed.

Why this one: under `--use-replayssm` (experimental; the models marked SupportsReplaySSM,
the Nemotron-H family: Nemotron-H, Nemotron Nano 2, Nemotron 3) with the Triton Mamba
backend (vLLM's default), every decode token of a Mamba-2 layer runs
`selective_state_update_replayssm_output_only` in `MambaMixer2` instead of the state update
that reads and writes each sequence's [heads, head_dim, dstate] state every step.  Each
slot keeps a checkpoint state and a ring of the last tokens' x, dt and B (16 by default);
vLLM's planning kernel gives each row its ring position and flags the row whose ring is
full.  Two launches: a precompute dots the group's C with the window's B into an fp32
scratch (one program per row and group); then one program per (16 head_dim rows, row,
head) reads the checkpoint, decays its read-out by the window's total decay and adds the
replay of the buffered tokens (decay weights from a cumulative sum of their dt), appending
the token to the ring; on a full ring it rebuilds the state with a [16, 16] x [16, 128]
tl.dot of the window's x and w-scaled B, stores it and reads it out.  The state is read
every step but written once per window, against the ring's reads (up to 15 cached rows a
head) and the token's append.  The nearest spec is `sglang_mamba_state_update` (the plain
read-modify-write of the state each step, no ring).  Both trials use vLLM's default
16-token ring with the rows spread over its positions (a steady decode stream; one row in
16 flushes): NVIDIA-Nemotron-Nano-9B-v2 (128 Mamba heads of 80, state 128, 8 groups) at 256
decoding sequences (163,840 programs, 0.77 GB moved, bf16) and Nemotron-3-Nano-30B-A3B (64
heads of 64, state 128, 8 groups) at 16 sequences (4,096 programs, 20 MB).  Memory-bound:
the floor is reading each row's state once (and writing a flushed one), its ring rows
before its position once, the token's vectors and appends once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_replayssm_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# two launches; per program, dot products over dstate and a replay sum over the window
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")
FP32 = 4


def _positions(d: Mapping[str, int]) -> list[int]:
    """reference.py's `ring_positions`: row i at ring position (7 i + 3) % window; a row at
    window - 1 flushes."""
    return [(7 * i + 3) % d["window"] for i in range(d["seqs"])]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Per row at ring position p: the heads' states read once (and written once on a
    flush); x, dt and the output once; B and C once per group; the ring's p cached x rows
    (per head), dt values (fp32, per head) and B rows (per group) read once; on an
    output-only row the token's x, dt and B appended once.  Per head the fp32 A, D and
    dt_bias; the int32 position and slot and the int8 flush flag a row.  The fp32 B.C
    scratch between the two launches is not counted (a fused kernel needs none)."""
    e = ELEMENT_SIZE[dtype]
    h, m, n, g = d["heads"], d["head_dim"], d["dstate"], d["groups"]
    state = h * m * n * e
    total = 0
    for p in _positions(d):
        flush = p == d["window"] - 1
        total += state * (1 + flush) + (2 * h * m + h + 2 * g * n) * e
        total += p * ((h * m + g * n) * e + h * FP32)
        if not flush:
            total += (h * m + g * n) * e + h * FP32
    return total + h * (FP32 + 2 * e) + d["seqs"] * 9


def flops(d: Mapping[str, int]) -> int:
    """Per row and head: on an output-only row the checkpoint read-out (2 per state
    element), the replay over the p + 1 window tokens (2 per head_dim element and token) and
    its share of the group's B.C dots (2 per dstate element and token); on a flush the
    rebuild's tl.dot (2 per state element and token), the decay and add (2) and the read-out
    (2); the D term (2 per head_dim element).  The decay weights, O(window) a head, are not
    counted."""
    h, m, n, g = d["heads"], d["head_dim"], d["dstate"], d["groups"]
    total = 0
    for p in _positions(d):
        k = p + 1
        if p == d["window"] - 1:
            total += h * m * n * (2 * k + 4)
        else:
            total += h * (2 * m * n + 2 * m * k) + g * 2 * n * k
        total += 2 * h * m
    return total


_make_inputs = _common.forward_make_inputs(
    "vllm_replayssm_decode", "seqs", "heads", "head_dim", "dstate", "groups", "window"
)
_reference = _common.forward_reference("vllm_replayssm_decode")
_baselines = _common.forward_baselines(
    "vllm_replayssm_decode",
    (
        "torch",
        "torch",
        "the same step by torch ops in fp32: the rows' states and rings gathered, both "
        "routes computed for every row and selected, the state and ring scattered back",
        "torch_replayssm_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_replayssm_decode.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "head_dim rows per main-kernel program (the rebuild's tl.dot M); None: vLLM's 16 "
         "off Blackwell (64 on SM10x)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per main-kernel program; None: vLLM's 1"),
    Knob("nf_dstate_tile", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns per step of an output-only row's checkpoint read-out (the steps "
         "unrolled); None: vLLM's 64 off Blackwell (32 on SM10x), capped at dstate"),
    Knob("fl_dstate_tile", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns per step of a flush row's rebuild (the tl.dot N; unrolled); None: "
         "vLLM's 128 off Blackwell (64 on SM10x), capped at dstate"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline stages of the main kernel; None: vLLM's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_replayssm_decode",
    description=(
        "vLLM's ReplaySSM Mamba-2 decode step (v0.34.0, _replayssm_output_only_precompute_"
        "kernel and _replayssm_output_only_kernel): per row and group the window's B.C dots; "
        "per (16 head_dim rows, row, head) the checkpoint state read out under the window's "
        "decay plus the replay of the ring's buffered tokens, the token appended; a full "
        "ring's row rebuilds the state with a tl.dot and stores it"
    ),
    dims=(
        Dim("seqs", "decoding sequences (one token each)", "batch"),
        Dim("heads", "Mamba heads on the rank", "num_heads"),
        Dim("head_dim", "head dimension (state rows per head)", "head_dim"),
        Dim("dstate", "SSM state size (state columns)", "row_len"),
        Dim("groups", "B/C groups on the rank (heads share them)"),
        Dim("window", "the ring's length (--replayssm-buffer-len; a full one flushes)"),
    ),
    trials=(
        Trial(
            "nemotron_nano_9b_v2_decode256",
            {"seqs": 256, "heads": 128, "head_dim": 80, "dstate": 128, "groups": 8, "window": 16},
            "a 256-sequence decode step of an NVIDIA-Nemotron-Nano-9B-v2 Mamba-2 layer "
            "(128 heads of 80, state 128, 8 groups) on one GPU, vLLM's 16-token ring, 16 "
            "rows flushing: 5 x 256 x 128 = 163,840 programs of vLLM's Hopper launch (16 "
            "rows, 1 warp), 0.77 GB moved (bf16)",
        ),
        Trial(
            "nemotron3_nano_decode16",
            {"seqs": 16, "heads": 64, "head_dim": 64, "dstate": 128, "groups": 8, "window": 16},
            "a 16-sequence decode step of a Nemotron-3-Nano-30B-A3B Mamba-2 layer (64 heads "
            "of 64, state 128, 8 groups) on one GPU, one row flushing: 4,096 programs, "
            "20 MB moved (bf16)",
        ),
    ),
    backoff_dim="seqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 sums in another order (the read-out, the replay, the rebuild's dot); the output
    # and a flushed state rounded once, as the reference rounds them
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-4},
    entry_point="replayssm_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
