"""SGLang's seeded-sampling MurmurHash3 (SGLang v0.5.9, Apache-2.0), as kbopt sees it: a
kernel nobody here wrote, fetched into the git-ignored third_party/ by
`scripts/fetch_third_party.py sglang_murmur_hash` and never committed.

Why this one: when requests carry a sampling seed (SGLang's deterministic inference,
`--enable-deterministic-inference` with `sampling_seed` in the request), every sampling
step runs `multinomial_with_seed`, which first hashes every logit's (seed, position,
column) with this kernel and only then makes Gumbel noise from the hashes in torch.  It is
the set's pure integer generator: nothing is read per output but a column id, the
arithmetic is MurmurHash3's 32-bit multiplies, rotations and xors done in 64-bit integers
and masked (about 60 integer instructions per hash, no floating point), and the output, one
uint32 per logit of the batch, is write-only.  Unlike vLLM's Gumbel sampling (the hash
fused with the noise and a per-block argmax over the logits it reads) and SGLang's tensor
hash (a hash of data read from a tensor, tree-reduced), nothing is reduced and no input
stream bounds it: the floor is the [rows, vocab] store, against an integer-ALU ceiling.
The trials: a 256-request decode batch of Qwen3 (vocabulary 151,936): 38.9 M hashes, 156
MB written, 38,144 programs of 1024 columns; and a 16-request decode step of Llama 3.1 8B
(vocabulary 128,256): 2.05 M hashes, 8.2 MB, 2,016 programs.
"""

from __future__ import annotations

from collections.abc import Mapping

from foreign import _common
from kbopt.kernel import Dim, KernelSpec, Knob, Trial

_common.require_sources(__file__, "sglang_murmur_hash")

CONTEXTS = ("elementwise", "memory-bound")


def bytes_moved(d: Mapping[str, int], dtype: str = "bfloat16") -> int:
    """Each row's seed and position read once (8 bytes each), the int64 column ids once,
    one uint32 written per logit (integers whatever the dtype)."""
    del dtype
    return 16 * d["rows"] + 8 * d["vocab"] + 4 * d["rows"] * d["vocab"]


def flops(d: Mapping[str, int]) -> int:
    """None counted: integer arithmetic only."""
    return 0


_make_inputs = _common.forward_make_inputs("sglang_murmur_hash", "rows", "vocab")
_reference = _common.forward_reference("sglang_murmur_hash")
_baselines = _common.forward_baselines(
    "sglang_murmur_hash",
    ("torch", "torch", "the same MurmurHash3 in torch's int64 element-wise kernels "
     "(multiplies, shifts, ors and xors over the [rows, vocab] grid)", "torch_murmur_hash"),
)  # fmt: skip


_launch_info = _common.triton_launch_info("foreign.sglang_murmur_hash.launcher")


TRITON_KNOBS = (
    Knob("block_size", "int", (None, 128, 256, 512, 1024, 2048, 4096, 8192), "tile_n",
         "columns hashed per program (masked past the vocabulary); None: SGLang's 1024"),
    Knob("num_warps", "int", (None, 1, 2, 4, 8, 16), "warps",
         "warps per program; None: Triton's default 4 (SGLang passes none)"),
)  # fmt: skip

SPEC = KernelSpec(
    name="sglang_murmur_hash",
    description=(
        "SGLang's seeded-sampling MurmurHash3 (v0.5.9, murmur_hash32_kernel): one 32-bit "
        "hash of (64-bit seed, position, column) per logit, one program per row and 1024 "
        "columns, integer-only, a write-only uint32 output"
    ),
    dims=(
        Dim("rows", "requests sampled (one seed and position each)", "rows"),
        Dim("vocab", "vocabulary columns hashed per row", "row_len"),
    ),
    trials=(
        Trial(
            "qwen3_decode256_seeded",
            {"rows": 256, "vocab": 151936},
            "a 256-request decode batch of Qwen3 (vocabulary 151,936) with per-request "
            "sampling seeds: 38.9 M hashes, 156 MB written, 38,144 programs",
        ),
        Trial(
            "llama31_8b_decode16_seeded",
            {"rows": 16, "vocab": 128256},
            "a 16-request decode step of Llama 3.1 8B (vocabulary 128,256) with sampling "
            "seeds: 2.05 M hashes, 8.2 MB written, 2,016 programs",
        ),
    ),
    backoff_dim="rows",
    make_inputs=_make_inputs,
    reference=_reference,
    flops=flops,
    bytes_moved=lambda d: bytes_moved(d, SPEC.dtype),
    # integer hashes: any difference is a bug
    tolerances={"bfloat16": 1e-6, "float16": 1e-6, "float32": 1e-6},
    entry_point="murmur_hash32",
    families=("triton",),
    knobs={"triton": TRITON_KNOBS},
    baselines=_baselines,
    compare_with=("torch",),
    launch_info=_launch_info,
    contexts=CONTEXTS,
)
