"""SGLang's Mamba-2 dt cumsum (SGLang v0.5.9, Apache-2.0; adapted there from vLLM and
mamba_ssm), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_ssd_chunk_cumsum` and never committed.

Why this one: the first kernel of every Mamba-2 layer's SSD prefill on SGLang's CUDA path
(Nemotron-H, Falcon-H1, Granite 4.0-H, Mamba-2 through `MambaMixer2`), which makes the two
fp32 tensors all four later SSD kernels read.  Per chunk and block of 16 heads: each token's
dt (a projection column per head) plus the head's bias, softplus below 20, the clamp, stored
transposed to chunk-contiguous rows; times the head's A and a `tl.cumsum` along the chunk,
stored too.  No loop and no tl.dot: the whole chunk is one tile, read a few heads per token
(32 bytes of each token's 256 in bf16), written as two fp32 rows per head, so the writes are
four times the reads and the grid is chunks x heads / 16, a few hundred programs even for an
8k prefill.  The nearest spec is `sglang_gdn_cumsum`, FLA's chunk-local cumsum of the gated
delta rule's gates: the same within-chunk scan, but per head over a [chunk] vector of
already-made fp32 log-gates in token order, written in place of the input layout; here the
scan follows an element-wise softplus of a biased model-dtype input, tiles heads by 16, and
transposes [tokens, heads] into [heads, chunks, chunk] for two outputs.  `sglang_ssd_chunk_state`
and `sglang_ssd_bmm` are the SSD kernels after it (tl.dot products over the chunk).  Trials:
an 8192-token prefill through a Nemotron-H 8B Mamba-2 layer (128 heads, 128-token chunks),
and two 256-token prompts packed through a Mamba-2 2.7B layer (80 heads, 256-token chunks, a
launch-sized grid).  Outputs: dA_cumsum and dt, fp32 [batch, nheads, nchunks, chunk].  The
floor is reading dt once and writing the two outputs once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ssd_chunk_cumsum")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("elementwise", "reduction", "memory-bound")


def _padded(d: Mapping[str, int]) -> int:
    return -(-d["seqlen"] // d["chunk"]) * d["chunk"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """dt read once (the spec's dtype), A (fp32) and dt_bias read once, the two fp32
    outputs [batch, nheads, nchunks, chunk] written once (the padded tail included)."""
    es = ELEMENT_SIZE[dtype]
    return (
        es * d["batch"] * d["seqlen"] * d["nheads"]
        + (4 + es) * d["nheads"]
        + 2 * 4 * d["batch"] * d["nheads"] * _padded(d)
    )


def flops(d: Mapping[str, int]) -> int:
    """The bias add, the product with A and the scan's add per (token, head); softplus and
    the clamp not counted."""
    return 3 * d["batch"] * d["seqlen"] * d["nheads"]


_make_inputs = _common.forward_make_inputs(
    "sglang_ssd_chunk_cumsum", "batch", "seqlen", "nheads", "chunk"
)
_reference = _common.forward_reference("sglang_ssd_chunk_cumsum")
_baselines = _common.forward_baselines(
    "sglang_ssd_chunk_cumsum",
    (
        "torch",
        "torch",
        "the same by torch's kernels in fp32: bias add, softplus (threshold 20) and clamp, "
        "padded and transposed to chunk rows, times A, torch.cumsum along the chunk",
        "torch_chunk_cumsum",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ssd_chunk_cumsum.launcher")


TRITON_KNOBS = (
    Knob("block_h", "int", (None, 1, 2, 4, 8, 16, 32, 64), "rows_per_program",
         "heads per program (each a chunk-long row of the tile); None: the kernel's "
         "default 16 (SGLang passes none)"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ssd_chunk_cumsum",
    description=(
        "SGLang's Mamba-2 dt cumsum (v0.5.9, the SSD prefill's first kernel): per chunk and "
        "16 heads, dt plus bias, softplus and clamp stored transposed to chunk rows, then "
        "times A and a tl.cumsum along the chunk; bf16 dt in, two fp32 outputs"
    ),
    dims=(
        Dim("batch", "batch rows (SGLang packs a prefill into one)", "batch"),
        Dim("seqlen", "tokens per batch row (packed prompts)", "row_len"),
        Dim("nheads", "SSM heads", "num_heads"),
        Dim("chunk", "tokens per SSD chunk (the scan's length)"),
    ),
    trials=(
        Trial(
            "prefill_nemotron_h_8b",
            {"batch": 1, "seqlen": 8192, "nheads": 128, "chunk": 128},
            "an 8192-token prefill through a Nemotron-H 8B Mamba-2 layer (128 heads, "
            "128-token chunks): 64 chunks x 8 head blocks = 512 programs, 10.5 MB moved "
            "(8.4 MB of it the two fp32 outputs)",
        ),
        Trial(
            "packed_prompts_mamba2_2_7b",
            {"batch": 1, "seqlen": 512, "nheads": 80, "chunk": 256},
            "two 256-token prompts packed through a Mamba-2 2.7B layer (80 heads, 256-token "
            "chunks): 2 chunks x 5 head blocks = 10 programs, 0.41 MB moved",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 throughout from the same rounded inputs: softplus as log(exp + 1) against log1p,
    # and the scan's order
    tolerances={"bfloat16": 1e-4, "float16": 1e-4, "float32": 1e-4},
    entry_point="chunk_cumsum",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
