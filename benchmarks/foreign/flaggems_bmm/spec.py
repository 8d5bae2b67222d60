"""FlagGems' batched GEMM (FlagGems v5.0.2, Apache-2.0), as kbopt sees it: a kernel nobody
here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py flaggems_bmm` and never committed.

Why this one: FlagGems replaces aten::bmm and aten::bmm.out with this kernel when it is
enabled (`flag_gems.enable()`, as FlagGems' vLLM plugin serves), and vLLM's MLA decode
calls `torch.bmm(x, self.W_UV, out=out.transpose(0, 1))` in `_v_up_proj` on every decode
step of every DeepSeek-V3 layer: the attention output in the compressed latent space,
[heads, tokens, 512] as a transposed view (rows heads x 512 elements apart), times each
head's value up-projection [512, 128], written through the transposed view of the o_proj's
[tokens, heads x 128] input.  The set's other bmm (`sglang_bi_bmm`) is SGLang's
batch-invariant persistent kernel on the query side (K = 128); this is FlagGems' general
one on the value side: K = 512 (sixteen 32-deep tl.dot steps a tile), N = 128, a
non-persistent grid of one program per 32 x 32 output tile and head (FlagGems' first
configuration, GROUP_M 1: no renumbering; 4 warps, 2 stages), masks compiled in only where
a tile does not divide the shape (DIVISIBLE_M/N/K).  Both trials are DeepSeek-V3 decode
steps in bf16: a data-parallel attention rank holding all 128 heads at 256 decode tokens
(4096 programs), and a TP8 rank's 16 heads at the 48-token CUDA graph (128 programs, the
second row tile of each head 16 rows live).  The floor is the larger of the tensor-core
time for the products and the time to read x and W_UV once and write the output once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "flaggems_bmm")

ELEMENT_SIZE = _common.ELEMENT_SIZE
# a batched GEMM of few rows per head (decode tokens): about 73 flops a byte at the large
# trial, under Hopper's ridge, so reading W_UV and x bounds it; 128 programs at the small one
CONTEXTS = ("gemm", "memory-bound", "small-grid")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """x and W_UV read once, the output written once, all in the dtype; the re-reads of an
    x row panel by every column tile and of a W_UV panel by every row tile are not
    counted."""
    h, t, r, v = d["heads"], d["tokens"], d["kv_lora_rank"], d["v_head_dim"]
    return ELEMENT_SIZE[dtype] * h * (t * r + r * v + t * v)


def flops(d: Mapping[str, int]) -> int:
    """A multiply-add per head, token, latent channel and value channel."""
    return 2 * d["heads"] * d["tokens"] * d["kv_lora_rank"] * d["v_head_dim"]


_make_inputs = _common.forward_make_inputs(
    "flaggems_bmm", "heads", "tokens", "kv_lora_rank", "v_head_dim"
)
_reference = _common.forward_reference("flaggems_bmm")
_baselines = _common.forward_baselines(
    "flaggems_bmm",
    (
        "torch",
        "torch",
        "torch.bmm(x, w_uv, out=out.transpose(0, 1)), vLLM's call without FlagGems "
        "(cuBLAS' strided batched GEMM), in the input dtype",
        "torch_mla_v_up_proj",
    ),
)


_launch_info = _common.triton_launch_info("foreign.flaggems_bmm.launcher")


TRITON_KNOBS = (
    Knob("tile_m", "int", (None, 16, 32, 64, 128), "tile_m",
         "output rows (decode tokens) per program; a head's tokens below it are masked; "
         "None: the tuning YAML's first, 32"),
    Knob("tile_n", "int", (None, 16, 32, 64, 128), "tile_n",
         "output columns (value channels) per program; None: the tuning YAML's first, 32"),
    Knob("tile_k", "int", (None, 16, 32, 64, 128), "tile_k",
         "depth of a tl.dot step along the 512 latent channels; None: the tuning YAML's "
         "first, 32"),
    Knob("group_m", "int", (None, 1, 2, 4, 8), "grouping",
         "row tiles per band that walk every column tile before the next band (inside each "
         "head); None: the tuning YAML's first, 1"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8), "warps",
         "warps per program; None: the tuning YAML's first, 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth of the K loop; None: the tuning YAML's first, 2"),
)  # fmt: skip

SPEC = KernelSpec(
    name="flaggems_bmm",
    description=(
        "FlagGems' batched GEMM (v5.0.2, bmm_kernel as aten::bmm.out launches it), as "
        "vLLM's MLA decode calls it for the value up-projection: one program per 32 x 32 "
        "output tile and head walks the 512 latent channels in 32-deep tl.dot steps, x "
        "read through a transposed view and the output written through one"
    ),
    dims=(
        Dim("heads", "attention heads on this GPU (the bmm's batch)", "num_heads"),
        Dim("tokens", "decode tokens (rows of x and of the output per head)", "rows"),
        Dim("kv_lora_rank", "compressed KV latent width (the reduction, 512)"),
        Dim("v_head_dim", "value width per head (the output's columns, 128)"),
    ),
    # A DP-attention rank's 128 heads at a large decode batch first (4096 programs), then a
    # TP8 rank's 16 heads at a small CUDA graph whose 48 tokens leave a part-masked row tile.
    trials=(
        Trial(
            "deepseek_v3_dp_attn_decode_bs256",
            {"heads": 128, "tokens": 256, "kv_lora_rank": 512, "v_head_dim": 128},
            "a DeepSeek-V3 decode step on a data-parallel attention rank (vLLM's DP + EP "
            "deployment: every rank holds all 128 heads) at 256 decode tokens: 4096 programs "
            "(8 row tiles x 4 column tiles x 128 heads) of 16 steps, 4.29 GFLOP, 58.7 MB at "
            "the floor (bf16)",
        ),
        Trial(
            "deepseek_v3_tp8_decode_bs48",
            {"heads": 16, "tokens": 48, "kv_lora_rank": 512, "v_head_dim": 128},
            "a DeepSeek-V3 decode step at TP 8 (16 heads a GPU, one H200 node) in vLLM's "
            "48-token CUDA graph: 128 programs (2 row tiles, the second 16 rows live, x 4 "
            "column tiles x 16 heads), 0.10 GFLOP, 3.1 MB at the floor (bf16)",
        ),
    ),
    backoff_dim="tokens",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # fp32 accumulation over 512 products, rounded once; fp32 inputs without TF32
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mla_v_up_proj",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
