"""SGLang's sparse-linear attention, its sparse branch (SGLang v0.5.9, Apache-2.0; the SLA
and TurboDiffusion authors' kernel), as kbopt sees it: a kernel nobody here wrote, fetched
into the git-ignored third_party/ by `scripts/fetch_third_party.py sglang_sla_attention`
and never committed.

Why this one as the set's block-sparse attention: SGLang's diffusion runtime runs it in
every attention layer of a video diffusion transformer (Wan 2.1 with TurboDiffusion's SLA
weights) when the SLA_ATTN backend is chosen: each 128-query block attends only the 10% of
64-key blocks that the pooled block scores rank highest, the rest going to a linear
attention in torch.  One program per query block and head walks its LUT row: a gathered
64 x head_dim key block per step, QK^T in tl.dot, an online softmax in fp32, PV in tl.dot.
Unlike dense flash attention, the key blocks come in a data-dependent order from anywhere
in the sequence, so the K and V reads are gathers whose reuse across programs depends on
the map.  Compute-bound at a 128-wide head.  Trials (one sample, bf16, head_dim 128, the
map's 10%): Wan 2.1 T2V 1.3B on a 480p 17-frame clip (5 x 30 x 52 = 7800 latent tokens, 12
heads: 732 programs of 12 steps) and Wan 2.1 14B on a 720p 81-frame clip (21 x 45 x 80 =
75,600 tokens, 40 heads: 23,640 programs of 118 steps).  The floor is the larger of the
tensor-core time for 4 x tokens x topk x 64 x head_dim flops per head and reading q, k and v
once and writing the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_sla_attention")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("attention", "online-softmax", "compute-bound")
BLKQ, BLKK = 128, 64  # the block map's query and key blocks (SGLang's defaults)


def flops(d: Mapping[str, int]) -> int:
    """QK^T and PV over each query's kept keys (topk blocks of 64)."""
    return 4 * d["heads"] * d["tokens"] * d["topk"] * BLKK * d["head_dim"]


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """q, k and v read once and the output written once in the dtype, the LUT (int64) read
    once, the fp32 log-sum-exp written once."""
    h, t = d["heads"], d["tokens"]
    mq = (t + BLKQ - 1) // BLKQ
    return 4 * h * t * d["head_dim"] * ELEMENT_SIZE[dtype] + 8 * h * mq * d["topk"] + 4 * h * t


_make_inputs = _common.forward_make_inputs(
    "sglang_sla_attention", "heads", "tokens", "head_dim", "topk"
)
_reference = _common.forward_reference("sglang_sla_attention")
_baselines = _common.forward_baselines(
    "sglang_sla_attention",
    (
        "torch",
        "torch",
        "the same by torch per head: the kept key and value blocks gathered by indexing, "
        "then scaled_dot_product_attention",
        "torch_sla_attention",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_sla_attention.launcher")


TRITON_KNOBS = (
    Knob("block_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "query rows per program (dividing the map's 128-query block; its LUT row repeated "
         "per sub-block); None: SGLang's 128"),
    Knob("block_n", "int", (None, 16, 32, 64), "kv_tile",
         "key rows per loop step (dividing the map's 64-key block; each kept block split "
         "into 64 / block_n steps); None: SGLang's 64"),
    Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps",
         "warps per program; None: SGLang's 8 for a 128-wide head (4 for 64)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the LUT loop; None: SGLang's 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_sla_attention",
    description=(
        "SGLang's sparse-linear attention, sparse branch (v0.5.9, _attn_fwd): block-sparse "
        "flash attention, one program per 128-query block and head over the 64-key blocks "
        "its LUT keeps, QK^T and PV in tl.dot tiles, bf16"
    ),
    dims=(
        Dim("heads", "attention heads (one sample)", "num_heads"),
        Dim("tokens", "latent tokens (queries, and the keys they may attend)", "query_len"),
        Dim("head_dim", "head dimension (64 or 128 in SGLang)", "head_dim"),
        Dim("topk", "64-key blocks kept per 128-query block (10% of them in SGLang)"),
    ),
    trials=(
        Trial(
            "wan21_1_3b_480p_17_frames",
            {"heads": 12, "tokens": 7800, "head_dim": 128, "topk": 12},
            "Wan 2.1 T2V 1.3B (12 heads of 128) on a 480p 17-frame clip: 5 x 30 x 52 = 7800 "
            "latent tokens, 12 of 122 key blocks kept (SGLang's topk_ratio 0.1): 732 "
            "programs of 12 steps, 37 GFLOP",
        ),
        Trial(
            "wan21_14b_720p_81_frames",
            {"heads": 40, "tokens": 75600, "head_dim": 128, "topk": 118},
            "Wan 2.1 T2V 14B (40 heads of 128) on a 720p 81-frame clip: 21 x 45 x 80 = "
            "75,600 latent tokens, 118 of 1182 key blocks kept: 23,640 programs of 118 "
            "steps, 11.7 TFLOP",
        ),
    ),
    backoff_dim="heads",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation and softmax; P is rounded to the input dtype before PV; fp32 inputs
    # go through TF32 tensor cores on the GPU
    tolerances={"bfloat16": 2e-2, "float16": 3e-3, "float32": 3e-3},
    entry_point="sla_attention",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
