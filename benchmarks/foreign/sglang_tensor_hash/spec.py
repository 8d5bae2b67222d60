"""SGLang's multimodal tensor hash (SGLang v0.5.9, Apache-2.0), as kbopt sees it: two
kernels nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_tensor_hash` and never committed.

Why this one as the set's integer hash: SGLang keys every image and video of a multimodal
request in its prefix cache by a hash of the processed pixel values, computed on the GPU
before the vision encoder runs (`gpu_tensor_hash`).  One program per 8192 32-bit words walks
its tile in 256-word unrolled steps, mixing each word with its index and two seeds into two
MurmurHash3-style 32-bit hashes (two fmix32 each: shifts, xors and 32-bit multiplies, about
thirty integer operations per word), sums them over the tile and stores one uint64; a tree
kernel then sums the tiles' values modulo 2^64, 1024 per program, until one is left.  Reads
each byte once, but its integer work per word is high: memory- or issue-bound depending on
the SM's integer rate.  Both trials are Qwen2.5-VL's pixel values (1176 values per 14 x 14
patch pair, bf16): one 896 x 896 image (4096 patches, 294 tiles, 9.6 MB read; one tree
level) and a 128-frame 896 x 896 video (262,144 patches, 18,816 tiles, 617 MB read; two tree
levels).  The output is the 64-bit sum before SGLang's host-side splitmix64, as its eight bytes.  The floor is
reading the pixels once.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_tensor_hash")

ELEMENT_SIZE = _common.ELEMENT_SIZE
CONTEXTS = ("reduction", "memory-bound", "multi-kernel")
TILE_WORDS = 8192  # gpu_tensor_hash(tile_words=8192): no knob, part of the hash


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """The pixel values read once (the per-tile values, 8 bytes per 32 KB, are
    negligible)."""
    return d["patches"] * d["width"] * ELEMENT_SIZE[dtype]


def flops(d: Mapping[str, int]) -> int:
    """None: the hash is integer arithmetic (about thirty 32-bit operations per word)."""
    del d
    return 0


_make_inputs = _common.forward_make_inputs("sglang_tensor_hash", "patches", "width")
_reference = _common.forward_reference("sglang_tensor_hash")
_baselines = _common.forward_baselines(
    "sglang_tensor_hash",
    (
        "torch",
        "torch",
        "the same hash by torch ops in int64 with 32-bit masks (many launches and "
        "int64 temporaries over the whole tensor)",
        "torch_hash",
    ),
)


_launch_info = _common.triton_launch_info("foreign.sglang_tensor_hash.launcher")


TRITON_KNOBS = (
    Knob("block_words", "int", (None, 64, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "32-bit words per unrolled step of a program's 8192-word tile (it must divide the "
         "tile); None: SGLang's 256"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program of the hash kernel; None: SGLang's 4"),
    Knob("num_stages", "int", (None, 1, 2, 3, 4, 5), "pipeline_stages",
         "software-pipeline depth asked of the hash kernel (its steps are unrolled); None: "
         "SGLang's 4"),
    Knob("use_cg", "bool", (None, True, False), "cache_hints",
         "load the words with the .cg cache modifier (L2 only, not L1); None: SGLang's "
         "True"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_tensor_hash",
    description=(
        "SGLang's multimodal tensor hash (v0.5.9, hash_tiles32_kernel_blocked and "
        "add_tree_reduce_u64_kernel): two MurmurHash3-style 32-bit hashes per 8192-word "
        "tile of the pixel values, packed into a uint64, then summed by a tree kernel"
    ),
    dims=(
        Dim(
            "patches", "patch pairs of the image or video (Qwen2.5-VL: 2 frames x 14 x 14)", "rows"
        ),
        Dim("width", "values per patch pair (3 channels x 2 x 14 x 14)"),
    ),
    trials=(
        Trial(
            "image_896_qwen25vl",
            {"patches": 4096, "width": 1176},
            "one 896 x 896 image of Qwen2.5-VL (64 x 64 patches): 294 hash programs and "
            "one tree program, 9.6 MB read (bf16)",
        ),
        Trial(
            "video_128f_896_qwen25vl",
            {"patches": 262144, "width": 1176},
            "a 128-frame 896 x 896 video (64 frame pairs of 4096 patches): 18,816 hash "
            "programs and two tree levels (19, then 1), 617 MB read (bf16)",
        ),
    ),
    backoff_dim="patches",
    make_inputs=_make_inputs,
    # block_words steps through a program's 8192-word tile (of the flattened pixels' 32-bit
    # words), not a patch pair's values: row_len is that tile, in words like the knob.
    shape_metrics=lambda d: {
        "row_len": min(TILE_WORDS, d["patches"] * d["width"] * ELEMENT_SIZE[SPEC.dtype] // 4)
    },
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # a hash, compared as its eight bytes: one bit off is an error of at least 1e-3
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="tensor_hash",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
