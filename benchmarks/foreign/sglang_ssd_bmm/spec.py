"""SGLang's Mamba-2 chunk matmul (SGLang v0.5.9, Apache-2.0; adapted there from vLLM and
mamba_ssm), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_ssd_bmm` and never committed.

The first matmul of a Mamba-2 (SSD) layer's chunked prefill: per chunk of tokens and per
group, C B^T over the state size, chunk x chunk in fp32, masked where the two tokens belong
to different packed sequences.  Many small GEMMs (M = N = chunk, K = dstate) in tl.dot
tiles of SGLang's 16 x 16 x 16.  Output: CB (fp32).  The floor is the larger of reading C
and B and writing CB once, and the matmul's flops.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_ssd_bmm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")


def _nchunks(d: Mapping[str, int]) -> int:
    return -(-d["seqlen"] // d["chunk"])


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """C and B read once, the fp32 CB written once, the int32 sequence index read once."""
    tokens = d["batch"] * d["seqlen"]
    cb = d["batch"] * _nchunks(d) * d["ngroups"] * d["chunk"] ** 2
    return 2 * ELEMENT_SIZE[dtype] * tokens * d["ngroups"] * d["dstate"] + 4 * cb + 4 * tokens


def flops(d: Mapping[str, int]) -> int:
    """A chunk x chunk x dstate matmul per (batch, chunk, group)."""
    return 2 * d["batch"] * _nchunks(d) * d["ngroups"] * d["chunk"] ** 2 * d["dstate"]


_make_inputs = _common.forward_make_inputs(
    "sglang_ssd_bmm", "batch", "seqlen", "ngroups", "dstate", "chunk", "seqs"
)
_reference = _common.forward_reference("sglang_ssd_bmm")
_baselines = _common.forward_baselines(
    "sglang_ssd_bmm",
    (
        "torch",
        "torch",
        "the same product by torch's batched matmul in the input dtype, then the sequence mask",
        "torch_chunk_bmm",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_ssd_bmm.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "rows of CB per program (tokens of a chunk); None: the kernel's default 16"),
    Knob("block_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "columns of CB per program; None: the kernel's default 16"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "state-size depth per tl.dot step; None: the kernel's default 16"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the state-size loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_ssd_bmm",
    description=(
        "SGLang's Mamba-2 chunk matmul (v0.5.9): C B^T per chunk and group over the state "
        "size in 16 x 16 x 16 tl.dot tiles, packed sequences masked, bf16 in, fp32 out"
    ),
    dims=(
        Dim("batch", "batch rows (SGLang packs a prefill into one)", "batch"),
        Dim("seqlen", "tokens per batch row (packed sequences)"),
        Dim("ngroups", "B/C groups (heads share them)"),
        Dim("dstate", "SSM state size (the matmul's depth)"),
        Dim("chunk", "tokens per SSD chunk (CB is chunk x chunk)"),
        Dim("seqs", "sequences packed along seqlen (equal lengths)"),
    ),
    trials=(
        Trial(
            "prefill_nemotron_h",
            {"batch": 1, "seqlen": 8192, "ngroups": 8, "dstate": 128, "chunk": 128, "seqs": 1},
            "an 8k-token prompt through a Nemotron-H Mamba-2 layer (8 groups, state 128, "
            "128-token chunks): 512 matmuls of 128 x 128 x 128, 2.1 GFLOP, 67 MB moved",
        ),
        Trial(
            "packed_prompts_mamba2",
            {"batch": 1, "seqlen": 4096, "ngroups": 1, "dstate": 128, "chunk": 256, "seqs": 8},
            "eight 512-token prompts packed through a Mamba-2 2.7B layer (one group, 256-token "
            "chunks): 16 matmuls of 256 x 256 x 128 in 4096 16 x 16 tiles, 6 MB moved",
        ),
    ),
    backoff_dim="seqlen",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over dstate terms; fp32 inputs go through tf32 tl.dot on the GPU
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 2e-3},
    entry_point="chunk_bmm",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
