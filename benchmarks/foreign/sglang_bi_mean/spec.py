"""SGLang's batch-invariant mean over one dimension (SGLang v0.5.9, Apache-2.0), as kbopt
sees it: a kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_bi_mean` and never committed.

Why this one: a server started with `--enable-deterministic-inference` replaces
aten::mean.dim by this kernel, so every torch.mean over one dimension in the model runs it.
Unlike the set's row reductions (norms, softmaxes, var_mean) and its whole-tensor
reductions, it reduces a leading or middle dimension with one program per output element:
each program gathers `reduced` elements `inner` elements apart through a 1024-lane masked
block, and the outputs, one scalar per program, are what is contiguous.  Millions of tiny
programs, a strided gather per lane, a block far wider than a short reduction: the launch
shape, not the arithmetic, is the cost.  The trials: DeepSeek-OCR's SAM encoder neck, whose
LayerNorm2d takes `x.mean(1)` over the 256 channels of a 64 x 64 NCHW feature map of one
1024 x 1024 page (4096 programs, 256 live lanes of 1024, 16 KB apart in bf16), and Gemma 3n's
last step, `torch.mean` over its four AltUp streams of a 2048-token prefill chunk at hidden
size 2048 (4,194,304 programs, 4 live lanes each).  The floor is reading the input once and
writing the means once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_bi_mean")

CONTEXTS = ("reduction", "memory-bound")  # one program per output, a strided gather per lane


def _elem(dtype: str) -> int:
    return 4 if dtype == "float32" else 2


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The input read once and the [outer, inner] means written once, in the input dtype."""
    out = d["outer"] * d["inner"]
    return _elem(dtype) * (out * d["reduced"] + out)


def flops(d: Mapping[str, int]) -> int:
    """An add per input element and a division per output."""
    out = d["outer"] * d["inner"]
    return out * d["reduced"] + out


_make_inputs = _common.forward_make_inputs("sglang_bi_mean", "outer", "reduced", "inner")
_reference = _common.forward_reference("sglang_bi_mean")
_baselines = _common.forward_baselines(
    "sglang_bi_mean",
    ("torch", "torch", "torch.mean over the dimension, as SGLang runs it without "
     "deterministic inference", "torch_mean"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_bi_mean.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 4, 16, 64, 128, 256, 512, 1024, 2048), "tile_n",
         "reduced elements loaded per loop step of a program (masked past the end); None: "
         "SGLang's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4), "pipeline_stages",
         "software-pipeline depth of the reduction loop; None: Triton's default 3"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_bi_mean",
    description=(
        "SGLang's batch-invariant mean over one dimension (v0.5.9, mean_kernel): "
        "deterministic inference's aten::mean.dim, one program per output element walks the "
        "reduced dimension, inner elements apart, in 1024-lane masked blocks"
    ),
    dims=(
        Dim("outer", "size of the dimensions before the reduced one", "batch"),
        # block_size steps through a program's reduced elements (masked past the end).
        Dim("reduced", "length of the reduced dimension", "row_len"),
        Dim(
            "inner", "size of the dimensions after it (the stride of the reduced elements)", "rows"
        ),
    ),
    trials=(
        Trial(
            "deepseek_ocr_sam_layernorm2d_mean",
            {"outer": 1, "reduced": 256, "inner": 4096},
            "DeepSeek-OCR's SAM ViT-B neck, LayerNorm2d's x.mean(1) over the 256 channels of "
            "the 64 x 64 feature map of one 1024 x 1024 page: 4096 programs",
        ),
        Trial(
            "gemma3n_altup_stream_mean_2048",
            {"outer": 1, "reduced": 4, "inner": 4194304},
            "Gemma 3n (E2B/E4B, hidden 2048): the final torch.mean over its 4 AltUp streams "
            "for a 2048-token prefill chunk: 4,194,304 programs of 4 live lanes",
        ),
    ),
    backoff_dim="inner",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # an fp32 sum of up to 256 values, stored in the input dtype, against fp64
    tolerances={"bfloat16": 1e-2, "float16": 2e-3, "float32": 1e-5},
    entry_point="mean_dim",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
