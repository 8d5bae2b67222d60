"""vLLM's fused sigmoid gate (vLLM v0.34.0, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by `scripts/fetch_third_party.py
vllm_sigmoid_gate_mul` and never committed.

Why this one as the set's attention output gate: Qwen3-Next's and Qwen3.5's gated full
attention multiplies each head's attention output by the sigmoid of a gate projected with
the query, attn * sigmoid(gate), before o_proj; vLLM's Qwen3.5 model (its NVIDIA path sets
`use_fused_output_gate` on every full-attention layer's Qwen3NextAttention) runs this kernel
there instead of torch's two launches.  One program per token and 1024 columns loads the
output and the gate, computes the sigmoid and the product in fp32 and stores the result in
the model's dtype: memory-bound, one exp and one division per element.  Both trials use
Qwen3-Next-80B-A3B's attention (16 query heads of 256 columns: 4096 per token, one GPU): a
128-token decode step (512 programs, 3.1 MB moved) and an 8192-token prefill chunk (32,768
programs, 201 MB moved).  The floor is reading the output and the gate once and writing
the gated output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_sigmoid_gate_mul")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The attention output and the gate read once, the gated output written once."""
    return 3 * d["tokens"] * d["hidden"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """Per element: the sigmoid's negation, exp, add and division, and the product (five)."""
    return 5 * d["tokens"] * d["hidden"]


_make_inputs = _common.forward_make_inputs("vllm_sigmoid_gate_mul", "tokens", "hidden")
_reference = _common.forward_reference("vllm_sigmoid_gate_mul")
_baselines = _common.forward_baselines(
    "vllm_sigmoid_gate_mul",
    (
        "torch",
        "torch",
        "vLLM's unfused path, attn * torch.sigmoid(gate) (two launches)",
        "torch_sigmoid_gate_mul",
    ),
)


_launch_info = _common.triton_launch_info("foreign.vllm_sigmoid_gate_mul.launcher")


TRITON_KNOBS = (
    Knob("block", "int", (None, 256, 512, 1024, 2048, 4096), "tile_n",
         "columns per program; None: vLLM's choice for the hidden size, 1024 at 4096"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: vLLM's choice for the hidden size, 4 at 4096"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_sigmoid_gate_mul",
    description=(
        "vLLM's fused sigmoid gate (v0.34.0, _fused_sigmoid_gate_mul_kernel), the gated "
        "attention's attn * sigmoid(gate) before o_proj: one program per token and 1024 "
        "columns, fp32 sigmoid and product"
    ),
    dims=(
        Dim("tokens", "tokens in the batch", "rows"),
        Dim("hidden", "attention output columns per token (query heads x head dim)", "row_len"),
    ),
    trials=(
        Trial(
            "qwen3_next_80b_attn_gate_decode128",
            {"tokens": 128, "hidden": 4096},
            "the output gate of a gated full-attention layer of Qwen3-Next-80B-A3B "
            "(16 query heads x 256, one GPU) in a 128-token decode step: 512 programs, "
            "3.1 MB moved (bf16)",
        ),
        Trial(
            "qwen3_next_80b_attn_gate_prefill8k",
            {"tokens": 8192, "hidden": 4096},
            "the same in an 8192-token prefill chunk (vLLM's batched-token budget): "
            "32,768 programs, 201 MB moved (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sigmoid and product, rounded once to the dtype as the fp64 reference is
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="sigmoid_gate_mul",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
