"""SGLang's segmented linear attention, decode (SGLang v0.5.9, Apache-2.0; from Ant Group's
flood), as kbopt sees it: a kernel nobody here wrote, fetched into the git-ignored
third_party/ by `scripts/fetch_third_party.py sglang_seg_la_decode` and never committed.

Why this one: the Ling/Ring linear models (`bailing_moe_linear`: Ring-mini-linear-2.0,
Ring-flash-linear-2.0) run their linear-attention layers through SGLang's hybrid linear
backend, whose default `linear_backend` is seg_la in decode as in prefill, and every decode
step launches this kernel once per linear layer (inside SGLang's CUDA graph).  Unlike the
prefill kernel of `sglang_seg_la` (a serial walk of tl.dots over a request's tokens), a
decode program has one token: it loads a K_SPLIT x V_SPLIT tile of its request's fp32 state
for one head, decays it by the head's exp(-slope), adds k^T v as an outer product, takes the
column sums of q times the tile as its slice of the output and stores the tile back in
place: a streaming read-modify-write of the state pool with one column reduction, no tensor
cores, no loop.  SGLang keeps the whole K side in one program (K_SPLIT 128) and picks the V
split, warps and stages by batch size (32 columns, 2 stages up to 128 rows; 64 columns, 3
stages above), so the grid is rows x heads x 4 (or 2) programs of 16,384 (or 32,768) state
values each.  A padded row of the CUDA graph (slot -1) returns at once.  Both trials are a
layer of 16 heads of 128 (Ring-mini-linear-2.0's attention shape, as its Ling-mini-2.0 base
declares; seg_la has no GQA) at TP 1: a 250-request step in the 256 graph and a 21-request
step in the 24 graph.  The floor is reading each live request's state once and writing it
once, plus q, k, v and the output once per row.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_seg_la_decode")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a read-modify-write of each request's state tile with one column sum over the key rows
CONTEXTS = ("reduction", "elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each live request's fp32 state (head_dim x head_dim a head) read and written once (a
    padded row has none and loads nothing); per live row q, k and v read and the output
    written once in the dtype (SGLang's K split of 128: the partial is the output, no sum);
    the int32 slots (every row) and the fp32 slopes once."""
    e = ELEMENT_SIZE[dtype]
    h, hd = d["heads"], d["head_dim"]
    state = 2 * 4 * d["reqs"] * h * hd * hd
    vectors = 4 * e * d["reqs"] * h * hd
    return state + vectors + 4 * (d["reqs"] + d["pad"]) + 4 * h


def flops(d: Mapping[str, int]) -> int:
    """Per state element of every live row: the decay, the outer product's multiply and its
    add, and q's multiply-add of the read-out: 5 FLOPs.  The slope's exp and q's scale are
    not counted."""
    return 5 * d["reqs"] * d["heads"] * d["head_dim"] ** 2


def shape_metrics(d: Mapping[str, int]) -> dict[str, float]:
    """The row a program reduces: each of its state tile's columns is summed over the key
    rows of q times the tile, all head_dim of them at SGLang's K split of 128."""
    return {"row_len": float(d["head_dim"])}


_make_inputs = _common.forward_make_inputs(
    "sglang_seg_la_decode", "reqs", "pad", "heads", "head_dim"
)
_reference = _common.forward_reference("sglang_seg_la_decode")
_baselines = _common.forward_baselines(
    "sglang_seg_la_decode",
    ("torch", "torch", "the same step by torch ops in fp32: the live slots gathered, decayed, "
     "updated and read out, the states scattered back into the pool", "torch_seg_la_decode"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_seg_la_decode.launcher")


TRITON_KNOBS = (
    Knob("k_split", "int", (None, 16, 32, 64, 128), "tile_k",
         "state rows (head_dim's K side) per program; head_dim / k_split partial outputs "
         "are summed by torch afterwards (none at 128); None: SGLang's 128"),
    Knob("v_split", "int", (None, 16, 32, 64, 128), "tile_n",
         "state columns (the V side) per program; None: SGLang's 32 up to 128 rows, 64 "
         "above"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: SGLang's 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_seg_la_decode",
    description=(
        "SGLang's segmented linear attention decode step (v0.5.9, Ling/Ring linear models, "
        "seg_la_d_kernel as seg_la_fwd launches it): one program per request, head and "
        "128 x 32 (or 128 x 64) tile of the fp32 state decays it by the head's slope, adds "
        "k^T v, reads out q S over the 128 key rows and stores the tile back in place"
    ),
    dims=(
        Dim("reqs", "live decoding requests (one token each, a state slot each)", "batch"),
        Dim("pad", "rows padded to SGLang's CUDA-graph size (slot -1: nothing read or stored)"),
        Dim("heads", "linear-attention heads (q, k and v alike)", "num_heads"),
        Dim("head_dim", "head size (the state is head_dim x head_dim)", "head_dim"),
    ),
    # A large decode batch first (above 128 rows: SGLang's 64-column V split and 3 stages),
    # then a latency-bound one at a CUDA-graph size with padding (up to 128 rows: 32 columns,
    # 2 stages; SGLang's default capture sizes run 1, 2, 4, 8, 12, then steps of 8 to 256).
    trials=(
        Trial(
            "decode_250_ring_mini_linear",
            {"reqs": 250, "pad": 6, "heads": 16, "head_dim": 128},
            "a 250-request decode step of a Ring-mini-linear-2.0 linear-attention layer (16 "
            "heads of 128, TP 1) in SGLang's 256-request CUDA graph: 8,192 programs (256 rows "
            "x 16 heads x 2 tiles of 128 x 64), 192 of them on the 6 padded rows; 262 MB of "
            "fp32 state read and written back in place, 528 MB moved (bf16)",
        ),
        Trial(
            "decode_21_ring_mini_linear",
            {"reqs": 21, "pad": 3, "heads": 16, "head_dim": 128},
            "a 21-request decode step of the same layer in SGLang's 24-request CUDA graph: "
            "1,536 programs (24 rows x 16 heads x 4 tiles of 128 x 32), 192 of them on the 3 "
            "padded rows; 22 MB of state read and written back, 44.4 MB moved (bf16)",
        ),
    ),
    backoff_dim="reqs",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    shape_metrics=shape_metrics,
    # fp32 state and arithmetic; the output rounded once to the dtype (a K split below 128
    # rounds each partial before torch sums them), the state kept fp32
    tolerances={"bfloat16": 2e-2, "float16": 5e-3, "float32": 1e-4},
    entry_point="seg_la_decode",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
