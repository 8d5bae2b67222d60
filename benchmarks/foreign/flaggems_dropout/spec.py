"""FlagGems' dropout forward (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_dropout` and never committed.

Why this one as the set's random-number kernel: FlagGems replaces aten::native_dropout with
it when it is enabled, so every dropout of a training step goes through it, and LoRA
fine-tuning (PEFT's `lora_dropout`, 0.1 in QLoRA's recipe for 7B to 13B models) drops out
each adapted layer's input before the adapter's down-projection in every forward pass.
One program per 4096 elements: one Philox4x32-10 call on 1024 counters gives four uniforms
per lane, each keeping or dropping one of four 1024-element slices; the program writes y =
x / (1 - p) where kept, 0 elsewhere, and the bool keep mask (for the backward).  The
stream's layout depends on FlagGems' BLOCK, so the block is fixed and the check exact: the
reference recomputes Philox4x32-10 in int64 torch ops from the same seed and offset.  Both
trials are a LoRA fine-tuning step of Llama 3.1 8B at p = 0.1: the input of one attention
projection's adapter for a 512-token sequence (2.1M elements, 512 programs, 10.5 MB moved)
and the input of the MLP's down_proj adapter (14,336 wide) for a micro-batch of 4 x 4096
tokens (235M elements, 57,344 programs, 1.17 GB moved).  The floor is reading x once and
writing y and the mask once; the Philox rounds (about 25 integer operations per element)
are not counted as flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_dropout")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")
MASK_BYTES = 1  # one bool per element


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x read once, y and the keep mask written once."""
    return d["tokens"] * d["hidden"] * (2 * ELEMENT_SIZE[dtype] + MASK_BYTES)


def flops(d: Mapping[str, int]) -> int:
    """Two multiplies per element (the 1 / (1 - p) scale and the mask); the Philox rounds
    are integer work, not counted."""
    return 2 * d["tokens"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("flaggems_dropout", "tokens", "hidden")
_reference = _common.forward_reference("flaggems_dropout")
_baselines = _common.forward_baselines(
    "flaggems_dropout",
    ("torch", "torch", "the same mask and output by torch ops: Philox4x32-10 over the "
     "counters in int64, the uniforms, the compare and the scaled copy", "torch_dropout"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.flaggems_dropout.launcher")


TRITON_KNOBS = (
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16, 32), "warps",
         "warps per program (the 1024 counters of a program spread over them); None: "
         "FlagGems' heuristic, 16 above 1024 elements"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_dropout",
    description=(
        "FlagGems' dropout forward (v5.0.2, dropout_forward_kernel): one program per 4096 "
        "elements draws four uniforms per lane from one Philox4x32-10 call on 1024 counters, "
        "keeps each element above p, and writes y = x / (1 - p) * kept and the bool mask"
    ),
    dims=(
        Dim("tokens", "tokens of the batch (rows of the dropped activations)", "rows"),
        Dim("hidden", "width of the activations (an adapted layer's input)", "row_len"),
    ),
    trials=(
        Trial(
            "lora_attn_input_llama31_8b_seq512",
            {"tokens": 512, "hidden": 4096},
            "LoRA fine-tuning of Llama 3.1 8B (lora_dropout 0.1): the dropout on an "
            "attention projection adapter's input for one 512-token sequence: 2.1M "
            "elements, 512 programs, 10.5 MB moved (bf16)",
        ),
        Trial(
            "lora_down_proj_input_llama31_8b_4x4096",
            {"tokens": 16384, "hidden": 14336},
            "the same on the MLP's down_proj adapter input (14,336 wide) for a micro-batch "
            "of 4 x 4096 tokens: 235M elements, 57,344 programs, 1.17 GB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the mask recomputed from the same Philox stream and each kept value's one fp32
    # product rounded as the kernel rounds it: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="dropout",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
