"""vLLM's Mamba-2 chunk scan (vLLM v0.34.0, Apache-2.0; Tri Dao and Albert Gu's kernel as
vLLM adapted it), as kbopt sees it: a kernel nobody here wrote, fetched into the
git-ignored third_party/ by `scripts/fetch_third_party.py vllm_ssd_chunk_scan
vllm_mamba_fast_exp` and never committed.

Why this one: the set has the SSD's C B^T (`sglang_ssd_bmm`) and its state passing, but
never the kernel that makes the SSD's output, which joins two products of different
shapes in one accumulator: each output tile is C's rows times the state entering the chunk
(one tl.dot over d_state, a read of a large [head_dim, d_state] state per chunk and head)
plus the causal, decayed and dt-scaled C B^T tile times x (tl.dot steps up to the
diagonal), plus the D skip.  vLLM's Mamba-2 prefill (`mamba_chunk_scan_combined`, last of
its five kernels) runs it in every Mamba layer of a hybrid model such as NVIDIA's
Nemotron-H.  One program per 32 x 32 output tile, chunk and head (8 warps, 2 stages), so
the grid is 8 programs per chunk and head at a 128-token chunk and head_dim 64; every
program re-reads its chunk's C rows and state slice, and the diagonal programs walk more
causal steps than the first.  Both trials are Nemotron-H 8B's Mamba layers (128 heads of
head_dim 64, 8 groups, d_state 128, 128-token chunks) in vLLM's chunked prefill with
cached initial states: four 500-token prompts (4 chunks each, the last of 116 tokens:
16,384 programs, 109 MB moved, 6.3 GFLOP) and four 8000-token prompts (63 chunks each, the
last of 64: 258,048 programs, 1.74 GB moved, 101 GFLOP).  The floor is reading x, C, the
decays, the lower triangles of cb and every state once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "vllm_ssd_chunk_scan", "vllm_mamba_fast_exp")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("gemm", "grouped-gemm")  # per-chunk products; the state reads weigh on the floor


def _chunks(d: Mapping[str, int]) -> tuple[int, int]:
    """(chunks, the sum over chunks of L * (L + 1)) for the chunk lengths L."""
    full, rest = divmod(d["seq_len"], d["chunk_size"])
    per_seq = full + (1 if rest else 0)
    tri = full * d["chunk_size"] * (d["chunk_size"] + 1) + rest * (rest + 1)
    return d["seqs"] * per_seq, d["seqs"] * tri


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x, C and the states (each chunk reads its predecessor's or the initial state: as
    many as chunks) read once in the dtype, the fp32 lower triangles of cb and the fp32 dt
    and decays read once, the output written once in the dtype."""
    e = ELEMENT_SIZE[dtype]
    chunks, tri = _chunks(d)
    tokens = d["seqs"] * d["seq_len"]
    hp = d["heads"] * d["head_dim"]
    return (
        2 * tokens * hp * e
        + tokens * d["groups"] * d["d_state"] * e
        + chunks * hp * d["d_state"] * e
        + d["groups"] * tri // 2 * 4
        + 2 * d["heads"] * chunks * d["chunk_size"] * 4
    )


def flops(d: Mapping[str, int]) -> int:
    """A multiply and an add per term of C h_prev (d_state per output element) and of the
    causal products (j <= t within the chunk)."""
    _, tri = _chunks(d)
    tokens = d["seqs"] * d["seq_len"]
    hp = d["heads"] * d["head_dim"]
    return 2 * tokens * hp * d["d_state"] + tri * hp


_make_inputs = _common.forward_make_inputs(
    "vllm_ssd_chunk_scan", "seqs", "seq_len", "heads", "head_dim", "groups", "d_state",
    "chunk_size",
)  # fmt: skip
_reference = _common.forward_reference("vllm_ssd_chunk_scan")
_baselines = _common.forward_baselines(
    "vllm_ssd_chunk_scan",
    ("torch", "torch", "the same chunk loop in fp32 torch ops (einsums per chunk)",
     "torch_chunk_scan"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.vllm_ssd_chunk_scan.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "output rows (tokens of the chunk) per tile; None: vLLM's first config, 32"),
    Knob("block_n", "int", (None, 16, 32, 64), "tile_n",
         "output columns (head_dim) per tile; None: vLLM's first config, 32 (no 128: "
         "head_dim is 64, and 128 x 128 x 128 with 2 warps took 44 s to compile for sm_90, "
         "spilling 12.6 KB to the stack)"),
    Knob("block_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "tokens per step of the causal C B^T x loop; None: vLLM's first config, 32"),
    Knob("num_warps", "int", (None, 2, 4, 8), "warps",
         "warps per program; None: vLLM's first config, 8"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipelining stages of the causal loop; None: vLLM's first config, 2 (the "
         "launcher refuses vLLM's sm90 race: stages > 1, warps 4 or 8, block_m 64 or 128)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="vllm_ssd_chunk_scan",
    description=(
        "vLLM's Mamba-2 chunk scan (v0.34.0, _chunk_scan_fwd_kernel): one program per "
        "32 x 32 output tile, chunk and head adds C h_prev (one tl.dot over d_state) and "
        "the causal decayed C B^T x (32-token tl.dot steps) and D x"
    ),
    dims=(
        Dim("seqs", "prefill sequences in the batch"),
        Dim("seq_len", "tokens per sequence"),
        Dim("heads", "Mamba heads"),
        Dim("head_dim", "channels per head (x's and the output's last dimension)"),
        Dim("groups", "B / C groups (heads / groups heads share one)"),
        Dim("d_state", "SSM state size (C's last dimension)"),
        Dim("chunk_size", "tokens per chunk (a power of two)"),
    ),
    trials=(
        Trial(
            "nemotron_h_8b_prefill_4x500",
            {
                "seqs": 4,
                "seq_len": 500,
                "heads": 128,
                "head_dim": 64,
                "groups": 8,
                "d_state": 128,
                "chunk_size": 128,
            },
            "Nemotron-H 8B's Mamba-2 layer (128 heads of head_dim 64, 8 groups, d_state "
            "128, chunk 128) in vLLM's chunked prefill from cached states: four 500-token "
            "prompts (4 chunks each, the last partial), 16,384 programs, 109 MB moved (bf16)",
        ),
        Trial(
            "nemotron_h_8b_prefill_4x8000",
            {
                "seqs": 4,
                "seq_len": 8000,
                "heads": 128,
                "head_dim": 64,
                "groups": 8,
                "d_state": 128,
                "chunk_size": 128,
            },
            "the same for four 8000-token prompts (63 chunks each, the last of 64 tokens): "
            "258,048 programs, 1.74 GB moved (bf16)",
        ),
    ),
    backoff_dim="seq_len",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # the decayed C B^T weights are cast to x's dtype before the tl.dot, sums of up to 256
    # terms in fp32; fp32 tl.dot is tf32 on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 5e-3},
    entry_point="chunk_scan",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
