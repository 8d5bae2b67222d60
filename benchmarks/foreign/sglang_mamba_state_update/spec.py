"""SGLang's Mamba-2 decode-step state update (SGLang v0.5.9, Apache-2.0; adapted there from
vLLM and mamba_ssm's selective_state_update), as kbopt sees it: a kernel nobody here wrote,
fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py sglang_mamba_ssm`
and never committed.

Every decode token of a Mamba-2 layer (Nemotron-H, Falcon-H1, Mamba-2) reads its sequence's
dim x dstate state per head, decays and updates it, writes it back in place and reads out
one output row.  Outputs: the gated output (bf16) and the updated state (bf16, in place).
No matmul: the floor is reading and writing the state once, plus the token's small vectors.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_mamba_ssm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "reduction", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The state read and written; x, z and the output; dt; B and C; three fp32 per head."""
    e = ELEMENT_SIZE[dtype]
    bh = d["batch"] * d["nheads"]
    state = 2 * bh * d["dim"] * d["dstate"]
    vectors = 3 * bh * d["dim"] + bh + 2 * d["batch"] * d["ngroups"] * d["dstate"]
    return e * (state + vectors) + 3 * 4 * d["nheads"]


_make_inputs = _common.forward_make_inputs(
    "sglang_mamba_state_update", "batch", "nheads", "dim", "dstate", "ngroups"
)
_reference = _common.forward_reference("sglang_mamba_state_update")
_baselines = _common.forward_baselines(
    "sglang_mamba_state_update",
    (
        "torch",
        "torch",
        "the same step in torch's element-wise kernels (fp32), the state copied back in place",
        "torch_state_update",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_mamba_state_update.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 1, 2, 4, 8, 16, 32, 64), "rows_per_program",
         "rows of a head's dim (each a dstate-long state row) per program; None: SGLang's "
         "by dstate (4 at 128)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's by dstate (4 at 128, 8 above)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_mamba_state_update",
    description=(
        "SGLang's Mamba-2 decode-step SSM state update (v0.5.9): the dim x dstate state per "
        "(sequence, head) decayed, updated in place and read out, 4 state rows per program, bf16"
    ),
    dims=(
        Dim("batch", "sequences in the decode step", "batch"),
        Dim("nheads", "SSM heads", "num_heads"),
        Dim("dim", "head dimension (state rows per head)", "head_dim"),
        Dim("dstate", "SSM state size (state columns)", "row_len"),
        Dim("ngroups", "B/C groups (heads share them)"),
    ),
    trials=(
        Trial(
            "decode_nemotron_h",
            {"batch": 64, "nheads": 128, "dim": 64, "dstate": 128, "ngroups": 8},
            "a 64-sequence decode step of a Nemotron-H Mamba-2 layer (128 heads of 64, state "
            "128): 268 MB of bf16 state read and written by 131072 four-row programs",
        ),
        Trial(
            "decode_small_batch",
            {"batch": 8, "nheads": 128, "dim": 64, "dstate": 128, "ngroups": 8},
            "an 8-sequence decode step of the same layer: 34 MB by 16384 programs",
        ),
    ),
    backoff_dim="batch",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=lambda d: 0,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 arithmetic; the state and the output are rounded once to the input dtype
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="state_update",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
