"""Lightning attention's decode step in vLLM (vLLM v0.34.0, Apache-2.0), as kbopt sees it:
a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py vllm_lightning_decode` and never committed.

Why this one: MiniMax-Text-01 and MiniMax-M1 run seven of every eight layers as lightning
attention, and on every decode step vLLM updates each sequence's linear-attention state
with this kernel: S <- exp(-slope) S + k^T v, o = q S, per sequence and head, the state a
d x d matrix in the layer's cache pool (the model's dtype).  One program per (sequence,
head, 32 state columns) loads the slot, the full fp32 q and k rows and 32 values of v,
forms the outer product in registers, decays and adds the old state block, stores it back
in place and reduces q times it over d.  No tl.dot and no loop: each state block is read
and written once, so it is a memory-bound in-place update whose bytes are all state (at
d = 128 the state is 128 times q, k and v together).  The nearest specs are the set's other
decode-time state updates, `sglang_mamba_state_update` (Mamba2's selective state update:
a d_state-wide state per head dim, with dt, A, B, C and a gated D skip) and
`sglang_gdn_recurrent` (the gated delta rule, whose k S read-back makes the update depend
on the state), and prefill's `vllm_lightning_attn_diag` from the same module; this one is
the plain decayed outer-product accumulation, one fused read-modify-write with no
recurrence inside the kernel.  Both trials are MiniMax-Text-01 at tensor parallelism 8 (8
of its 64 heads per GPU, d = 128, a bf16 state): a decode step of 256 sequences (8,192
programs, 67 MB of state read and written) and one of 8 sequences (256 programs, 2.1 MB).
The floor is reading and writing each live slot's state once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_lightning_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")  # a read-modify-write of the state pool


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each sequence's state (heads x d x d in the dtype) read and written once, fp32 q, k
    and v read once (each program re-reads q and k, counted once), the fp32 output written
    once, the slots and slopes read once."""
    bh = d["seqs"] * d["heads"]
    states = 2 * bh * d["d"] * d["d"] * ELEMENT_SIZE[dtype]
    return states + 4 * 4 * bh * d["d"] + 4 * (d["seqs"] + d["heads"])


def flops(d: Mapping[str, int]) -> int:
    """Per sequence, head and state element: the outer product's multiply, the decay's
    multiply and add, and q's multiply and the sum's add."""
    return 5 * d["seqs"] * d["heads"] * d["d"] * d["d"]


_make_inputs = _common.forward_make_inputs("vllm_lightning_decode", "seqs", "heads", "d")
_reference = _common.forward_reference("vllm_lightning_decode")
_baselines = _common.forward_baselines(
    "vllm_lightning_decode",
    (
        "torch",
        "torch",
        "the same by torch ops: the live slots' states gathered, a batched outer product and "
        "matmul in fp32, scattered back into the pool",
        "torch_lightning_decode",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_lightning_decode.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 8, 16, 32, 64, 128), "tile_n",
         "state columns per program (the grid's third axis is d / block_size; every "
         "program loads the full q and k rows); None: vLLM's 32"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (vLLM passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_lightning_decode",
    description=(
        "vLLM's lightning attention decode step (v0.34.0, _linear_attn_decode_kernel): one "
        "program per (sequence, head, 32 state columns) decays the slot's d x d state, adds "
        "k^T v, stores it back in place and writes q times it, fp32 q, k, v and output"
    ),
    dims=(
        Dim("seqs", "decoding sequences in the step (one token each)", "batch"),
        Dim("heads", "heads on this GPU", "num_heads"),
        Dim("d", "head size (q, k and v alike; a power of two)", "head_dim"),
    ),
    trials=(
        Trial(
            "decode_256_minimax_tp8",
            {"seqs": 256, "heads": 8, "d": 128},
            "a decode step of 256 sequences through a MiniMax-Text-01 lightning layer at "
            "tensor parallelism 8 (8 heads of 128, bf16 state): 8,192 programs, 138 MB moved",
        ),
        Trial(
            "decode_8_minimax_tp8",
            {"seqs": 8, "heads": 8, "d": 128},
            "a decode step of 8 sequences through the same layer: 256 programs, 4.3 MB "
            "moved, a launch-sized grid",
        ),
    ),
    backoff_dim="seqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the new state rounded once to the dtype when stored; o from the fp32 state, sums of d
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="lightning_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
