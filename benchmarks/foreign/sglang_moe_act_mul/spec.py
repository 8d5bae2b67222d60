"""SGLang's expert-filtered MoE activation and multiply (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_moe_act_mul` and never committed.

Why this one: the launch between the two grouped GEMMs of every MoE layer on SGLang's
Triton MoE runner once the layer is expert-parallel (each rank holding experts / ep of the
experts, as Qwen3-235B-A22B or Mixtral are served with --ep-size): SGLang's CUDA
silu_and_mul cannot skip rows, so the runner calls this Triton kernel, one program per
routing slot, which returns at once when the slot's expert lives on another rank and
otherwise walks the [2 x inter] gate/up row 512 columns a step (silu in fp32, rounded to
the dtype, times up).  A memory-bound row-wise elementwise pass whose grid is mostly empty
programs at high expert parallelism (7 in 8 at EP 8): the ids are read by every program,
the rows only by the live ones.  Output: [tokens x topk, inter] in the input dtype.  The
floor is the live rows' gate/up read once and their products written once, plus one int32
expert id per slot.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_moe_act_mul")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")
ID_BYTES = 4  # topk_ids are int32


def live_rows(d: Mapping[str, int]) -> int:
    """Routing slots that name one of this rank's experts: reference.make_inputs draws
    exactly tokens x topk // ep of them."""
    return d["tokens"] * d["topk"] // d["ep"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The live rows' [2 x inter] gate/up values read once and their [inter] products
    written once, in the spec's dtype, plus one int32 expert id read per slot (every
    program, live or not); the rows of other ranks' experts are neither read nor written."""
    rows = d["tokens"] * d["topk"]
    return ELEMENT_SIZE[dtype] * live_rows(d) * 3 * d["inter"] + ID_BYTES * rows


def flops(d: Mapping[str, int]) -> int:
    """Per live output element: silu's negate, exp, add, divide and multiply (x * sigmoid(x),
    counted as 4 plus the exp) and the multiply by up, 6 in all; skipped rows none."""
    return 6 * live_rows(d) * d["inter"]


_make_inputs = _common.forward_make_inputs(
    "sglang_moe_act_mul", "tokens", "topk", "experts", "ep", "inter"
)
_reference = _common.forward_reference("sglang_moe_act_mul")
_baselines = _common.forward_baselines(
    "sglang_moe_act_mul",
    (
        "torch",
        "torch",
        "silu of the gate half times the up half in the dtype over every row, then a mask "
        "multiply zeroing the rows of other ranks' experts",
        "torch_act_mul",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_moe_act_mul.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096), "tile_n",
         "inter columns per loop step of a row's program; None: SGLang's 512"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the column loop (a tl.range); None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_moe_act_mul",
    description=(
        "SGLang's expert-filtered MoE SiLU-and-mul (act_and_mul_kernel, v0.5.9): one program "
        "per routing slot returns when the slot's expert is on another rank, else walks the "
        "gate/up row 512 columns a step, silu(gate) * up, bf16 in and out"
    ),
    dims=(
        Dim("tokens", "tokens in the step (decode: one per sequence)"),
        Dim("topk", "experts per token (one gate/up row and one program per slot)"),
        Dim("experts", "routed experts of the model (all ranks)"),
        Dim("ep", "expert-parallel ranks (this rank keeps experts / ep and 1 / ep of the rows)"),
        Dim("inter", "the MoE intermediate size (output columns; the row is twice it)", "row_len"),
    ),
    trials=(
        Trial(
            "prefill_qwen3_235b_ep8",
            {"tokens": 4096, "topk": 8, "experts": 128, "ep": 8, "inter": 1536},
            "a 4096-token prefill chunk of Qwen3-235B-A22B at EP 8 (top-8 of 128 experts, 16 "
            "a rank, moe intermediate 1536 unsplit): 32768 programs of which 4096 live, each "
            "3 column steps; 37.9 MB moved",
        ),
        Trial(
            "decode_mixtral_8x7b_ep2",
            {"tokens": 64, "topk": 2, "experts": 8, "ep": 2, "inter": 14336},
            "a 64-sequence decode step of Mixtral-8x7B at EP 2 (top-2 of 8 experts, 4 a rank, "
            "intermediate 14336): 128 programs of which 64 live, each 28 column steps; 5.5 MB "
            "moved",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    shape_metrics=lambda d: {"rows": d["tokens"] * d["topk"]},
    # silu in fp32 rounded once to the dtype, then one product in the dtype
    tolerances={"bfloat16": 2e-2, "float16": 4e-3, "float32": 1e-5},
    entry_point="moe_act_mul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
