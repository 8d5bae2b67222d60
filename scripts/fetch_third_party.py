#!/usr/bin/env python3
"""Fetch the third-party kernels that benchmarks/foreign/ wraps into third_party/ (git-ignored).

The foreign kernel specs (benchmarks/foreign/<name>/spec.py) measure kernels nobody on this
project wrote.  Their code is never committed here: this script copies it, at pinned
commits, into ``third_party/`` at the repository root, checks each copy against the SHA-256
pinned below, and writes ``third_party/MANIFEST.json`` (what came from where, under which
license, how it was fetched).

    python scripts/fetch_third_party.py                 # all sources, with git (needs github.com)
    python scripts/fetch_third_party.py sglang           # one source
    python scripts/fetch_third_party.py --list           # the pins, fetched or not
    python scripts/fetch_third_party.py --from-pypi      # sources published on PyPI, via pip
    python scripts/fetch_third_party.py --from-mirror D  # bare git mirrors D/<owner>+<name>[/repo]
    python scripts/fetch_third_party.py --from-files D   # loose copies D/<owner>+<name>/<path>

Source trees that must be compiled (FlashMLA's CUDA extension) are packed instead into ONE
compressed archive, ``third_party/flashmla-src.tgz``: FlashMLA at the pinned commit with
CUTLASS's ``include/`` and ``tools/util/include/`` (at the commit of FlashMLA's submodule) under
``csrc/cutlass/``, about 2.5 MB, small enough to travel to the GPU machine next to the CuTe DSL
wheel.  ``scripts/build_flashmla.sh`` unpacks and builds it there.  Both commits are checked
(content-addressed: a full commit id is the content).

    python scripts/fetch_third_party.py flashmla                          # from GitHub
    python scripts/fetch_third_party.py flashmla --from-mirror /work/.mirror  # bare mirrors

From GitHub, FlashMLA is fetched at depth 1 and CUTLASS with a sparse, blob-less checkout of
the two folders (a few MB instead of the whole repository).

Liger-Kernel is not fetched here: it is a pure-Triton wheel installed with pip
(``liger-kernel==0.8.5``, in the dev extra) and imported as a package.

How a source becomes a file in third_party/:

- ``whole``: the upstream file as it is, except for the import lines named in ``shims``,
  which are replaced by a local definition (SGLang's ``from sglang.srt.utils import
  is_hip`` would pull in all of SGLang).  The SHA-256 is of the upstream file.
- ``extract``: only the named top-level ``@triton.jit`` functions, each with a bare
  ``@triton.jit`` (an ``@triton.autotune`` above it is dropped: the wrapper launches one
  fixed configuration, its knobs), under ``import triton`` / ``import triton.language as
  tl``.  The tutorials run benchmarks at import time and need a GPU to import; the
  extracted kernels do not.  The SHA-256 is of the extracted functions' text, so a copy
  holding only those functions verifies the same as the whole tutorial.  ``shims`` here are
  module-level lines the functions need (an import, a constant, a helper that FlagGems
  imports from its runtime): each named line must be in the upstream file, and its
  replacement is written above the functions.

Exit status: 0 when every requested source is in place and verified, 1 otherwise (each
failure says which source, why, and what to try).  ``--no-verify`` keeps a copy whose
hash differs (a newer upstream), and records that in the manifest.
"""

from __future__ import annotations

import argparse
import ast
import datetime as dt
import gzip
import hashlib
import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DEST = ROOT / "third_party"
MANIFEST = "MANIFEST.json"
GITHUB = "https://github.com"  # where `git fetch` goes (tests point it at local repositories)


@dataclass(frozen=True)
class Source:
    """One pinned upstream file and how it lands in third_party/."""

    name: str
    repo: str  # owner/name on GitHub
    ref: str  # the commit (or release tag) fetched
    path: str  # the file inside the repository
    license: str  # SPDX identifier of the upstream repository's license
    dest: str  # relative to third_party/
    sha256: str  # of the whole file (mode "whole") or of the extracted functions
    mode: str = "whole"  # "whole" or "extract"
    functions: tuple[str, ...] = ()  # mode "extract": top-level @triton.jit functions, in order
    # mode "whole": line -> replacement; mode "extract": a module-level line the functions
    # need (checked present upstream) -> what is written above them
    shims: dict[str, str] = field(default_factory=dict)
    pypi: tuple[str, str, str] | None = None  # (distribution, version, path in the wheel)
    used_by: tuple[str, ...] = ()  # the benchmarks/foreign specs that import it
    note: str = ""


def apache_release(
    repo: str, ref: str, package: str, version: str, strip: str = ""
) -> Callable[..., Source]:
    """Sources from one release of an Apache-2.0 project whose PyPI wheel holds the same
    files as the tagged repository, at their repository path less `strip`."""

    def source(name: str, path: str, dest: str, sha256: str, **rest: Any) -> Source:
        return Source(
            name=name,
            repo=repo,
            ref=ref,
            path=path,
            license="Apache-2.0",
            dest=dest,
            sha256=sha256,
            pypi=(package, version, path.removeprefix(strip)),
            **rest,
        )

    return source


# SGLang v0.5.9: the package sits under `python/` in the repository, at the wheel's root.
sglang_059 = apache_release("sgl-project/sglang", "v0.5.9", "sglang", "0.5.9", strip="python/")
# vLLM v0.34.0: the package sits at the repository's root, as in the wheel.
vllm_0340 = apache_release("vllm-project/vllm", "v0.34.0", "vllm", "0.34.0")
# FlagGems v5.0.2 (Apache-2.0, as its wheel's metadata says): pure Python, `flag_gems==5.0.2`
# on PyPI, the package under `src/` in the repository.
flaggems_502 = apache_release("flagos-ai/FlagGems", "v5.0.2", "flag_gems", "5.0.2", strip="src/")
# GemLite 0.6.0.post2 (Apache-2.0: its LICENSE file; its metadata says "Apache 2"): pure
# Python, published on PyPI as an sdist alone (no wheel), the package at the repository's
# root; `--from-pypi` reads the file from the sdist's tarball (SDIST_ONLY).
gemlite_060 = apache_release("mobiusml/gemlite", "0.6.0.post2", "gemlite", "0.6.0.post2")
# distributions whose pinned release PyPI publishes only as an sdist: --from-pypi downloads
# the tarball (pip prepares its metadata, running its setup.py) and reads the file from it
SDIST_ONLY = frozenset({"gemlite"})

# Shims several FlagGems pins share.  FlagGems' triton_lang_extension: its program_id and
# num_programs are Triton's.
_TLE_SHIM = {
    "from flag_gems.utils import triton_lang_extension as tle": (
        "import triton.language as tle  # kbopt shim: FlagGems' triton_lang_extension; "
        "its program_id and num_programs are Triton's"
    ),
}
# flag_gems.utils.limits.get_dtype_min: a value below every value of the dtype (a running
# maximum's start).
_DTYPE_MIN_SHIM = {
    "from flag_gems.utils.limits import get_dtype_min": (
        "# kbopt shim: FlagGems' flag_gems.utils.limits.get_dtype_min (a value below "
        "every value of the dtype: the running maximum's start), as a compile-time "
        "function that also takes the bare dtype the CPU interpreter passes\n\n\n"
        "@tl.constexpr\n"
        "def get_dtype_min(dtype):\n"
        "    dtype = dtype.value if isinstance(dtype, tl.constexpr) else dtype\n"
        "    if dtype.is_floating():\n"
        '        return float("-inf")\n'
        "    if dtype.is_int_signed():\n"
        "        return -(2 ** (dtype.int_bitwidth - 1))\n"
        "    return 0"
    ),
}


SOURCES: tuple[Source, ...] = (
    sglang_059(
        name="sglang",
        path="python/sglang/srt/layers/attention/triton_ops/decode_attention.py",
        dest="sglang/decode_attention.py",
        sha256="2673adaad3d71209ff4f44788060913b1d6cce5021bbf1bf38334a09acf3d251",
        shims={
            "from sglang.srt.utils import is_hip": (
                "def is_hip():  # kbopt shim (fetch_third_party.py): CUDA only, no SGLang import\n"
                "    return False"
            )
        },
        used_by=("sglang_mla_decode", "sglang_mha_decode"),
        note="release v0.5.9 (the file is the same in the sglang 0.5.9 wheel on PyPI); "
        "triton-only, works with triton 3.6",
    ),
    Source(
        name="triton_softmax",
        repo="triton-lang/triton",
        ref="fd237c7cf9a7262f32fedbaa5027ab2736ead134",
        path="python/tutorials/02-fused-softmax.py",
        license="MIT",
        dest="triton_tutorials/fused_softmax.py",
        sha256="42050a1a8082142125543b8344d2ad7f45d14e117d0577c9b20091b7afeb7204",
        mode="extract",
        functions=("softmax_kernel",),
        used_by=("triton_softmax",),
        note="persistent-row tutorial kernel (tl.range with num_stages)",
    ),
    Source(
        name="triton_matmul",
        repo="triton-lang/triton",
        ref="7649d87cce6c12361bb9da234b9b227b2880b499",
        path="python/tutorials/03-matrix-multiplication.py",
        license="MIT",
        dest="triton_tutorials/matrix_multiplication.py",
        sha256="0779d69c7333702a7eb684d700c69906956b7d8630b6aa320975ba8a1b9eba4e",
        mode="extract",
        functions=("matmul_kernel", "leaky_relu"),
        used_by=("triton_matmul",),
        note="the autotuned tutorial kernel without its @triton.autotune (one config per version)",
    ),
    Source(
        name="triton_layernorm",
        repo="triton-lang/triton",
        ref="545699290b851e70231ee3017481851170f1583d",
        path="python/tutorials/05-layer-norm.py",
        license="MIT",
        dest="triton_tutorials/layer_norm.py",
        sha256="f9827efdc479bc6a1c746202e1e0a3b4923c58b74632e92e2a3e1dc440c0f176",
        mode="extract",
        functions=("_layer_norm_fwd_fused",),
        used_by=("triton_layernorm",),
        note="forward kernel only (three passes over each row)",
    ),
    sglang_059(
        name="sglang_prefill",
        path="python/sglang/srt/layers/attention/triton_ops/prefill_attention.py",
        dest="sglang/prefill_attention.py",
        sha256="81bd77b347a87f8b85f2a38483714bde2252a1daa3506286846855290194aa7b",
        mode="extract",
        functions=("_fwd_kernel",),
        used_by=("sglang_prefill_attention",),
        note="the flash-attention prefill kernel only (its module imports SGLang and asks "
        "CUDA for the device's capability at import)",
    ),
    sglang_059(
        name="sglang_merge_state",
        path="python/sglang/srt/layers/attention/triton_ops/merge_state.py",
        dest="sglang/merge_state.py",
        sha256="1a1faf5003af9b1bcd2a1a15a0a516a6d6d104eb017e87b71da765ee7851c1d7",
        mode="extract",
        functions=("merge_state_kernel",),
        used_by=("sglang_merge_state",),
        note="the kernel only; its wrapper allocates the outputs per call",
    ),
    sglang_059(
        name="sglang_int8_quant",
        path="python/sglang/srt/layers/quantization/int8_kernel.py",
        dest="sglang/int8_kernel.py",
        sha256="2d925a573cc0bcee19111a820d7ea28e788a281e96e17e8c79460c3f0e7c884f",
        mode="extract",
        functions=("_per_token_quant_int8",),
        used_by=("sglang_int8_quant",),
        note="the per-token kernel only (its module imports SGLang and sgl_kernel at import)",
    ),
    sglang_059(
        name="sglang_mamba_ssm",
        path="python/sglang/srt/layers/attention/mamba/ops/mamba_ssm.py",
        dest="sglang/mamba_ssm.py",
        sha256="09966c97d238825725f40080f1c9727d216f6fc021a2e8254a47a231a15ee94c",
        used_by=("sglang_mamba_state_update",),
        note="the whole file (torch, triton and packaging only): the kernel's heuristics "
        "and its softplus come with it",
    ),
    sglang_059(
        name="sglang_ssd_bmm",
        path="python/sglang/srt/layers/attention/mamba/ops/ssd_bmm.py",
        dest="sglang/ssd_bmm.py",
        sha256="206389ebb4cbc765904300c59bd8f0d8e53cbd365cd1d695527405ea472edb1e",
        used_by=("sglang_ssd_bmm",),
        note="the whole file (torch and triton only)",
    ),
    sglang_059(
        name="sglang_gdn_recurrent",
        path="python/sglang/srt/layers/attention/fla/fused_recurrent.py",
        dest="sglang/fla_fused_recurrent.py",
        sha256="40a89e62ac2e18bf59eb316df3d50240e3d0f4a7eb1d09d42eed0361f7dc82ca",
        shims={
            "from sglang.srt.layers.attention.fla.op import exp": (
                "exp = tl.exp  # kbopt shim: fla.op's binding when FLA_USE_FAST_OPS is not 1"
            ),
            "from sglang.srt.layers.attention.fla.utils import input_guard": (
                "def input_guard(fn):  # kbopt shim: fla.utils' contiguity guard, unused here\n"
                "    return fn"
            ),
        },
        used_by=("sglang_gdn_recurrent",),
        note="the whole file, its two SGLang imports shimmed (fla.op's exp is tl.exp by default)",
    ),
    sglang_059(
        name="sglang_gdn_verify",
        path="python/sglang/srt/layers/attention/fla/fused_recurrent.py",
        dest="sglang/fla_gdn_verify.py",
        sha256="37c239355a917190043245e28f846af67c636aa125a00fc37f58df7ec032f42c",
        mode="extract",
        functions=("fused_recurrent_gated_delta_rule_update_fwd_kernel",),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: fla.op's exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)"
            ),
        },
        used_by=("sglang_gdn_verify",),
        note="the gated delta rule's target-verify kernel only (the draft tokens walked in "
        "order, every step's state stored to the intermediate-state cache, the pool only read; "
        "the module imports SGLang's FLA helpers at import; fla.op's exp shimmed as tl.exp, "
        "FLA_USE_FAST_OPS unset); the same file's prefill-side recurrence is pinned whole "
        "apart, sglang_gdn_recurrent",
    ),
    sglang_059(
        name="sglang_fused_moe",
        path="python/sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_kernels.py",
        dest="sglang/fused_moe_kernel.py",
        sha256="568e1ea02da11f4f49e5e2ba6cc0cb3cdfe8b3aada2b0a02341012609bdf67b0",
        mode="extract",
        functions=("fused_moe_kernel", "write_zeros_to_output"),
        used_by=("sglang_fused_moe",),
        note="the MoE GEMM kernel and its zero-writing helper only (the module imports "
        "SGLang, sgl_kernel and the quantization kernels at import)",
    ),
    sglang_059(
        name="sglang_fp8_kernel",
        path="python/sglang/srt/layers/quantization/fp8_kernel.py",
        dest="sglang/fp8_kernel.py",
        sha256="060465111b343280442cd6f8cb355897d396aac780185bb547c8bca2c532f156",
        mode="extract",
        functions=("_per_token_group_quant_8bit", "_w8a8_block_fp8_matmul"),
        used_by=("sglang_fp8_group_quant", "sglang_fp8_block_gemm"),
        note="the per-token-group quantization and block-wise W8A8 GEMM kernels only (the "
        "module imports SGLang, sgl_kernel and DeepGEMM's wrapper at import)",
    ),
    sglang_059(
        name="sglang_gdn_cumsum",
        path="python/sglang/srt/layers/attention/fla/cumsum.py",
        dest="sglang/fla_cumsum.py",
        sha256="c0b965d699465cdf836087a7e462265a1d8d4c806451035ab3563ee21c022477",
        shims={
            "from sglang.srt.layers.attention.fla.index import prepare_chunk_indices": (
                "def prepare_chunk_indices(cu_seqlens, chunk_size):  # kbopt shim: the "
                "launcher builds them\n"
                "    raise NotImplementedError('kbopt: chunk indices come from the launcher')"
            ),
            "from sglang.srt.layers.attention.fla.utils import check_shared_mem, input_guard": (
                "def check_shared_mem(arch='none', tensor_idx=0):  # kbopt shim: an sm_90 "
                "device has it\n"
                "    return True\n\n\n"
                "def input_guard(fn):  # kbopt shim: fla.utils' contiguity guard, unused here\n"
                "    return fn"
            ),
        },
        used_by=("sglang_gdn_cumsum",),
        note="the whole file, its two SGLang imports shimmed (the launcher builds the "
        "varlen chunk indices; the scalar kernel it launches uses no shared-memory check)",
    ),
    sglang_059(
        name="sglang_gdn_kkt",
        path="python/sglang/srt/layers/attention/fla/chunk_scaled_dot_kkt.py",
        dest="sglang/fla_chunk_scaled_dot_kkt.py",
        sha256="031cd867eeb9395ce9dfaba73e50ac8489b7808c203c528c005bf2696915ab8e",
        shims={
            "from sglang.srt.layers.attention.fla.index import prepare_chunk_indices": (
                "def prepare_chunk_indices(cu_seqlens, chunk_size):  # kbopt shim: the "
                "launcher builds them\n"
                "    raise NotImplementedError('kbopt: chunk indices come from the launcher')"
            ),
            "from sglang.srt.layers.attention.fla.op import safe_exp": (
                "@triton.jit\n"
                "def safe_exp(x):  # kbopt shim: fla.op's safe_exp, its exp being tl.exp "
                "(FLA_USE_FAST_OPS unset)\n"
                "    return tl.exp(tl.where(x <= 0, x, float('-inf')))"
            ),
        },
        used_by=("sglang_gdn_kkt",),
        note="the whole file, its two SGLang imports shimmed (the launcher builds the varlen "
        "chunk indices; fla.op's safe_exp is exp of the non-positive part, exp = tl.exp by "
        "default)",
    ),
    sglang_059(
        name="sglang_gdn_solve_tril",
        path="python/sglang/srt/layers/attention/fla/solve_tril.py",
        dest="sglang/fla_solve_tril.py",
        sha256="4cb532171bb229dad4336edda234fa23aad5c425351dd0954e7e18433f82d6f3",
        shims={
            "from sglang.srt.layers.attention.fla.index import prepare_chunk_indices": (
                "def prepare_chunk_indices(cu_seqlens, chunk_size):  # kbopt shim: the "
                "launcher builds them\n"
                "    raise NotImplementedError('kbopt: chunk indices come from the launcher')"
            ),
            "from sglang.srt.layers.attention.fla.utils import input_guard": (
                "def input_guard(fn):  # kbopt shim: fla.utils' contiguity guard, unused here\n"
                "    return fn"
            ),
        },
        used_by=("sglang_gdn_solve_tril",),
        note="the whole file, its two SGLang imports shimmed (the launcher builds the varlen "
        "chunk indices at 16 and 64 tokens)",
    ),
    sglang_059(
        name="sglang_moe_sum_reduce",
        path="python/sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_kernels.py",
        dest="sglang/moe_sum_reduce.py",
        sha256="41cf6f4555ac585b19b743d4d55c1495bb8bd06b89ac667af0e43dc5441fb465",
        mode="extract",
        functions=("_moe_sum_reduce_kernel",),
        used_by=("sglang_moe_sum_reduce",),
        note="the top-k sum reduction kernel only (the module imports SGLang, sgl_kernel and "
        "the quantization kernels at import; the MoE GEMM is pinned apart, sglang_fused_moe)",
    ),
    sglang_059(
        name="sglang_kv_indices",
        path="python/sglang/srt/layers/attention/utils.py",
        dest="sglang/kv_indices.py",
        sha256="4fe3e8074774bda14c6fdc5c05a24911e1ed41d688ab9be872adc0fc1a779af7",
        mode="extract",
        functions=("create_flashinfer_kv_indices_triton",),
        used_by=("sglang_kv_indices",),
        note="the KV index gather kernel only (the module imports SGLang and sgl_kernel at import)",
    ),
    sglang_059(
        name="sglang_tensor_hash",
        path="python/sglang/srt/layers/multimodal.py",
        dest="sglang/multimodal_hash.py",
        sha256="178d0311de6bc3901b76c72e28be2fdc54dad2171ebb5e9aa808039722e4f8a8",
        mode="extract",
        functions=(
            "_rotl32",
            "_fmix32",
            "hash_tiles32_kernel_blocked",
            "add_tree_reduce_u64_kernel",
        ),
        shims={
            "FMIX32_C1 = 0x85EBCA6B": "FMIX32_C1 = 0x85EBCA6B",
            "FMIX32_C2 = 0xC2B2AE35": "FMIX32_C2 = 0xC2B2AE35",
            "POS_C1 = 0x27D4EB2D": "POS_C1 = 0x27D4EB2D",
            "POS_C2 = 0x165667B1": "POS_C2 = 0x165667B1",
        },
        used_by=("sglang_tensor_hash",),
        note="the multimodal tensor hash's two kernels and their jit helpers, with the "
        "module's four hash constants (the per-tile hash and the uint64 tree sum; the "
        "host-side wrapper and its final splitmix64 left out)",
    ),
    sglang_059(
        name="sglang_dp_memcpy",
        path="python/sglang/srt/layers/dp_attention.py",
        dest="sglang/dp_memcpy.py",
        sha256="4361a93950e842cfb06c30a10ebff55fadba50564dedff3c74b259f32c584e3b",
        mode="extract",
        functions=("memcpy_triton_kernel",),
        used_by=("sglang_dp_memcpy",),
        note="DP attention's token copy kernel only (the module imports SGLang's "
        "distributed state at import)",
    ),
    sglang_059(
        name="sglang_logit_softcap",
        path="python/sglang/srt/layers/logits_processor.py",
        dest="sglang/logit_softcap.py",
        sha256="1f11e0a0fc45aebfbfa43cf4caacc2c406e632964ca90f332c97e32429daac50",
        mode="extract",
        functions=("fused_softcap_kernel",),
        used_by=("sglang_logit_softcap",),
        note="the final-logit soft-capping kernel only (the logits processor's module "
        "imports SGLang's distributed and model-runner layers at import)",
    ),
    sglang_059(
        name="sglang_alloc_extend",
        path="python/sglang/srt/mem_cache/allocator.py",
        dest="sglang/alloc_extend.py",
        sha256="f5b1ab0b79eed0ea190026bcfba784f4ea196cf86a677b0b37653e9249b082a2",
        mode="extract",
        functions=("alloc_extend_kernel",),
        used_by=("sglang_alloc_extend",),
        note="the paged KV allocator's extend kernel only (the module imports SGLang's "
        "memory pools and KV cache classes at import)",
    ),
    sglang_059(
        name="sglang_deepep_permute",
        path="python/sglang/srt/layers/moe/ep_moe/kernels.py",
        dest="sglang/deepep_permute.py",
        sha256="a09434509e334cd8e942702a8f4606bf2b764ed20d82d0b7b74f75b96f92ffcc",
        mode="extract",
        functions=("deepep_permute_triton_kernel",),
        used_by=("sglang_deepep_permute",),
        note="the DeepEP-normal token permute kernel only (the module imports SGLang's "
        "utils and fp8 quantization kernels at import)",
    ),
    sglang_059(
        name="sglang_eagle_hidden_pool",
        path="python/sglang/srt/speculative/multi_layer_eagle_utils.py",
        dest="sglang/eagle_hidden_pool.py",
        sha256="eb5f851315fdbff78f001a675205c5541359c3733771b132e572c7e4b32ba013",
        mode="extract",
        functions=("assign_hidden_states_pool_kernel",),
        used_by=("sglang_eagle_hidden_pool",),
        note="multi-layer EAGLE's hidden-state pool store kernel only (the module's other "
        "kernels rotate input ids and rebuild the draft-extend state)",
    ),
    sglang_059(
        name="sglang_qkvzba_split",
        path="python/sglang/srt/models/qwen3_next.py",
        dest="sglang/qkvzba_split.py",
        sha256="5d3f99ac810a977b6bce362d820e457485f7bb768933e4432284777fa4b1f174",
        mode="extract",
        functions=("fused_qkvzba_split_reshape_cat_kernel",),
        used_by=("sglang_qkvzba_split",),
        note="Qwen3-Next's gated-delta-net projection split kernel only (the model's module "
        "imports SGLang's layers, configs and distributed state at import)",
    ),
    sglang_059(
        name="sglang_moe_router",
        path="python/sglang/srt/layers/moe/router.py",
        dest="sglang/moe_router.py",
        sha256="a31b8aec05cb76aaaa56ef3b444ac9e407167970c37382e39ca6339146f4288f",
        mode="extract",
        functions=("fused_moe_router_tensorcore_kernel",),
        used_by=("sglang_moe_router",),
        note="Grok's fused MoE router, its tensor-core kernel only (the module imports "
        "SGLang's top-k layer and, in the wrapper, its DP-attention state)",
    ),
    sglang_059(
        name="sglang_nsa_dequant_k_cache",
        path="python/sglang/srt/layers/attention/nsa/dequant_k_cache.py",
        dest="sglang/nsa_dequant_k_cache.py",
        sha256="083265255a67a11c4f949d19a7aba3b7ebd2c814c7269d6743a3bdaae3bb28b0",
        mode="extract",
        functions=("_dequantize_k_cache_paged_kernel",),
        used_by=("sglang_nsa_dequant_k_cache",),
        note="DeepSeek-V3.2's NSA fp8 K-cache dequantization through a flat page table, "
        "its paged kernel only (the contiguous-cache kernel is left out)",
    ),
    sglang_059(
        name="sglang_nsa_act_quant",
        path="python/sglang/srt/layers/attention/nsa/triton_kernel.py",
        dest="sglang/nsa_act_quant.py",
        sha256="b2ffcfb1af1d476ff5d26cedd1a23ea7bddff10e74ad9a8e1da37b9cf91c5f70",
        mode="extract",
        functions=("_act_quant_kernel",),
        used_by=("sglang_nsa_act_quant",),
        note="DeepSeek-V3.2's NSA indexer activation quantization kernel only (act_quant's "
        "Triton path, which the indexer takes on CUDA for its query and key: per 128-column "
        "group, a UE8M0 power-of-two scale and e4m3; the host wrapper, which allocates the "
        "outputs per call, left out)",
    ),
    sglang_059(
        name="sglang_ds_label_scores",
        path="python/sglang/srt/layers/attention/triton_ops/double_sparsity_attention.py",
        dest="sglang/double_sparsity_attention.py",
        sha256="b619519d0cccebefe5094a4be29bae6d82acbc3bfc38be5f14ea90661876ce5e",
        mode="extract",
        functions=("tanh", "_sparse_fwd_kernel_flash_decode_stage1"),
        shims={
            "if get_global_server_args().triton_attention_reduce_in_fp32:": (
                "# kbopt shim: SGLang's module-level REDUCE_TRITON_TYPE with "
                "--triton-attention-reduce-in-fp32 off (its default)\n"
                "REDUCE_TRITON_TYPE = tl.float16"
            ),
        },
        used_by=("sglang_ds_label_scores",),
        note="Double Sparsity's approximate-attention kernel (heavy-channel label scores "
        "of every context token, before torch.topk) and its tanh only (the module reads "
        "SGLang's server args at import)",
    ),
    sglang_059(
        name="sglang_embedding_lora_a",
        path="python/sglang/srt/lora/triton_ops/embedding_lora_a.py",
        dest="sglang/embedding_lora_a.py",
        sha256="97173301bbbc4a8fb14ded3fc2dacdd780ef9b887c7cf1102e8221ded94d8ae3",
        mode="extract",
        functions=("_embedding_lora_a_kernel",),
        used_by=("sglang_embedding_lora_a",),
        note="the LoRA embedding's A lookup of the Triton LoRA backend only (its module "
        "imports SGLang's LoRA batch info at import)",
    ),
    sglang_059(
        name="sglang_sla_attention",
        path="python/sglang/multimodal_gen/runtime/layers/attention/backends/sparse_linear_attn.py",
        dest="sglang/sla_attention.py",
        sha256="1b502c8262db78174f5509775a922bd401e5abddc7fb145eecdfef35d692001c",
        mode="extract",
        functions=("_attn_fwd",),
        used_by=("sglang_sla_attention",),
        note="the sparse branch of sparse-linear attention (SLA, the diffusion runtime's "
        "SLA_ATTN backend: block-sparse flash attention over each query block's top-k key "
        "blocks) only (its module imports the diffusion runtime's attention backends)",
    ),
    sglang_059(
        name="sglang_seg_la",
        path="python/sglang/srt/layers/attention/linear/seg_la.py",
        dest="sglang/seg_la.py",
        sha256="b1ff04dc3912ae36544221d96e907d9d88a2e89007b27d1da67e49c50e02e395",
        mode="extract",
        functions=("seg_la_p_kernel", "seg_la_sum_kernel"),
        used_by=("sglang_seg_la",),
        note="the segmented linear attention's prefill kernel and its split-sum kernel only "
        "(Ling/Ring linear models' default linear backend; the module's decode, speculative "
        "and MTP kernels left out)",
    ),
    sglang_059(
        name="sglang_seg_la_decode",
        path="python/sglang/srt/layers/attention/linear/seg_la.py",
        dest="sglang/seg_la_decode.py",
        sha256="ece8d3adac12df86e9ac32e23e0739d81d7ea45f91c97f95084b9e48ca40de4d",
        mode="extract",
        functions=("seg_la_d_kernel",),
        used_by=("sglang_seg_la_decode",),
        note="the segmented linear attention's decode kernel only (Ling/Ring linear models' "
        "default linear backend at one token a request: each request's fp32 state tile "
        "decayed, updated by k^T v and read out in place); its prefill and split-sum kernels "
        "are pinned apart as sglang_seg_la, its MTP kernel as sglang_seg_la_mtp",
    ),
    sglang_059(
        name="sglang_gdn_wy",
        path="python/sglang/srt/layers/attention/fla/wy_fast.py",
        dest="sglang/fla_wy_fast.py",
        sha256="45e5a35b524322fa3f342c1d35f26802c0be7fb70e921afb4f2f27e2e02b3afb",
        mode="extract",
        functions=("recompute_w_u_fwd_kernel",),
        used_by=("sglang_gdn_wy",),
        note="the WY recompute kernel only (its module imports fla.index, whose chunk "
        "indices the launcher builds)",
    ),
    sglang_059(
        name="sglang_gdn_chunk_h",
        path="python/sglang/srt/layers/attention/fla/chunk_delta_h.py",
        dest="sglang/fla_chunk_delta_h.py",
        sha256="898951ae8a824557c1955cdd3c1eb449d0b97ddff061d521cff592199b75001d",
        mode="extract",
        functions=("chunk_gated_delta_rule_fwd_kernel_h_blockdim64",),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp, safe_exp": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: fla.op's exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)\n\n\n"
                "@triton.jit\n"
                "def safe_exp(x):  # kbopt shim: fla.op's safe_exp, its exp being tl.exp\n"
                "    return tl.exp(tl.where(x <= 0, x, float('-inf')))"
            ),
        },
        used_by=("sglang_gdn_chunk_h",),
        note="the chunked state recurrence kernel only, fla.op's exp and safe_exp shimmed "
        "as @triton.jit functions (tl.exp, FLA_USE_FAST_OPS unset; the launcher builds the "
        "chunk offsets)",
    ),
    sglang_059(
        name="sglang_bi_bmm",
        path="python/sglang/srt/batch_invariant_ops/batch_invariant_ops.py",
        dest="sglang/bi_bmm.py",
        sha256="34e8e9fd96884a40e45fa1297975572a78cd8170bd704fe818e64a6a91a37620",
        mode="extract",
        functions=("_compute_pid", "bmm_kernel_persistent"),
        used_by=("sglang_bi_bmm",),
        note="the batch-invariant persistent bmm kernel and its tile-order helper only "
        "(deterministic inference's torch.bmm; the module imports SGLang's DeepGEMM "
        "configurer and utilities at import)",
    ),
    sglang_059(
        name="sglang_bi_mean",
        path="python/sglang/srt/batch_invariant_ops/batch_invariant_ops.py",
        dest="sglang/bi_mean.py",
        sha256="0289d76e5b051c3f3e4ea176aa5eeeccc856204add8c307d2f3592472eec59d9",
        mode="extract",
        functions=("mean_kernel",),
        used_by=("sglang_bi_mean",),
        note="the batch-invariant mean over one dimension only (deterministic inference's "
        "aten::mean.dim; the module imports SGLang's DeepGEMM configurer at import)",
    ),
    sglang_059(
        name="sglang_bi_log_softmax",
        path="python/sglang/srt/batch_invariant_ops/batch_invariant_ops.py",
        dest="sglang/bi_log_softmax.py",
        sha256="84892ae3a3d8268a728e348dc45833c68c2de1692d23fbc0dfc4ec3982441a8e",
        mode="extract",
        functions=("_log_softmax_kernel",),
        used_by=("sglang_bi_log_softmax",),
        note="the batch-invariant last-dimension log-softmax only (deterministic inference's "
        "aten::_log_softmax: three passes over each row in 1024-lane blocks; the module "
        "imports SGLang's DeepGEMM configurer at import)",
    ),
    sglang_059(
        name="sglang_silu_mul_masked_quant",
        path="python/sglang/srt/layers/moe/ep_moe/kernels.py",
        dest="sglang/silu_mul_masked_quant.py",
        sha256="acbf3d068a0744c0fe6792e20bed285171971fb21cba8f39c0dcef8bacca7617",
        mode="extract",
        functions=("_silu_and_mul_post_quant_kernel",),
        used_by=("sglang_silu_mul_masked_quant",),
        note="the masked SiLU-and-mul with per-128-group fp8 quantization only (DeepEP "
        "low-latency MoE before DeepGEMM's masked grouped GEMM; the module imports SGLang's "
        "utils and fp8 quantization kernels at import)",
    ),
    sglang_059(
        name="sglang_murmur_hash",
        path="python/sglang/srt/layers/utils/hash.py",
        dest="sglang/murmur_hash.py",
        sha256="0a2a6f109409b7b9f60e56fd3c4ce941c2d6987e01cd6b7e12ebde80752f3fab",
        mode="extract",
        functions=("rotl32", "fmix32", "murmur3_mix", "murmur_hash32_kernel"),
        used_by=("sglang_murmur_hash",),
        note="the seeded sampler's MurmurHash3 kernel and its three helpers (the host "
        "wrapper, which allocates the output, is left out)",
    ),
    sglang_059(
        name="sglang_dit_modulate_select",
        path="python/sglang/jit_kernel/diffusion/triton/scale_shift.py",
        dest="sglang/scale_shift_select01.py",
        sha256="68922b3b5205996e8d6cccaebe4a1ae11c8bcea84ccb40bfc5d45b14dc7438b7",
        mode="extract",
        functions=("fuse_scale_shift_gate_select01_kernel_blc_opt",),
        used_by=("sglang_dit_modulate_select",),
        note="the diffusion runtime's per-token select of two adaLN modulations only "
        "(Qwen-Image-Edit; the module imports the multimodal runtime's platforms at import)",
    ),
    sglang_059(
        name="sglang_dit_scale_shift",
        path="python/sglang/jit_kernel/diffusion/triton/scale_shift.py",
        dest="sglang/scale_shift_blc.py",
        sha256="6cd6a89015a912a5365bb68fdf393274081f423c0ee1205457740d88cbc7e7ca",
        mode="extract",
        functions=("fuse_scale_shift_kernel_blc_opt",),
        used_by=("sglang_dit_scale_shift",),
        note="the diffusion runtime's adaLN modulation kernel (LayerNormScaleShift's "
        "x * (1 + scale) + shift over [batch, tokens, channels] tiles) only (the module "
        "imports the multimodal runtime's platforms at import; the 4-D per-frame kernel, "
        "the select01 kernel and the wrapper left out)",
    ),
    sglang_059(
        name="sglang_kv_move",
        path="python/sglang/srt/mem_cache/memory_pool.py",
        dest="sglang/kv_move.py",
        sha256="5e595562b4534dddd3a63afadf5cd497ee83212fa44a3a584c3626d6349c9cda",
        mode="extract",
        functions=("copy_all_layer_kv_cache_tiled",),
        used_by=("sglang_kv_move",),
        note="the all-layer KV-cache slot move only (the memory pool module imports SGLang's "
        "server args, allocators and disaggregation helpers at import)",
    ),
    sglang_059(
        name="sglang_int8_block_gemm",
        path="python/sglang/srt/layers/quantization/int8_kernel.py",
        dest="sglang/int8_block_gemm.py",
        sha256="2f813b61758096c5e491ac9f0fd91b6cb578b0d3948df10b6a12a370cd86d9c6",
        mode="extract",
        functions=("_w8a8_block_int8_matmul",),
        used_by=("sglang_int8_block_gemm",),
        note="the block-wise int8 W8A8 GEMM only (block-INT8 checkpoints' linear layers; the "
        "module imports SGLang and sgl_kernel at import)",
    ),
    sglang_059(
        name="sglang_ep_gather",
        path="python/sglang/srt/layers/moe/ep_moe/kernels.py",
        dest="sglang/ep_gather.py",
        sha256="343639ca36833eb209dc2e83cdfba12b437f0202dfa85c71b9535f78100c495c",
        mode="extract",
        functions=("_fwd_kernel_ep_gather",),
        used_by=("sglang_ep_gather",),
        note="the DeepEP-normal MoE gather only (the weighted top-k combine after DeepGEMM's "
        "contiguous grouped GEMM; the module imports SGLang's utils and fp8 quantization "
        "kernels at import)",
    ),
    sglang_059(
        name="sglang_ep_scatter",
        path="python/sglang/srt/layers/moe/ep_moe/kernels.py",
        dest="sglang/ep_scatter.py",
        sha256="15b9f5700275eccdee2108c508eaee367d0f0e7c7a66a4c5553d0e4aeefa1ee6",
        mode="extract",
        functions=("_fwd_kernel_ep_scatter_1", "_fwd_kernel_ep_scatter_2"),
        used_by=("sglang_ep_scatter",),
        note="the DeepEP-normal MoE scatter's two kernels only (the counts' segment starts and "
        "m_indices, then each received fp8 row and its scales copied to DeepGEMM's "
        "expert-contiguous layout at rows taken by atomic adds; the module imports SGLang's "
        "utils and fp8 quantization kernels at import)",
    ),
    sglang_059(
        name="sglang_tma_align_scale",
        path="python/sglang/srt/layers/moe/ep_moe/kernels.py",
        dest="sglang/tma_align_scale.py",
        sha256="7f7afff7e736ba0132a2b6a9385f2f3c883ef1c18400d5bf87e877ab8d7a0329",
        mode="extract",
        functions=("_tma_align_input_scale_kernel",),
        used_by=("sglang_tma_align_scale",),
        note="the DeepGEMM MoE runner's TMA alignment of fp32 group scales only (row-major "
        "scales transposed into a column-major buffer with a 16-byte-aligned M stride before "
        "each contiguous grouped GEMM on Hopper; the module imports SGLang's utils and fp8 "
        "quantization kernels at import)",
    ),
    sglang_059(
        name="sglang_fp8_mla_scaled_mm",
        path="python/sglang/srt/layers/quantization/fp8_kernel.py",
        dest="sglang/fp8_mla_scaled_mm.py",
        sha256="46bf5c35d9a933d4f86cfa07c400e5a6389854e5cc062cdefa9d1a831472f6ff",
        mode="extract",
        functions=(
            "_per_tensor_quant_mla_fp8_stage1",
            "_per_tensor_quant_mla_fp8_stage2",
            "scaled_mm_kernel",
        ),
        used_by=("sglang_mla_tensor_quant", "sglang_scaled_mm"),
        note="the absorbed-MLA per-tensor fp8 quantization (its two stages) and the "
        "per-token x per-channel scaled W8A8 GEMM only (the module imports SGLang, "
        "sgl_kernel and DeepGEMM's wrapper at import)",
    ),
    sglang_059(
        name="sglang_kda_kkt",
        path="python/sglang/srt/layers/attention/fla/kda.py",
        dest="sglang/fla_kda_kkt.py",
        sha256="66eed108f27522af205d48d7aaf63a73581648aea92dd058d54f7585748955cf",
        mode="extract",
        functions=(
            "chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_inter",
            "chunk_kda_scaled_dot_kkt_fwd_kernel_intra_sub_intra",
        ),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp, log": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: fla.op's exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)"
            ),
        },
        used_by=("sglang_kda_kkt",),
        note="Kimi Delta Attention's two intra-chunk A / Aqk kernels only, without their "
        "@triton.autotune (the module imports SGLang's FLA helpers at import; fla.op's exp "
        "shimmed as tl.exp, FLA_USE_FAST_OPS unset; the launcher builds the chunk indices)",
    ),
    sglang_059(
        name="sglang_kda_chunk_o",
        path="python/sglang/srt/layers/attention/fla/kda.py",
        dest="sglang/fla_kda_chunk_o.py",
        sha256="5337d9d4b4c8bd3a937a2340fe2679a1a6c0782def9dc408519bdd7786f882ed",
        mode="extract",
        functions=("chunk_gla_fwd_kernel_o",),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp, log": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: fla.op's exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)"
            ),
        },
        used_by=("sglang_kda_chunk_o",),
        note="Kimi Delta Attention's chunk output kernel (chunk_gla_fwd_o_gk's) only, "
        "without its @triton.autotune (the module imports SGLang's FLA helpers at import; "
        "fla.op's exp shimmed as tl.exp, FLA_USE_FAST_OPS unset; the launcher builds the "
        "chunk indices)",
    ),
    sglang_059(
        name="sglang_kda_wy",
        path="python/sglang/srt/layers/attention/fla/kda.py",
        dest="sglang/fla_kda_wy.py",
        sha256="04d54331a9c664d9c5c8aaa86cca5d0223bd95c8e6206fa9e2d7524c929f1eac",
        mode="extract",
        functions=("recompute_w_u_fwd_kernel",),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp, log": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: fla.op's exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)"
            ),
        },
        used_by=("sglang_kda_wy",),
        note="Kimi Delta Attention's WY recompute kernel (recompute_w_u_fwd's, with the "
        "per-channel gate and the kg output) only, without its @triton.autotune (the "
        "module imports SGLang's FLA helpers at import; fla.op's exp shimmed as tl.exp, "
        "FLA_USE_FAST_OPS unset; the launcher builds the chunk indices)",
    ),
    sglang_059(
        name="sglang_ssd_chunk_state",
        path="python/sglang/srt/layers/attention/mamba/ops/ssd_chunk_state.py",
        dest="sglang/ssd_chunk_state.py",
        sha256="b4b2def380f5975b1a88a0b7a266fb372f1d6d7c8706780e26038b12d3a00ab7",
        mode="extract",
        functions=("_chunk_state_fwd_kernel",),
        used_by=("sglang_ssd_chunk_state",),
        note="the Mamba-2 chunk-state kernel only (the module imports mamba_ssm's softplus "
        "relatively, which this kernel does not use)",
    ),
    sglang_059(
        name="sglang_lora_expand",
        path="python/sglang/srt/lora/triton_ops/chunked_sgmv_expand.py",
        dest="sglang/lora_expand.py",
        sha256="10580ae81a093897ecdcf4776c90b9068d0e0f107c96f563dda72283892d5005",
        mode="extract",
        functions=("_chunked_lora_expand_kernel",),
        used_by=("sglang_lora_expand",),
        note="the chunked-SGMV LoRA expand (B) kernel of the csgmv LoRA backend only, "
        "without SGLang's cached_triton_kernel launch cache (the module imports SGLang's "
        "LoRA batch info and utilities at import)",
    ),
    sglang_059(
        name="sglang_lora_shrink",
        path="python/sglang/srt/lora/triton_ops/chunked_sgmv_shrink.py",
        dest="sglang/lora_shrink.py",
        sha256="0fc208eede92c03ae046f3f8449996cd722e51c9f535d43d4e844abc3c4984fa",
        mode="extract",
        functions=("_chunked_lora_shrink_kernel",),
        used_by=("sglang_lora_shrink",),
        note="the chunked-SGMV LoRA shrink (A) kernel of the csgmv LoRA backend only, "
        "without SGLang's cached_triton_kernel launch cache "
        "(the module imports SGLang's LoRA batch info and utilities at import)",
    ),
    sglang_059(
        name="sglang_seg_la_mtp",
        path="python/sglang/srt/layers/attention/linear/seg_la.py",
        dest="sglang/seg_la_mtp.py",
        sha256="4bdbeacccd5c0f6b981dc0c2847f41e603db67a5b65a46692ebb2d8f69dab1dd",
        mode="extract",
        functions=("seg_la_mtp_kernel", "seg_la_sum_kernel"),
        used_by=("sglang_seg_la_mtp",),
        note="the segmented linear attention's MTP verify kernel (the draft tokens walked "
        "in order, each step's state written to the intermediate-state cache) and the split-"
        "sum kernel it is followed by from 2048 tokens; the prefill kernel is pinned apart, "
        "sglang_seg_la",
    ),
    sglang_059(
        name="sglang_ds_sparse_decode",
        path="python/sglang/srt/layers/attention/triton_ops/double_sparsity_attention.py",
        dest="sglang/ds_sparse_decode.py",
        sha256="c2f621665092a16e9ff7f53a574c05e680787b0aecc666ec82608c78182e659f",
        mode="extract",
        functions=(
            "_sparse_fwd_kernel_flash_decode_stage2",
            "_sparse_fwd_kernel_flash_decode_stage3",
        ),
        used_by=("sglang_ds_sparse_decode",),
        note="Double Sparsity's heavy-token flash decode and its split merge only (the "
        "module reads SGLang's server arguments and the CUDA capability at import; the "
        "label-score kernel is pinned apart, sglang_ds_label_scores)",
    ),
    sglang_059(
        name="sglang_ds_dense_decode",
        path="python/sglang/srt/layers/attention/triton_ops/double_sparsity_attention.py",
        dest="sglang/ds_dense_decode.py",
        sha256="0874024ee432c4046a9d66fdde50860127545aed941ec0cd3646f1503dfea68f",
        mode="extract",
        functions=("_fwd_kernel_flash_decode_stage1", "_fwd_kernel_flash_decode_stage2"),
        used_by=("sglang_ds_dense_decode",),
        note="the Double Sparsity backend's dense flash decode (below the sparse threshold) "
        "and its split merge only (the module reads SGLang's server arguments and the CUDA "
        "capability at import; the sparse kernels are pinned apart, sglang_ds_sparse_decode)",
    ),
    sglang_059(
        name="sglang_gdn_chunk_o",
        path="python/sglang/srt/layers/attention/fla/chunk_o.py",
        dest="sglang/fla_chunk_o.py",
        sha256="7c3f9a83abc0d354192d98f0d6e4979ff289b0ed6c8b4572a7c424a12dadd77c",
        mode="extract",
        functions=("chunk_fwd_kernel_o",),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp, safe_exp": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: fla.op's exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)\n\n\n"
                "@triton.jit\n"
                "def safe_exp(x):  # kbopt shim: fla.op's safe_exp, its exp being tl.exp\n"
                "    return tl.exp(tl.where(x <= 0, x, float('-inf')))"
            ),
        },
        used_by=("sglang_gdn_chunk_o",),
        note="the gated delta rule's chunked output kernel only, fla.op's exp and safe_exp "
        "shimmed as @triton.jit functions (tl.exp, FLA_USE_FAST_OPS unset; the launcher builds "
        "the chunk indices)",
    ),
    sglang_059(
        name="sglang_extend_attention",
        path="python/sglang/srt/layers/attention/triton_ops/extend_attention.py",
        dest="sglang/extend_attention.py",
        sha256="b56fb4e5747886c1ce96184eb2c7bd76a10b831a5e4ed101fdf8a17e5e3220bf",
        mode="extract",
        functions=("tanh", "_fwd_kernel"),
        used_by=("sglang_extend_attention",),
        note="the extend (prefill with a cached prefix) attention kernel and its tanh helper "
        "only (the module imports SGLang's prefill attention and utils, and reads the CUDA "
        "capability, at import; the launcher picks the block sizes as "
        "_get_block_sizes_for_extend_attention does)",
    ),
    sglang_059(
        name="sglang_extend_unified",
        path="python/sglang/srt/layers/attention/triton_ops/extend_attention.py",
        dest="sglang/extend_unified.py",
        sha256="a68330473b0de2d069937877ca72433e0d6903b0105071699df45c9746300659",
        mode="extract",
        functions=("tanh", "_fwd_kernel_unified"),
        used_by=("sglang_extend_unified",),
        note="the deterministic-inference unified extend attention kernel and its tanh helper "
        "only (the module imports SGLang's prefill attention and utils, and reads the CUDA "
        "capability, at import; the launcher picks the block sizes as "
        "_get_block_sizes_for_extend_attention does and builds the unified indices as "
        "build_unified_kv_indices leaves them)",
    ),
    sglang_059(
        name="sglang_moe_wna16",
        path="python/sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_kernels.py",
        dest="sglang/moe_wna16.py",
        sha256="5b7572fe65c00789366da434a10a2816817aceebc45bf23e3afd8bf4bbcb1908",
        mode="extract",
        functions=("write_zeros_to_output", "fused_moe_kernel_gptq_awq"),
        used_by=("sglang_moe_wna16",),
        note="the weight-only int4/int8 MoE GEMM of the moe_wna16 method (AWQ and GPTQ MoE "
        "layers without Marlin) and the zero-writing helper it calls only (the module imports "
        "SGLang's utilities and quantization kernels at import; sglang_fused_moe pins the "
        "unquantized kernel of the same file apart)",
    ),
    sglang_059(
        name="sglang_conv1d_update",
        path="python/sglang/srt/layers/attention/mamba/causal_conv1d_triton.py",
        dest="sglang/conv1d_update.py",
        sha256="73a4fe433c53a52cbcb777316609ef0920a026d032758b89dce4b4750202de8a",
        mode="extract",
        functions=("_causal_conv1d_update_kernel",),
        used_by=("sglang_conv1d_update",),
        note="the causal conv1d decode update only (SGLang's hybrid linear-attention backend "
        "runs it on CUDA for every decode step of Qwen3-Next's and Kimi Linear's q, k and v "
        "convolutions; the module's prefill kernel is sgl_kernel's CUDA one there)",
    ),
    sglang_059(
        name="sglang_ssd_chunk_cumsum",
        path="python/sglang/srt/layers/attention/mamba/ops/ssd_chunk_state.py",
        dest="sglang/ssd_chunk_cumsum.py",
        sha256="dfe6094310972c08d92d4e59aa48fd2194835a2dd32e8e85200e3122fd01982f",
        mode="extract",
        functions=("_chunk_cumsum_fwd_kernel",),
        shims={
            "from .mamba_ssm import softplus": (
                "@triton.jit\n"
                "def softplus(dt):  # kbopt shim: mamba_ssm.py's softplus (its Triton 3 branch)\n"
                "    dt = tl.where(dt <= 20.0, tl.math.log(tl.math.exp(dt) + 1), dt)\n"
                "    return dt"
            ),
        },
        used_by=("sglang_ssd_chunk_cumsum",),
        note="the Mamba-2 SSD prefill's first kernel only (dt's bias, softplus and clamp, "
        "and the chunk-local cumsum of dt * A); mamba_ssm's softplus, which the module "
        "imports relatively, written out as its Triton 3 branch",
    ),
    sglang_059(
        name="sglang_ssd_varlen_states",
        path="python/sglang/srt/layers/attention/mamba/ops/ssd_chunk_state.py",
        dest="sglang/ssd_varlen_states.py",
        sha256="0e9c42acb3d24d81040bcd5979e05ec9b2317b3c6b48a50f0c386644e8c40446",
        mode="extract",
        functions=("_chunk_state_varlen_kernel",),
        used_by=("sglang_ssd_varlen_states",),
        note="the Mamba-2 SSD prefill's per-sequence final states only (chunk_state_varlen, "
        "the last kernel of mamba_chunk_scan_combined with cu_seqlens; the module imports "
        "mamba_ssm's softplus relatively, which this kernel does not use)",
    ),
    sglang_059(
        name="sglang_mla_kv_store",
        path="python/sglang/srt/mem_cache/utils.py",
        dest="sglang/mla_kv_store.py",
        sha256="a1215424904486becc7372d00c0430d476bb6db10224b76d5a3be57ec26e7011",
        mode="extract",
        functions=("set_mla_kv_buffer_kernel",),
        used_by=("sglang_mla_kv_store",),
        note="the MLA token-to-KV pool's latent-cache store kernel only (its module imports "
        "SGLang's environ at import)",
    ),
    sglang_059(
        name="sglang_kda_gate",
        path="python/sglang/srt/layers/attention/fla/kda.py",
        dest="sglang/fla_kda_gate.py",
        sha256="608f956b55d6c48455a7afcf21505d2efb6195e38f082bf2bc2c5eb6fe50d240",
        mode="extract",
        functions=("kda_gate_fwd_kernel",),
        shims={
            "from sglang.srt.layers.attention.fla.op import exp, log": (
                "@triton.jit\n"
                "def log(x):  # kbopt shim: fla.op's log, tl.log with FLA_USE_FAST_OPS unset\n"
                "    return tl.log(x)"
            ),
        },
        used_by=("sglang_kda_gate",),
        note="Kimi Delta Attention's forget-gate kernel only, without its @triton.autotune "
        "(the module imports SGLang's FLA helpers at import; fla.op's log shimmed as tl.log, "
        "FLA_USE_FAST_OPS unset)",
    ),
    sglang_059(
        name="sglang_kda_decode",
        path="python/sglang/srt/layers/attention/fla/fused_sigmoid_gating_recurrent.py",
        dest="sglang/fla_kda_decode.py",
        sha256="ee971bef152126a4c2dd77ea1b3a3ec0fd4458055e972b1ab19a6cb0008edd76",
        mode="extract",
        functions=("fused_sigmoid_gating_delta_rule_update_kernel",),
        used_by=("sglang_kda_decode",),
        note="the fused sigmoid-gating delta rule update kernel only, launched in its Kimi "
        "Delta Attention mode (IS_KDA: Kimi-Linear's decode step, the forget gate per key "
        "channel computed inline; its gated-delta-rule mode is the one vLLM's copy is wrapped "
        "in, vllm_gdn_gated_decode); the module imports FLA's input_guard at import, and its "
        "host wrapper, which allocates the output per call, is left out",
    ),
    sglang_059(
        name="sglang_moe_act_mul",
        path="python/sglang/srt/layers/moe/fused_moe_triton/fused_moe_triton_kernels.py",
        dest="sglang/moe_act_mul.py",
        sha256="ef5126a743e91a352d16dffa91ec82b0fbc0388bed2f1300084c761ef5793aad",
        mode="extract",
        functions=("tanh", "_apply_activation", "act_and_mul_kernel"),
        used_by=("sglang_moe_act_mul",),
        note="the expert-filtered activation-and-multiply kernel and its two jit helpers only "
        "(the Triton MoE runner's SiLU/GELU-and-mul between the two grouped GEMMs under expert "
        "parallelism, rows routed to other ranks' experts skipped; the module imports SGLang, "
        "sgl_kernel and the quantization kernels at import; the MoE GEMM is pinned apart as "
        "sglang_fused_moe, the top-k sum as sglang_moe_sum_reduce)",
    ),
    vllm_0340(
        name="vllm_lora_shrink",
        path="vllm/lora/ops/triton_ops/lora_shrink_op.py",
        dest="vllm/lora_shrink.py",
        sha256="5c7fdd106caa6cb8d20b2b00084cd8851269e24ae99a1fdf1acdcc2481966d57",
        mode="extract",
        functions=("_lora_shrink_kernel",),
        used_by=("vllm_lora_shrink",),
        note="the multi-LoRA shrink kernel only (its module imports vLLM's envs, config "
        "helpers and custom-op registry at import); its do_shrink_kernel and mm_k come from "
        "vllm_lora_kernel_utils",
    ),
    vllm_0340(
        name="vllm_lora_kernel_utils",
        path="vllm/lora/ops/triton_ops/kernel_utils.py",
        dest="vllm/lora_kernel_utils.py",
        sha256="de80649e95cb890b4e807a9c06949ddb103975210ec936395477cf13fb85fe12",
        mode="extract",
        functions=("mm_k", "do_shrink_kernel"),
        used_by=("vllm_lora_shrink",),
        note="the shrink's tile product and its K loop (the launcher hands them to the "
        "shrink kernel's module; the expand kernel is left out)",
    ),
    vllm_0340(
        name="vllm_lora_expand",
        path="vllm/lora/ops/triton_ops/lora_expand_op.py",
        dest="vllm/lora_expand.py",
        sha256="13fe70c2fccbad21c7a67f502eb771ab9277ea80c9bbd231b163955a3f319749",
        mode="extract",
        functions=("_lora_expand_kernel",),
        used_by=("vllm_lora_expand",),
        note="the multi-LoRA expand kernel only (its module imports vLLM's envs, LoRA op "
        "config helpers, platforms and custom-op registry at import); its do_expand_kernel "
        "and mm_k come from vllm_lora_expand_utils",
    ),
    vllm_0340(
        name="vllm_lora_expand_utils",
        path="vllm/lora/ops/triton_ops/kernel_utils.py",
        dest="vllm/lora_expand_utils.py",
        sha256="16fee98c661700c8eaa4c9523411ee90fb073b9ad2cffec01191a77db211b3a4",
        mode="extract",
        functions=("mm_k", "do_expand_kernel"),
        used_by=("vllm_lora_expand",),
        note="the expand's tile product and its rank loop (the launcher hands them to the "
        "expand kernel's module; the shrink's do_shrink_kernel is in vllm_lora_kernel_utils)",
    ),
    vllm_0340(
        name="vllm_awq_gemm",
        path="vllm/model_executor/layers/quantization/awq_triton.py",
        dest="vllm/awq_triton.py",
        sha256="f4c80f2403616cf5bff0924664467a6a009089fb4ce8f7f7152d9944d5271c19",
        mode="extract",
        functions=("awq_gemm_kernel",),
        used_by=("vllm_awq_gemm",),
        note="the AWQ int4 GEMM kernel only (its module imports vLLM's triton_utils)",
    ),
    vllm_0340(
        name="vllm_reshape_and_cache",
        path="vllm/v1/attention/ops/triton_reshape_and_cache_flash.py",
        dest="vllm/reshape_and_cache_flash.py",
        sha256="82a90767e228a49e968ffe7318a61d3e3a1614b53dcdf7e3ca1607d64e0f211c",
        mode="extract",
        functions=("reshape_and_cache_kernel_flash",),
        used_by=("vllm_reshape_and_cache",),
        note="the paged KV-cache store kernel only (its module imports vLLM's platform, "
        "quantization and KV-cache helpers at import)",
    ),
    vllm_0340(
        name="vllm_causal_conv1d",
        path="vllm/model_executor/layers/mamba/ops/causal_conv1d.py",
        dest="vllm/causal_conv1d.py",
        sha256="e0561add6ebfe68827dfe3c1506e9960d1427d86a74f7dd52528c5f48d6db7e8",
        shims={
            "from vllm.platforms import current_platform": (
                "class current_platform:  # kbopt shim: vllm.platforms' CUDA platform, as far "
                "as this file asks\n"
                "    @staticmethod\n"
                "    def is_cpu():\n"
                "        return False\n\n"
                "    @staticmethod\n"
                "    def is_arch_support_pdl():\n"
                "        try:\n"
                "            return torch.cuda.get_device_capability()[0] >= 9\n"
                "        except Exception:\n"
                "            return False"
            ),
            "from vllm.triton_utils import tl, triton": (
                "import triton  # kbopt shim: vllm.triton_utils re-exports these\n"
                "import triton.language as tl"
            ),
            "from vllm.v1.attention.backends.utils import NULL_BLOCK_ID, PAD_SLOT_ID": (
                "NULL_BLOCK_ID = 0  # kbopt shim: vllm.v1.attention.backends.utils' constants\n"
                "PAD_SLOT_ID = -1"
            ),
        },
        used_by=("vllm_causal_conv1d",),
        note="the whole file, its three vLLM imports shimmed (the CUDA platform's two "
        "questions, triton, the padding constants); the launcher calls the prefill kernel",
    ),
    vllm_0340(
        name="vllm_gumbel_sample",
        path="vllm/v1/worker/gpu/sample/gumbel.py",
        dest="vllm/gumbel.py",
        sha256="820184641a0e4ea48bd837d66724a85f1f6fc2edc3bc1354577e2d635c0a68f1",
        shims={
            "from vllm.triton_utils import tl, triton": (
                "import triton  # kbopt shim: vllm.triton_utils re-exports these\n"
                "import triton.language as tl"
            ),
            "from vllm.v1.worker.gpu.spec_decode.draft_logits import draft_logits_row": (
                "draft_logits_row = None  # kbopt shim: the draft logits cache's row lookup "
                "(spec decoding), called only with a cache, which the wrapper never passes"
            ),
        },
        used_by=("vllm_gumbel_sample",),
        note="the whole file (its jit helpers and tl.constexpr constants live beside the "
        "kernels), its two vLLM imports shimmed (triton; the draft cache's row lookup, "
        "never reached without a cache); the launcher calls the sample and combine kernels",
    ),
    vllm_0340(
        name="vllm_penalties",
        path="vllm/v1/worker/gpu/sample/penalties.py",
        dest="vllm/penalties.py",
        sha256="ed683b4a42db5dbc0025ccd3d2134002879fb046c93626bee733dda7f66f96ac",
        mode="extract",
        functions=("_penalties_kernel",),
        used_by=("vllm_penalties",),
        note="the sampler's penalties kernel only (its module imports vLLM's sampling "
        "params, buffers and logits-processor interface at import)",
    ),
    vllm_0340(
        name="vllm_l2norm",
        path="vllm/third_party/flash_linear_attention/ops/l2norm.py",
        dest="vllm/fla_l2norm.py",
        sha256="9f0bf0685b6f488f17bd5243e9f76faaae60c9b663974b12302d06177dc52ebe",
        mode="extract",
        functions=("l2norm_fwd_kernel2",),
        used_by=("vllm_l2norm",),
        note="the default L2-norm kernel only (USE_DEFAULT_FLA_NORM unset; the module "
        "imports vLLM's JIT warm-up helpers at import)",
    ),
    vllm_0340(
        name="vllm_lightning_attn_diag",
        path="vllm/model_executor/layers/lightning_attn.py",
        dest="vllm/lightning_attn.py",
        sha256="617e461d8e4fe5bfdef81aed0e40ef975e55795bf894fbb58baf436b56442b2a",
        mode="extract",
        functions=("_fwd_diag_kernel",),
        used_by=("vllm_lightning_attn_diag",),
        note="lightning attention's diagonal-block kernel only (the module imports einops, "
        "vLLM's platform and attention-backend constants at import)",
    ),
    vllm_0340(
        name="vllm_logprob_ranks",
        path="vllm/v1/worker/gpu/sample/logprob.py",
        dest="vllm/logprob_ranks.py",
        sha256="9bb31889efc6e89247fd251a05fa16bb7aa0c72eada787f4967ce088c1d7c56b",
        mode="extract",
        functions=("_ranks_kernel",),
        used_by=("vllm_logprob_ranks",),
        note="the sampled tokens' rank kernel only (its module imports vLLM's sampling "
        "params, outputs and buffer helpers at import)",
    ),
    vllm_0340(
        name="vllm_grammar_bitmask",
        path="vllm/v1/worker/gpu/structured_outputs.py",
        dest="vllm/grammar_bitmask.py",
        sha256="1d93a33523d5a05f375198d30cdd0fd000ecab15f0fb6f864f50163f68b042fb",
        mode="extract",
        functions=("_apply_grammar_bitmask_kernel",),
        used_by=("vllm_grammar_bitmask",),
        note="the structured-output grammar bitmask kernel only (its module imports vLLM's "
        "input batch and CUDA stream helpers at import)",
    ),
    vllm_0340(
        name="vllm_maxsim_rerank",
        path="vllm/v1/pool/flash_maxsim/flash_maxsim_rerank.py",
        dest="vllm/maxsim_rerank.py",
        sha256="7f1c0073abeb8e9c576e7d8a1954fdc014beae11d08a1d8ba97b234e593d7e91",
        mode="extract",
        functions=("_maxsim_rerank_kernel",),
        used_by=("vllm_maxsim_rerank",),
        note="the flash-MaxSim rerank kernel only, without its @triton.autotune (the "
        "package's _common module, with the autotune list, imports vLLM's platforms)",
    ),
    vllm_0340(
        name="vllm_min_p",
        path="vllm/v1/worker/gpu/sample/min_p.py",
        dest="vllm/min_p.py",
        sha256="bd9d4defbc342db931a975ac0707f01e4d40cf3764173324f3aaa9a29547ae95",
        mode="extract",
        functions=("_min_p_kernel",),
        used_by=("vllm_min_p",),
        note="the min-p filter kernel only (its module imports vLLM's triton_utils, "
        "which imports vLLM at import)",
    ),
    vllm_0340(
        name="vllm_rejection_stats",
        path="vllm/v1/worker/gpu/spec_decode/rejection_sampler_utils.py",
        dest="vllm/rejection_stats.py",
        sha256="ec7f233df8fc2793bb20bdf63479fecebdd1e9ef1bb1db4f46b1fc9dcf33f1ca",
        mode="extract",
        functions=(
            "_compute_max_and_sumexp",
            "_is_bonus_logit",
            "_compute_local_logits_stats_kernel",
        ),
        used_by=("vllm_rejection_stats",),
        note="the rejection sampler's per-vocabulary-block logits statistics kernel and its "
        "two jit helpers only (its module imports vLLM's gumbel, watermark and draft-cache "
        "modules at import); its draft_logits_row comes from vllm_draft_logits_row",
    ),
    vllm_0340(
        name="vllm_draft_logits_row",
        path="vllm/v1/worker/gpu/spec_decode/draft_logits.py",
        dest="vllm/draft_logits_row.py",
        sha256="0ae4a7d483f24350f82dd66cdc3c31378d2ef5c9e2115f31ab8926c7c097ff9d",
        mode="extract",
        functions=("draft_logits_row",),
        used_by=("vllm_rejection_stats",),
        note="the draft logits cache's row lookup (the launcher hands it to the rejection "
        "statistics kernel's module; the cache's own kernels are left out)",
    ),
    vllm_0340(
        name="vllm_slot_mapping",
        path="vllm/v1/worker/gpu/block_table.py",
        dest="vllm/slot_mapping.py",
        sha256="a20a277ea0a5b778ab7eb96d28268f13a0fdcea9c74ed95bdb249f01c2e95ffe",
        mode="extract",
        functions=("_compute_slot_mappings_kernel",),
        used_by=("vllm_slot_mapping",),
        note="the block tables' slot-mapping kernel only (its module imports vLLM's "
        "attention backends and buffer helpers at import); its _load_ptr comes from "
        "vllm_load_ptr",
    ),
    vllm_0340(
        name="vllm_load_ptr",
        path="vllm/v1/worker/gpu/buffer_utils.py",
        dest="vllm/load_ptr.py",
        sha256="f116ecfea04b8aa73498a363d5e9f71960cae0ab020015ef00708fbb31f1137a",
        mode="extract",
        functions=("_load_ptr",),
        used_by=("vllm_slot_mapping",),
        note="the buffer helpers' pointer load (a uint64 read and cast to a pointer; the "
        "launcher hands it to the slot-mapping kernel's module; the staged writers' "
        "kernels are left out)",
    ),
    vllm_0340(
        name="vllm_sigmoid_gate_mul",
        path="vllm/kernels/triton/fused_sigmoid_gate_mul.py",
        dest="vllm/sigmoid_gate_mul.py",
        sha256="3c65d5285236bbf004ad1d2939ca018027f73131501ced389939c0f43ca2d574",
        mode="extract",
        functions=("_fused_sigmoid_gate_mul_kernel",),
        used_by=("vllm_sigmoid_gate_mul",),
        note="the attention output gate's sigmoid-multiply kernel only (its module imports "
        "vLLM's platforms and triton_utils at import)",
    ),
    vllm_0340(
        name="vllm_ssd_state_passing",
        path="vllm/model_executor/layers/mamba/ops/ssd_state_passing.py",
        dest="vllm/ssd_state_passing.py",
        sha256="87dad01b50cac036a9a02d9527d2d269043d75e9c921619db9b6f62ab5583496",
        mode="extract",
        functions=("_state_passing_fwd_kernel",),
        used_by=("vllm_ssd_state_passing",),
        note="Mamba-2's inter-chunk state passing kernel only (its module imports vLLM's "
        "triton_utils and mamba triton_helpers at import; the autotune decorator dropped); "
        "its fast_exp comes from vllm_mamba_fast_exp",
    ),
    vllm_0340(
        name="vllm_mamba_fast_exp",
        path="vllm/model_executor/layers/mamba/ops/triton_helpers.py",
        dest="vllm/mamba_fast_exp.py",
        sha256="d2c3cb912e17835b21378a17991aa45b2b73e5deb0740b658cecf48371b6dedd",
        mode="extract",
        functions=("fast_exp",),
        used_by=("vllm_ssd_state_passing", "vllm_ssd_chunk_scan"),
        note="the mamba ops' exp through exp2 (the launcher hands it to the state passing "
        "kernel's module; launch_autotuned is host code, left out)",
    ),
    vllm_0340(
        name="vllm_ssd_chunk_scan",
        path="vllm/model_executor/layers/mamba/ops/ssd_chunk_scan.py",
        dest="vllm/ssd_chunk_scan.py",
        sha256="741384c76f2c3f34bb25ef1007bd0dbf94b9b8b6d41a565363128a8443fbb112",
        mode="extract",
        functions=("_chunk_scan_fwd_kernel",),
        used_by=("vllm_ssd_chunk_scan",),
        note="Mamba-2's chunk scan (output) kernel only (its module imports vLLM's platforms, "
        "triton_utils and mamba triton_helpers at import; the autotune decorator and its "
        "sm90 config filter dropped); its fast_exp comes from vllm_mamba_fast_exp",
    ),
    vllm_0340(
        name="vllm_ngram_propose",
        path="vllm/v1/worker/gpu/spec_decode/ngram/speculator.py",
        dest="vllm/ngram_speculator.py",
        sha256="4b471b4bc259896edba7483a709c67d2116ce708e1f7c5192d69e17ab22648e5",
        mode="extract",
        functions=("_ngram_scan_kernel", "_ngram_finalize_kernel"),
        used_by=("vllm_ngram_propose",),
        note="the GPU n-gram speculator's two kernels only (its module imports vLLM's "
        "config, input batch and speculator base classes at import)",
    ),
    vllm_0340(
        name="vllm_deepencoder_relpos_attn",
        path="vllm/model_executor/models/deepencoder.py",
        dest="vllm/deepencoder_relpos_attn.py",
        sha256="203bbf68debd4571a42469d7e96efde78fb247078a5631dc20c9a015a9db7488",
        mode="extract",
        functions=("_deepencoder_rel_pos_attention_kernel",),
        shims={
            "from vllm.triton_utils import LOG2E, tl, triton": (
                "LOG2E = tl.constexpr(1.4426950408889634)  # kbopt shim: vllm.triton_utils' "
                "LOG2E (log2(e)), made a constexpr as the module makes it"
            ),
        },
        used_by=("vllm_deepencoder_relpos_attn",),
        note="DeepSeek-OCR's SAM encoder global attention with the decomposed relative "
        "position bias fused (its module imports vLLM's model layers at import)",
    ),
    vllm_0340(
        name="vllm_xpress_latent",
        path="vllm/v1/worker/gpu/spec_decode/xpress/kernels.py",
        dest="vllm/xpress_kernels.py",
        sha256="0104b824b29606787a1336b44d1b10c234c6b374e11ca1db99c77a58aac8a7be",
        mode="extract",
        functions=("_xpress_latent_kernel",),
        used_by=("vllm_xpress_latent",),
        note="the XPress Jacobi speculator's fused latent kernel only (the module's "
        "add-and-argmax kernels are left out)",
    ),
    vllm_0340(
        name="vllm_turboquant_store",
        path="vllm/v1/attention/ops/triton_turboquant_store.py",
        dest="vllm/turboquant_store.py",
        sha256="f15312c4bf7c18f3133a956c5242700132463e037feb318584225f654be8e2a9",
        mode="extract",
        functions=("_store_quantized_value", "_tq_fused_store_mse"),
        used_by=("vllm_turboquant_store",),
        note="TurboQuant's fused MSE KV-cache store and its value-packing helper only (its "
        "module imports vLLM's TurboQuant decode ops at import; the fp8-key kernel is left out)",
    ),
    vllm_0340(
        name="vllm_turboquant_decode",
        path="vllm/v1/attention/ops/triton_turboquant_decode.py",
        dest="vllm/turboquant_decode.py",
        sha256="9bca049319b813fb03ac24c215b04dfb73da032ccaceddbbca883b56bb3ee366",
        mode="extract",
        functions=("_tq_decode_stage1",),
        used_by=("vllm_turboquant_decode",),
        note="TurboQuant's split-KV decode attention stage 1 only (its module imports vLLM's "
        "platforms and the Triton decode attention module at import; the bulk dequant kernel "
        "is left out); its split merge comes from vllm_decode_stage2",
    ),
    vllm_0340(
        name="vllm_decode_stage2",
        path="vllm/v1/attention/ops/triton_decode_attention.py",
        dest="vllm/decode_stage2.py",
        sha256="11d1206c6c2cd4cfc2dd79eec905704fa29df9176dc8269161edcf7241584229",
        mode="extract",
        functions=("_fwd_kernel_stage2",),
        used_by=("vllm_turboquant_decode",),
        note="the Triton decode attention's split merge (log-sum-exp reduction) only, which "
        "TurboQuant's decode launches as its second stage (its module imports vLLM's logger "
        "and platforms at import)",
    ),
    vllm_0340(
        name="vllm_topk_topp",
        path="vllm/v1/sample/ops/topk_topp_triton.py",
        dest="vllm/topk_topp.py",
        sha256="3f35522553f0790319901654c688a6dd81dfc9aab0c9c8547d294cb2943e523c",
        mode="extract",
        functions=("_update_min_larger_stats", "_topk_topp_kernel"),
        used_by=("vllm_topk_topp",),
        note="the combined top-k / top-p (Qrita pivot search) kernel and its running-minimum "
        "helper only (its module imports vLLM's JIT warm-up dispatcher and platforms at "
        "import; the split-row top-p pipeline for p-only rows is left out)",
    ),
    vllm_0340(
        name="vllm_topk_topp_tables",
        path="vllm/v1/sample/ops/topk_topp_triton.py",
        dest="vllm/topk_topp_tables.py",
        sha256="6264a524884274824b65c3a3a91d4d34418561cde566c31879cb394acd85f2ef",
        used_by=("vllm_topk_topp",),
        note="the whole module, never imported: the launcher reads its two sigma tables "
        "(_PERCENTILE_TO_STD_TABLE, _NORMAL_CDF_TO_SIGMA_TABLE) from it with ast",
    ),
    vllm_0340(
        name="vllm_logit_bias",
        path="vllm/v1/worker/gpu/sample/logit_bias.py",
        dest="vllm/logit_bias.py",
        sha256="d8897887756bb45c5ebd5a9f58742d1573da3437b1a3b72d403d9cdf5e4c4fff",
        mode="extract",
        functions=("_bias_kernel",),
        used_by=("vllm_logit_bias",),
        note="the logit-bias processor's kernel only (allowed token ids, logit_bias and "
        "min_tokens; its module imports vLLM's sampling params and buffer helpers at import)",
    ),
    vllm_0340(
        name="vllm_vit_mrope_setup",
        path="vllm/model_executor/layers/rotary_embedding/mrope_vit_setup.py",
        dest="vllm/vit_mrope_setup.py",
        sha256="7051e16f674fb53c7a8898694d82b54348405a99c8b88459e41860b72ba1702d",
        mode="extract",
        functions=("_vit_mrope_setup_kernel",),
        used_by=("vllm_vit_mrope_setup",),
        note="the ViT 3-D rotary cos/sin setup kernel only (its module imports vLLM's "
        "pluggable-layer registry and async host-to-device copy helpers at import)",
    ),
    vllm_0340(
        name="vllm_nvfp4_qdq",
        path="vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py",
        dest="vllm/nvfp4_qdq.py",
        sha256="25ec8d459189359c080b16917de5909e1a2b18fbe47a3a15015b116c2ecf470f",
        mode="extract",
        functions=("_round_to_fp4", "_nvfp4_quant_dequant_kernel"),
        used_by=("vllm_nvfp4_qdq",),
        note="the NVFP4 activation quantize-dequantize kernel of the emulation path and its "
        "E2M1 rounding helper only (its module imports vLLM's platforms and scalar types)",
    ),
    vllm_0340(
        name="vllm_qwen3vl_pos_embed",
        path="vllm/model_executor/models/qwen3_vl.py",
        dest="vllm/qwen3vl_pos_embed.py",
        sha256="16956f521a88b6a92e6c3f191200d1ba4d6dc1d83a034f581f4985e6fcc6961b",
        used_by=("vllm_qwen3vl_pos_embed",),
        note="the whole module, never imported (it imports vLLM's model, multimodal and "
        "distributed layers): its _bilinear_pos_embed_kernel sits under `if HAS_TRITON:`, "
        "out of extract's reach, so the launcher copies that function out with ast",
    ),
    vllm_0340(
        name="vllm_dflash2_grouped_conv",
        path="vllm/model_executor/models/qwen3_dflash2.py",
        dest="vllm/dflash2_grouped_conv.py",
        sha256="c2f5cc3a992641ed6713dea47bef51013fc4c96247e77d5f263515919232837f",
        mode="extract",
        functions=("_dflash2_grouped_conv_kernel",),
        used_by=("vllm_dflash2_grouped_conv",),
        note="the DFlash2 draft layer's grouped convolution kernel only (its module imports "
        "vLLM's compilation, config and speculative-decoding layers at import)",
    ),
    vllm_0340(
        name="vllm_draft_budget",
        path="vllm/v1/worker/gpu/spec_decode/adaptive_verification.py",
        dest="vllm/draft_budget.py",
        sha256="eebd163d31d5e0f11e1d6cc1c3a8b2acd5dfc356caec8d434d5518c1dc7ddd53",
        mode="extract",
        functions=("_count_survival_at_least", "_assign_draft_token_budget_kernel"),
        used_by=("vllm_draft_budget",),
        note="adaptive verification's draft-budget kernel and its counting helper only (its "
        "module imports vLLM's config, CUDA graph modes and buffer helpers at import)",
    ),
    vllm_0340(
        name="vllm_sampling_mask",
        path="vllm/v1/worker/gpu/sample/output.py",
        dest="vllm/sampling_mask.py",
        sha256="61e2a3a5f151e3155784cc575122f358f816bacd821079fd6ef1fb35ed7d4e9c",
        mode="extract",
        functions=("_compact_sampling_mask_kernel",),
        used_by=("vllm_sampling_mask",),
        note="the sampler's sampling-mask compaction kernel only (its module imports vLLM's "
        "outputs and numpy helpers at import)",
    ),
    vllm_0340(
        name="vllm_ple_ngram_ids",
        path="vllm/models/qwen4_exp/common/ops/ple.py",
        dest="vllm/ple_ngram_ids.py",
        sha256="8f95ed2055e76d634bd4c1ea35c27b88d3b202093a3446a578abc1866cf23fce",
        mode="extract",
        functions=("_ple_ngram_ids_kernel",),
        used_by=("vllm_ple_ngram_ids",),
        note="Qwen4Exp's per-layer-embedding n-gram hash id kernel only (its module imports "
        "vLLM's platforms and attention backend helpers at import)",
    ),
    vllm_0340(
        name="vllm_dsa_block_scores",
        path="vllm/model_executor/kernels/attention/dsa/candidate_blocks.py",
        dest="vllm/dsa_block_scores.py",
        sha256="d7ea0db041ed4784fbc8ba7b1e906d748d820d37f91b37d2dfed6707efaa0190",
        mode="extract",
        functions=("_max_with_nan", "_block_scores_kernel"),
        used_by=("vllm_dsa_block_scores",),
        note="the sparse-attention indexer's candidate block scoring kernel and its NaN-"
        "propagating maximum only (its module imports vLLM's DeepSelect and indexer top-k "
        "layers at import)",
    ),
    vllm_0340(
        name="vllm_step5_indexer_scores",
        path="vllm/models/step5/common/ops/sparse_indexer_scores.py",
        dest="vllm/step5_indexer_scores.py",
        sha256="aee7e0df86fddc501cdefb16ed7588473ce1f75d5f5ff189847ad884d79f3b54",
        mode="extract",
        functions=("_paged_scores_sm90",),
        used_by=("vllm_step5_indexer_scores",),
        note="Step5's Hopper paged fp8 indexer-scores kernel only (its module imports the "
        "sparse indexer's metadata and vLLM's indexer top-k layers at import)",
    ),
    vllm_0340(
        name="vllm_step5_swa_decode",
        path="vllm/models/step5/nvidia/ops/swa_decode.py",
        dest="vllm/step5_swa_decode.py",
        sha256="247c021f99e632ee1755113fcced6db0aa90264b472b39bb4bb5a57c9be8a4c1",
        mode="extract",
        functions=("_swa_decode_split", "_store_gated", "_swa_decode_combine"),
        used_by=("vllm_step5_swa_decode",),
        note="Step5's sliding-window GQA decode kernels (the split-window attention, its gated "
        "store and the split combine) only (its module imports the DSA decode module's PDL "
        "flag and gate at import); its _gate comes from vllm_step5_decode_gate",
    ),
    vllm_0340(
        name="vllm_step5_decode_gate",
        path="vllm/models/step5/common/ops/sparse_decode_attention.py",
        dest="vllm/step5_decode_gate.py",
        sha256="bdc0d1761e622ce7bc670e49f95154fc094008c7abf8157e83673f25c3d41b1f",
        mode="extract",
        functions=("_gate",),
        shims={
            "from vllm.triton_utils import tl, tldevice, triton": (
                "from triton.language.extra import libdevice as tldevice  # kbopt shim: "
                "vLLM's tldevice is Triton's libdevice (its exp, for the sigmoid)"
            )
        },
        used_by=("vllm_step5_swa_decode",),
        note="the DSA decode module's headwise sigmoid gate helper (the launcher hands it to "
        "the sliding-window decode kernels' module; the DSA decode kernels are left out, and "
        "the module's platform import for its PDL flag)",
    ),
    vllm_0340(
        name="vllm_diffusion_row_stats",
        path="vllm/model_executor/models/diffusion_gemma_sampler.py",
        dest="vllm/diffusion_row_stats.py",
        sha256="63c138ee8c3e7617540accb5e7c3a9b8d974820469ffab5da7f0d789db38ebd8",
        mode="extract",
        functions=("_row_stats_kernel",),
        used_by=("vllm_diffusion_row_stats",),
        note="DiffusionGemma's one-pass row statistics kernel only (the module's wrapper and "
        "torch reference are left out)",
    ),
    vllm_0340(
        name="vllm_quant_embedding",
        path="vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors_embedding.py",
        dest="vllm/quant_embedding.py",
        sha256="f58789825b6143a9a1eeed400d7d3f5d0cd0d4edfa6d2a50a53dc63c648e088f",
        mode="extract",
        functions=("_dequant_gather_kernel",),
        used_by=("vllm_quant_embedding",),
        note="compressed-tensors' dequant-on-lookup embedding kernel only (its module imports "
        "the compressed_tensors package and vLLM's quantization base classes at import)",
    ),
    vllm_0340(
        name="vllm_moe_bitmatrix",
        path="vllm/model_executor/layers/fused_moe/experts/gpt_oss_triton_kernels_moe.py",
        dest="vllm/moe_bitmatrix.py",
        sha256="8644ede10f6976c53217b90edf86f391de1d1075e6f97f9b919c6747aa2dbaeb",
        mode="extract",
        functions=("pack_bitmatrix",),
        used_by=("vllm_moe_bitmatrix",),
        note="the triton_kernels MoE path's top-k bitmatrix packing kernel only (its module "
        "imports triton_kernels' routing and matmul_ogs and vLLM's MoE layers at import)",
    ),
    vllm_0340(
        name="vllm_lightning_decode",
        path="vllm/model_executor/layers/lightning_attn.py",
        dest="vllm/lightning_decode.py",
        sha256="7e04c7ea0125d1279572df12e219171e8709ac634acdf3cd1fd8c22522e478eb",
        mode="extract",
        functions=("_linear_attn_decode_kernel",),
        used_by=("vllm_lightning_decode",),
        note="lightning attention's one-token decode kernel only (the module imports einops, "
        "vLLM's platform and attention-backend constants at import)",
    ),
    vllm_0340(
        name="vllm_batched_moe",
        path="vllm/model_executor/layers/fused_moe/experts/fused_batched_moe.py",
        dest="vllm/batched_moe.py",
        sha256="ef84d3d5176b56cf6b5d254968253785c704e2133838f5c89acdce01c126bf49",
        mode="extract",
        functions=("moe_mmk", "expert_triton_kernel", "batched_triton_kernel"),
        used_by=("vllm_batched_moe",),
        note="the expert-batched MoE GEMM (BatchedTritonExperts) kernel and its two jit "
        "helpers only (the module imports vLLM's modular MoE kernel classes and configs at "
        "import)",
    ),
    sglang_059(
        name="sglang_lightning_inter",
        path="python/sglang/srt/layers/attention/linear/lightning_attn.py",
        dest="sglang/lightning_inter.py",
        sha256="4ea8c41d2d212aa41678988bf3b2c67c8202d7b1eedf2c9488847c8c5259a572",
        mode="extract",
        functions=("_fwd_kv_parallel", "_fwd_kv_reduce", "_fwd_none_diag_kernel"),
        used_by=("sglang_lightning_inter",),
        note="lightning attention's three inter-block kernels only (the block states, their "
        "decayed prefix and the queries' product with it; the diagonal and decode kernels "
        "left out)",
    ),
    sglang_059(
        name="sglang_awq_dequant",
        path="python/sglang/srt/layers/quantization/awq_triton.py",
        dest="sglang/awq_dequant.py",
        sha256="b4871d0873925dc02ac3b235ab9dc3c78a31b656ad89adc32409222cc14f00f0",
        mode="extract",
        functions=("awq_dequantize_kernel",),
        used_by=("sglang_awq_dequant",),
        note="the AWQ int4 weight dequantization kernel only (the ROCm AWQ path's dequantize "
        "before a dense matmul; the module's AWQ GEMM kernel left out)",
    ),
    sglang_059(
        name="sglang_fp8_kv_store",
        path="python/sglang/srt/layers/attention/triton_ops/trtllm_fp8_kv_kernel.py",
        dest="sglang/fp8_kv_store.py",
        sha256="0f9b17d0436fda10d8cb2d2844e532035aec76d9ae22df402e16d35a5380412e",
        mode="extract",
        functions=("_process_kv_tensor", "_fused_fp8_set_kv_buffer_kernel"),
        used_by=("sglang_fp8_kv_store",),
        note="the TRT-LLM MHA backend's fused FP8 quantize + paged KV-cache store kernel and "
        "its per-tensor helper only (the module's wrapper and naive fallback left out)",
    ),
    sglang_059(
        name="sglang_kda_cumsum",
        path="python/sglang/srt/layers/attention/fla/cumsum.py",
        dest="sglang/fla_kda_cumsum.py",
        sha256="4dbfd144ebcc3ff6d1ac33d33cbb4ef04a0e35ddae9b16e713ff668e832b300a",
        mode="extract",
        functions=("chunk_local_cumsum_vector_kernel",),
        used_by=("sglang_kda_cumsum",),
        note="the per-channel (vector) chunk-local cumsum kernel only, without its "
        "@triton.autotune (Kimi Delta Attention's gate cumsum; the module's SGLang imports, "
        "its scalar kernel and the wrappers left out)",
    ),
    sglang_059(
        name="sglang_qkv_lora_b",
        path="python/sglang/srt/lora/triton_ops/qkv_lora_b.py",
        dest="sglang/qkv_lora_b.py",
        sha256="651887dd815f56c7a6c366200f795e475a83093f20135111448e0badb78191a2",
        mode="extract",
        functions=("_qkv_lora_b_kernel",),
        used_by=("sglang_qkv_lora_b",),
        note="the triton LoRA backend's fused QKV B kernel only (the module imports SGLang's "
        "LoRA batch info at import; its wrapper left out)",
    ),
    sglang_059(
        name="sglang_sgemm_lora_a",
        path="python/sglang/srt/lora/triton_ops/sgemm_lora_a.py",
        dest="sglang/sgemm_lora_a.py",
        sha256="3734f40d779dec16c6a34ffc8b8193147f1735eeb92054b1f3a7e362781f27af",
        mode="extract",
        functions=("_sgemm_lora_a_kernel",),
        used_by=("sglang_sgemm_lora_a",),
        note="the triton LoRA backend's segmented A GEMM only (one program row per request's "
        "contiguous tokens; the csgmv backend's chunked shrink is pinned apart as "
        "sglang_lora_shrink); the module imports SGLang's LoRA batch info at import, and its "
        "wrapper, which allocates the output per call, is left out",
    ),
    sglang_059(
        name="sglang_dit_rotary",
        path="python/sglang/jit_kernel/diffusion/triton/rotary.py",
        dest="sglang/dit_rotary.py",
        sha256="c0ac81a67d290ebaa49feb70bf6456bd3da9058c08179ad956cdd692cb7c0b67",
        mode="extract",
        functions=("_rotary_embedding_kernel",),
        used_by=("sglang_dit_rotary",),
        note="the diffusion runtime's rotary kernel only, without its @triton.autotune (the "
        "module imports SGLang's multimodal_gen platform at import; apply_rotary_embedding "
        "left out, the launcher launching the kernel as it does, one autotune config a version)",
    ),
    sglang_059(
        name="sglang_rms_norm_gated",
        path="python/sglang/srt/layers/attention/fla/layernorm_gated.py",
        dest="sglang/fla_rms_norm_gated.py",
        sha256="c64145abd0cba1f55933ee5dcb821d931bd1c56db1affe7bd04177e987891db9",
        mode="extract",
        functions=("_layer_norm_fwd_1pass_kernel",),
        used_by=("sglang_rms_norm_gated",),
        note="the gated (group) RMSNorm / LayerNorm forward kernel only (the module imports "
        "SGLang's server arguments and utilities at import; its wrappers and the SM-count "
        "rows-per-block rule left out)",
    ),
    sglang_059(
        name="sglang_mla_decode_rope",
        path="python/sglang/srt/layers/attention/triton_ops/rocm_mla_decode_rope.py",
        dest="sglang/mla_decode_rope.py",
        sha256="91212af3cef0e9c840861724c415de68b07db2e8e27eac3f48d9a0eeba8a55f6",
        mode="extract",
        functions=("tanh", "_fwd_grouped_kernel_stage1_rope"),
        used_by=("sglang_mla_decode_rope",),
        note="the rope-fused grouped MLA decode stage 1 and its tanh only (the module imports "
        "decode_attention's split merge, whose 0.5.9 signature its wrapper no longer matches, "
        "and asks the Triton driver for the backend at import)",
    ),
    vllm_0340(
        name="vllm_expert_count",
        path="vllm/model_executor/layers/fused_moe/utils.py",
        dest="vllm/expert_count.py",
        sha256="0549da8f33e309b8ab15ac9a38af5ebcb910d912df47e38002fd70a5cb9fe6be",
        mode="extract",
        functions=("_count_expert_num_tokens",),
        used_by=("vllm_expert_count",),
        note="the DeepGEMM MoE path's per-expert token count kernel only (its module imports "
        "vLLM's MoE config, quantization utilities and platform at import)",
    ),
    vllm_0340(
        name="vllm_gelu_sparse",
        path="vllm/kernels/triton/activation.py",
        dest="vllm/gelu_sparse.py",
        sha256="223c9e427fa807a13d1c8ce612f83a641fbd082822fac70c010b637c4eb775b3",
        mode="extract",
        functions=("_gelu_and_mul_sparse_kernel",),
        used_by=("vllm_gelu_sparse",),
        note="Gemma 3n's activation-sparsity GELU-and-mul kernel only (its module imports "
        "vLLM's IR op registry and platform at import)",
    ),
    vllm_0340(
        name="vllm_mrope_positions",
        path="vllm/v1/worker/gpu/mm/rope.py",
        dest="vllm/mrope_positions.py",
        sha256="3c71f6bcc409d834ba22eb93cc29259d55f5e4026b668b0e4137f7f9e436ee32",
        mode="extract",
        functions=("_prepare_rope_positions_kernel",),
        used_by=("vllm_mrope_positions",),
        note="the GPU model runner's M-RoPE position preparation kernel only (its module "
        "imports vLLM's config, model interfaces and UVA buffer utilities at import)",
    ),
    vllm_0340(
        name="vllm_markov_noise",
        path="vllm/models/kimi_k3/nvidia/specialized_decode/drafter/markov.py",
        dest="vllm/markov_noise.py",
        sha256="6eb2417b50650b9a139ca854fe1209f6c6fdf891d03c1a94b63f6272b1908f7f",
        mode="extract",
        functions=("_gumbel_log_arg32", "_markov_noise_kernel"),
        used_by=("vllm_markov_noise",),
        note="DSpark's precomputed Gumbel noise kernel and its jit helper only (its module "
        "imports vLLM's logger, gumbel and draft-cache modules at import); murmur3_uniform32, "
        "_log1p_neg_stable and spec_step_seed come from vllm_gumbel_sample",
    ),
    vllm_0340(
        name="vllm_moe_mul_sum",
        path="vllm/model_executor/layers/fused_moe/moe_fused_mul_sum.py",
        dest="vllm/moe_mul_sum.py",
        sha256="ab300e38370a517bda10172e1adf4e02e4ef3f86f8d4154ee4e3383f08b3f1f1",
        mode="extract",
        functions=("moe_fused_mul_sum_kernel",),
        used_by=("vllm_moe_mul_sum",),
        note="the Humming MoE experts' weighted top-k sum kernel only (its module imports "
        "vLLM's platform and torch's fake tensors at import)",
    ),
    vllm_0340(
        name="vllm_kv_offload_gather",
        path="vllm/distributed/kv_transfer/kv_connector/v1/hf3fs/utils/gather_scatter_helper.py",
        dest="vllm/kv_offload_gather.py",
        sha256="93f54c4aed74a0e12f1b8f207a9364f82b8fecbaeb6e84a3e610d0c3f0a902fa",
        mode="extract",
        functions=("kv_cache_gather_kernel",),
        used_by=("vllm_kv_offload_gather",),
        note="the HF3FS KV connector's multi-layer KV cache gather kernel only (its module "
        "imports vLLM's logger and torch utilities at import)",
    ),
    vllm_0340(
        name="vllm_hadamard_mma",
        path="vllm/v1/attention/ops/int4_per_token_head.py",
        dest="vllm/hadamard_mma.py",
        sha256="299f42c963d65bfba35e89b0adc60ac35c1cbfff73819b23de82adb8b997a0c5",
        mode="extract",
        functions=("_hadamard_mma_kernel",),
        used_by=("vllm_hadamard_mma",),
        note="the INT4 per-token-head KV cache's Hadamard-by-MMA kernel only (its module "
        "imports vLLM's platform, custom ops and attention utilities at import)",
    ),
    vllm_0340(
        name="vllm_bi_matmul",
        path="vllm/model_executor/determinism/batch_invariant.py",
        dest="vllm/bi_matmul.py",
        sha256="7fdbe44d65b06a72a2a9a8faa9aa40b6f17e15b924c5c986489eb43d0d140146",
        mode="extract",
        functions=("_compute_pid", "matmul_kernel_persistent"),
        shims={
            "def _matmul_launch_metadata(": (
                "# kbopt shim: the profiler-only launch_metadata hook (names the launch and "
                "counts its flops for proton) left out\n"
                "_matmul_launch_metadata = None"
            ),
        },
        used_by=("vllm_bi_matmul",),
        note="the batch-invariant persistent matmul kernel and its tile-order helper only "
        "(VLLM_BATCH_INVARIANT's aten::mm / addmm / linear; the module imports vLLM's envs, "
        "platform, NCCL and distributed utilities at import)",
    ),
    vllm_0340(
        name="vllm_block_topk",
        path="vllm/models/minimax_m3/common/ops/index_topk.py",
        dest="vllm/block_topk.py",
        sha256="01a449fb3af01b30c450a07bc40f6e90bdaeb76d0eab60a23cd548ee616b5ca1",
        mode="extract",
        functions=("_compare_and_swap", "_bitonic_merge", "_topk_index_kernel"),
        used_by=("vllm_block_topk",),
        note="MiniMax M3's prefill index top-k kernel and its two bitonic helpers only (its "
        "module imports vLLM's platform and math utilities at import)",
    ),
    vllm_0340(
        name="vllm_paged_sconv",
        path="vllm/models/inkling/nvidia/ops/sconv.py",
        dest="vllm/paged_sconv.py",
        sha256="8561e6c01741dc894661070cc7fd7f87fe69840f1e12e714029f01cd4792075b",
        mode="extract",
        functions=("_fused_sconv_kernel",),
        used_by=("vllm_paged_sconv",),
        note="Inkling's fused short-convolution kernel over its paged sliding-window conv "
        "cache only (the module's per-sequence metadata kernel left out)",
    ),
    vllm_0340(
        name="vllm_greedy_argmax",
        path="vllm/v1/worker/gpu/sample/greedy_argmax.py",
        dest="vllm/greedy_argmax.py",
        sha256="f44998213b0de4abccc49b09028cb77f3c86271f1fb04f701776d0e0a6d07b95",
        mode="extract",
        functions=("_argmax_partial", "_argmax_finish"),
        used_by=("vllm_greedy_argmax",),
        note="the model runner's split-vocabulary greedy argmax (partial and finish kernels; "
        "the module's torch fallback left out)",
    ),
    vllm_0340(
        name="vllm_prefix_prefill",
        path="vllm/v1/attention/ops/prefix_prefill.py",
        dest="vllm/prefix_prefill.py",
        sha256="2057268478ee365143a62f6b6a1838bce176f5b2a806055c45fec65f4bf98ed3",
        mode="extract",
        functions=("_paged_kv_cache_offsets", "_fwd_kernel"),
        shims={
            "float8_info = torch.finfo(current_platform.fp8_dtype())": (
                "import torch\n"
                "float8_info = torch.finfo(torch.float8_e4m3fn)  # kbopt shim: CUDA's fp8 dtype"
            ),
        },
        used_by=("vllm_prefix_prefill",),
        note="the prefix-caching prefill attention kernel and its paged-offset helper only "
        "(its module imports vLLM's platform at import; the kernel's FP8 bounds default to "
        "module-level float8_info, shimmed to CUDA's e4m3fn)",
    ),
    vllm_0340(
        name="vllm_gdn_gated_decode",
        path="vllm/third_party/flash_linear_attention/ops/fused_sigmoid_gating.py",
        dest="vllm/gdn_gated_decode.py",
        sha256="1b9a8cce5d2ac094ba8813d406ae1dae4b5f1de7b6e26852dbffc1170a37b91c",
        mode="extract",
        functions=("fused_sigmoid_gating_delta_rule_update_kernel",),
        used_by=("vllm_gdn_gated_decode",),
        note="the fused sigmoid-gating gated delta rule decode kernel only (its module imports "
        "vLLM's triton_utils at import; the @triton.heuristics decorator dropped, its four "
        "flags passed by the launcher as the heuristics set them)",
    ),
    vllm_0340(
        name="vllm_unified_attention",
        path="vllm/v1/attention/ops/triton_unified_attention.py",
        dest="vllm/unified_attention.py",
        sha256="c3cc157d4e634fca9db5bd0c80b945f9a87dfaad5feeb3a508fc0efd9f53d2b3",
        mode="extract",
        functions=(
            "_cast_kv_tile",
            "_load_q_td",
            "_load_kv_tile_td",
            "_store_output_td",
            "kernel_unified_attention",
        ),
        shims={
            "float8_info = torch.finfo(current_platform.fp8_dtype())": (
                "import torch\n\n"
                "float8_info = torch.finfo(torch.float8_e4m3fn)  # kbopt shim: the platform's "
                "fp8 dtype (e4m3fn on CUDA), whose range the kernel's FP8_MIN/FP8_MAX default to"
            ),
        },
        used_by=("vllm_unified_attention",),
        note="the TRITON_ATTN backend's unified attention kernel and its in-file tile helpers "
        "(its module imports vLLM's envs, logger, platforms and KV cache interface at "
        "import); its softmax, mask and loop-bound helpers come from vllm_attention_helpers",
    ),
    vllm_0340(
        name="vllm_attention_helpers",
        path="vllm/v1/attention/ops/triton_attention_helpers.py",
        dest="vllm/attention_helpers.py",
        sha256="afa46763b24b2e52253ea41eedfc80a082810568d14c662c06cc33b157dbaa6b",
        mode="extract",
        functions=(
            "cdiv_fn",
            "apply_softcap",
            "resolve_seq_and_query_len",
            "find_seq_idx",
            "init_softmax_M",
            "compute_tile_loop_bounds",
            "store_segm_reduce_scalars",
            "compute_kv_seq_mask",
            "apply_alibi_to_score",
            "load_qq_bias_tile",
            "softmax_step",
        ),
        used_by=("vllm_unified_attention",),
        note="the Triton attention kernels' shared @triton.jit helpers (the launcher hands "
        "them to the unified attention kernel's module)",
    ),
    vllm_0340(
        name="vllm_rel_proj",
        path="vllm/models/inkling/nvidia/ops/qkvr_prep.py",
        dest="vllm/rel_proj.py",
        sha256="b04fa3d608fd9a03639c4d5e997acf60a3bd5d0b82afc626fd449a1da9e2f83b",
        mode="extract",
        functions=("_rel_proj_low_latency_kernel", "_rel_proj_throughput_kernel"),
        used_by=("vllm_rel_proj",),
        note="Inkling's relative-position projection kernels only (its module imports "
        "vLLM's torch utilities at import)",
    ),
    vllm_0340(
        name="vllm_moe_lora",
        path="vllm/lora/ops/triton_ops/fused_moe_lora_op.py",
        dest="vllm/moe_lora.py",
        sha256="ecaf3d3cf2fecf7824f833533b5e304b46cacf6b11883eb639141114361d32ae",
        mode="extract",
        functions=("_fused_moe_lora_one_shot_kernel",),
        used_by=("vllm_moe_lora",),
        note="the one-shot fused MoE-LoRA shrink+expand kernel only (its module imports "
        "vLLM's distributed collectives, platform and custom-op registry at import; the "
        "@triton.heuristics decorator dropped, its EVEN_K passed by the launcher as the "
        "heuristic sets it)",
    ),
    vllm_0340(
        name="vllm_gdn_post_conv",
        path="vllm/third_party/flash_linear_attention/ops/fused_gdn_prefill_post_conv.py",
        dest="vllm/gdn_post_conv.py",
        sha256="8b04d2bb4f578b33736753cb4bc742dcf914f417b292867f6d9d970989f8c2e3",
        mode="extract",
        functions=("_fused_post_conv_kernel",),
        used_by=("vllm_gdn_post_conv",),
        note="the GDN prefill's fused post-conv1d split, q/k L2 norm and gating kernel only "
        "(its module imports vLLM's triton_utils at import)",
    ),
    vllm_0340(
        name="vllm_qk_norm_rope_gate",
        path="vllm/model_executor/layers/fused_qk_norm_rope.py",
        dest="vllm/qk_norm_rope_gate.py",
        sha256="23eb73e34479cfeb45cc0097ed6ba8018406a2a98e3d3c1d9842a77c126127a1",
        mode="extract",
        functions=("_fused_qk_rmsnorm_rope_gate_kernel",),
        used_by=("vllm_qk_norm_rope_gate",),
        note="the Qwen3-Next/Qwen3.5 attention's fused q/gate split, QK RMSNorm, partial "
        "RoPE and gate copy kernel only (its module imports vLLM's triton_utils at import)",
    ),
    vllm_0340(
        name="vllm_gdn_initial_states",
        path="vllm/model_executor/layers/mamba/ops/gather_initial_states.py",
        dest="vllm/gdn_initial_states.py",
        sha256="9fab98b8cc3859e568002f1a4a72a561d26621d17ae11927613cc9043bc3e826",
        mode="extract",
        functions=("_gather_initial_states_kernel",),
        used_by=("vllm_gdn_initial_states",),
        note="the GDN prefill's initial-state gather kernel only (its module imports vLLM's "
        "platform and triton_utils at import)",
    ),
    vllm_0340(
        name="vllm_routing_topk",
        path="vllm/third_party/triton_kernels/topk_details/_topk_forward.py",
        dest="vllm/routing_topk.py",
        sha256="4b157efa18e040546af40a1eab0cd95f75c6c0a4270a40fbd39cdf05fc9f1120",
        mode="extract",
        functions=(
            "get_topmask_and_fullmask",
            "fpval_to_key",
            "key_to_fpval",
            "indx_to_key",
            "key_to_indx",
            "streaming_topk",
            "_topk_forward",
        ),
        used_by=("vllm_routing_topk",),
        note="the vendored triton_kernels' routing top-k kernel and its key helpers (the "
        "file imports only Triton; extracted so the copy names only what the spec launches)",
    ),
    vllm_0340(
        name="vllm_vit_rotary",
        path="vllm/vllm_flash_attn/ops/triton/rotary.py",
        dest="vllm/vit_rotary.py",
        sha256="f65b36641dd1e37aa3b286cfd64a332d9b1d93a81b546aeed57fa6444cc28a63",
        mode="extract",
        functions=("rotary_kernel",),
        used_by=("vllm_vit_rotary",),
        note="the bundled flash-attention rotary kernel only (Tri Dao's, copied into vLLM; "
        "its apply_rotary wrapper left out, the launcher launching the kernel as it does)",
    ),
    vllm_0340(
        name="vllm_m3_sparse_prefill",
        path="vllm/models/minimax_m3/nvidia/ops/sparse_prefill.py",
        dest="vllm/m3_sparse_prefill.py",
        sha256="d638953e614fa4c5fc2903bdd34d62e73fee4f27e05f02d1a9210fffc47f686e",
        mode="extract",
        functions=("_gqa_sparse_fwd_tiled_kernel",),
        used_by=("vllm_m3_sparse_prefill",),
        note="MiniMax M3's Hopper query-tiled block-sparse GQA prefill kernel only (its module "
        "imports MiniMax M3's common sparse-attention ops, which import vLLM's platform)",
    ),
    vllm_0340(
        name="vllm_kimi_attn_res",
        path="vllm/models/kimi_k3/nvidia/ops/attn_res.py",
        dest="vllm/kimi_attn_res.py",
        sha256="8bb53b919327a182342c41e40b8b872debd89ad602086f4391c5c1b09114a19d",
        mode="extract",
        functions=("_attn_res_kernel",),
        used_by=("vllm_kimi_attn_res",),
        note="Kimi K3's block attention-residuals kernel only (its module imports vLLM's "
        "custom ops and platform for the SM100 native path and PDL)",
    ),
    vllm_0340(
        name="vllm_m3_sparse_decode",
        path="vllm/models/minimax_m3/common/ops/sparse_attn.py",
        dest="vllm/m3_sparse_decode.py",
        sha256="7b7abe979d53064f771c7324092313d6e64c8a2ca362c17952bb4fb9488c72fc",
        mode="extract",
        functions=("_gqa_sparse_decode_kernel", "_merge_topk_attn_out_kernel"),
        used_by=("vllm_m3_sparse_decode",),
        note="MiniMax M3's split-K block-sparse GQA decode and its chunk merge only, without "
        "their @triton.heuristics (the launcher passes BLOCK_SIZE_H and BLOCK_SIZE_D as they "
        "compute them); the module's generic prefill kernel is left out (Hopper runs "
        "vllm_m3_sparse_prefill's), and the module imports vLLM's platform",
    ),
    vllm_0340(
        name="vllm_kda_state_commit",
        path="vllm/models/kimi_k3/nvidia/ops/recoverssm.py",
        dest="vllm/kda_state_commit.py",
        sha256="723d0321781d927f17d3f7071e2517bce2f92569a0ee123e3990e019b2f63882",
        mode="extract",
        functions=("_kda_gate", "_commit_kda_state_kernel"),
        used_by=("vllm_kda_state_commit",),
        note="Kimi K3's KDA RecoverSSM state fold (the Triton commit of every KDA layer in one "
        "launch) and its gate helper only (the module imports vLLM's CuTe commit, mamba "
        "utils and attention backends); its verify, commit-plan and conv-compaction kernels "
        "left out (the launcher takes the plan as an input)",
    ),
    vllm_0340(
        name="vllm_nvfp4_moe",
        path="vllm/model_executor/layers/fused_moe/experts/nvfp4_emulation_moe.py",
        dest="vllm/nvfp4_moe.py",
        sha256="10994feb54978c3dfe0d76cf49de85361277b144004e04cd094b5f4cefe64cfe",
        mode="extract",
        functions=("fused_moe_nvfp4_emulation_kernel",),
        used_by=("vllm_nvfp4_moe",),
        note="the NVFP4 emulation MoE GEMM only (its module imports vLLM's modular MoE "
        "kernel, TritonExperts and quantization utils at import; the host-side invoke and "
        "apply left out, the launcher launching the kernel as they do); its E2M1 decode and "
        "zero-fill helpers come from vllm_nvfp4_e2m1 and vllm_moe_write_zeros",
    ),
    vllm_0340(
        name="vllm_nvfp4_e2m1",
        path="vllm/model_executor/layers/quantization/utils/nvfp4_emulation_utils.py",
        dest="vllm/nvfp4_e2m1.py",
        sha256="b1a8a56f50002bcb1b7eef2d292a0d326fc5fcf08da3368bda30e8d63e5bb2b7",
        mode="extract",
        functions=("_e2m1_inline",),
        used_by=("vllm_nvfp4_moe",),
        note="the NVFP4 nibble decode helper only (the launcher hands it to the NVFP4 "
        "emulation MoE kernel's module; the same file's quantize-dequantize kernel is pinned "
        "apart, vllm_nvfp4_qdq)",
    ),
    vllm_0340(
        name="vllm_moe_write_zeros",
        path="vllm/model_executor/layers/fused_moe/fused_moe.py",
        dest="vllm/moe_write_zeros.py",
        sha256="d62f2ebdf95d1df05f247594d38585abd4cb598ac2910a931fc75957590f2d6c",
        mode="extract",
        functions=("write_zeros_to_output",),
        used_by=("vllm_nvfp4_moe",),
        note="the fused MoE module's zero-fill helper for blocks of experts off this rank "
        "only (the launcher hands it to the NVFP4 emulation MoE kernel's module); the "
        "module's fused_moe_kernel and fused_moe_kernel_gptq_awq are left out (SGLang's "
        "copies are wrapped as sglang_fused_moe and sglang_moe_wna16)",
    ),
    vllm_0340(
        name="vllm_replayssm_decode",
        path="vllm/model_executor/layers/mamba/ops/selective_state_update_replayssm_output_only.py",
        dest="vllm/replayssm_decode.py",
        sha256="8b044e2702194143a75e47507626a8c458f7aa4c569ba51a85f0da05e0b687d9",
        mode="extract",
        functions=("_replayssm_output_only_precompute_kernel", "_replayssm_output_only_kernel"),
        shims={
            "from vllm.model_executor.layers.mamba.ops.mamba_ssm import convert_rs_fp16x2, "
            "softplus": (
                "@triton.jit\n"
                "def softplus(dt):  # kbopt shim: mamba_ssm's softplus (its Triton 3 form)\n"
                "    return tl.where(dt <= 20.0, tl.math.log(tl.math.exp(dt) + 1), dt)\n\n\n"
                "@triton.jit\n"
                "def convert_rs_fp16x2(x, rand):  # kbopt shim: never called here; stochastic\n"
                "    # rounding (an fp16 state and an opt-in flag) stays off, vLLM's default\n"
                "    return x.to(tl.float16)"
            ),
        },
        used_by=("vllm_replayssm_decode",),
        note="ReplaySSM's Mamba2 decode step (the per-group B.C precompute and the output-only / "
        "flush kernel) only (its module imports vLLM's mamba_ssm helpers, ReplaySSM config, "
        "platform and attention-backend utils at import; the @triton.heuristics decorators "
        "dropped, their flags passed by the launcher as they set them); the planning kernel "
        "in ssu_dispatch.py left out (the launcher takes the write positions and flush flags "
        "as inputs)",
    ),
    vllm_0340(
        name="vllm_silu_mul_colmajor_quant",
        path="vllm/model_executor/layers/quantization/utils/fp8_utils.py",
        dest="vllm/silu_mul_colmajor_quant.py",
        sha256="caff305ea7a3e2fb87e33d141af9d6052a8c35166ff0d0ea1d930749fbf4a957",
        mode="extract",
        functions=("_silu_mul_per_token_group_quant_fp8_colmajor",),
        used_by=("vllm_silu_mul_colmajor_quant",),
        note="the fused SiLU-and-mul fp8 group quantization into column-major scales only "
        "(DeepGemmExperts' activation between DeepGEMM's contiguous grouped GEMMs on Hopper; "
        "the module imports vLLM's envs, custom ops, platforms and DeepGEMM utilities at "
        "import); its per-token-group quantization kernels (row-major, column-major and "
        "UE8M0-packed), the packed SiLU-and-mul of the UE8M0-packed path and the "
        "block-scaled fp8 GEMM are left out",
    ),
    vllm_0340(
        name="vllm_dsv4_inv_rope_quant",
        path="vllm/models/deepseek_v4/common/ops/fused_inv_rope_fp8_quant.py",
        dest="vllm/dsv4_inv_rope_quant.py",
        sha256="9e1d972c93c78a7aaa430d802de4b72cc0b5243f0733e8a9f4643240bd37184d",
        used_by=("vllm_dsv4_inv_rope_quant",),
        note="the whole module, never imported (it imports vLLM's JIT warm-up helpers, "
        "platform and custom-op registry): its kernel is a @staticmethod of "
        "FusedInvRopeFP8QuantKernel (DeepSeek-V4's inverse RoPE and block fp8 quantization "
        "before the grouped wo_a einsum), out of extract's reach, so the launcher copies "
        "that method out with ast",
    ),
    flaggems_502(
        name="flaggems_conv2d",
        path="src/flag_gems/ops/conv2d.py",
        dest="flag_gems/conv2d.py",
        sha256="a8c4995a31ebc33842c0063a2cbf2d4655e5db76009dbfa79d5cff29c3144ed7",
        mode="extract",
        functions=("conv2d_forward_kernel",),
        used_by=("flaggems_conv2d",),
        note="the implicit-GEMM forward kernel only (its module imports FlagGems' runtime, "
        "whose @libentry and YAML-tuned @triton.autotune wrap it)",
    ),
    flaggems_502(
        name="flaggems_topk",
        path="src/flag_gems/ops/topk.py",
        dest="flag_gems/topk.py",
        sha256="283584835e8b88523ca385672b4c06d2fe42a0d48210027a199a4872344916c3",
        mode="extract",
        functions=(
            "_get_finfo_val",
            "_compare_and_swap",
            "_bitonic_merge",
            "argsort",
            "topk_stage1_kernel",
            "topk_stage2_kernel",
        ),
        shims={
            "import torch": "import torch",
            "import triton.language.core as core": "import triton.language.core as core",
            "    from triton.language.standard import _log2, zeros_like": (
                "from triton.language.standard import _log2, zeros_like"
            ),
            "from flag_gems.utils import triton_lang_extension as tle": (
                "import types  # kbopt shim: flag_gems.utils.triton_lang_extension, as far as "
                "the top-k asks\n\n\n"
                "@triton.jit\n"
                "def _tle_program_id(axis: int) -> tl.tensor:\n"
                "    return tl.program_id(axis).to(tl.int64)\n\n\n"
                "@triton.jit\n"
                "def _tle_num_programs(axis: int) -> tl.tensor:\n"
                "    return tl.num_programs(axis).to(tl.int64)\n\n\n"
                'tle = types.ModuleType("tle")\n'
                "tle.program_id = _tle_program_id\n"
                "tle.num_programs = _tle_num_programs"
            ),
            **{
                line: line
                for line in (
                    "_MIN_FLOAT32_VAL = tl.constexpr(torch.finfo(torch.float32).min)",
                    "_MAX_FLOAT32_VAL = tl.constexpr(torch.finfo(torch.float32).max)",
                    "_MIN_FLOAT16_VAL = tl.constexpr(torch.finfo(torch.float16).min)",
                    "_MAX_FLOAT16_VAL = tl.constexpr(torch.finfo(torch.float16).max)",
                    "_MIN_BFLOAT16_VAL = tl.constexpr(torch.finfo(torch.bfloat16).min)",
                    "_MAX_BFLOAT16_VAL = tl.constexpr(torch.finfo(torch.bfloat16).max)",
                    "_MIN_INT32_VAL = tl.constexpr(torch.iinfo(torch.int32).min)",
                    "_MAX_INT32_VAL = tl.constexpr(torch.iinfo(torch.int32).max)",
                )
            },
        },
        used_by=("flaggems_topk", "flaggems_quantile"),
        note="the two-stage top-k (per-chunk selection, then a bitonic argsort of the chunks' "
        "candidates) with its jit helpers and dtype-limit constants; FlagGems' program-id "
        "helpers (int64 ids) shimmed, the FlagTree-only radix kernel left out",
    ),
    flaggems_502(
        name="flaggems_upsample_nearest2d",
        path="src/flag_gems/ops/upsample_nearest2d.py",
        dest="flag_gems/upsample_nearest2d.py",
        sha256="965e3dd02dea93b7554bfac95ae1c24211c1f49518eef5774d4b73a822b67880",
        mode="extract",
        functions=("upsample_nearest2d_kernel",),
        used_by=("flaggems_upsample_nearest2d",),
        note="the nearest-neighbour resampling kernel only (its module imports FlagGems' "
        "runtime, whose YAML-tuned @triton.autotune and @triton.heuristics wrap it)",
    ),
    flaggems_502(
        name="flaggems_avg_pool2d",
        path="src/flag_gems/ops/avg_pool2d.py",
        dest="flag_gems/avg_pool2d.py",
        sha256="648e4fe7a6e03185169fd092f06cd61a08ca3ec5becc8b166b32427577eb3fee",
        mode="extract",
        functions=("avg_pool2d_forward_kernel",),
        used_by=("flaggems_avg_pool2d",),
        note="the average-pooling forward kernel only (its module imports FlagGems' "
        "@libentry; the @triton.autotune over nine tiles is dropped)",
    ),
    flaggems_502(
        name="flaggems_radix_sort",
        path="src/flag_gems/ops/sort.py",
        dest="flag_gems/sort.py",
        sha256="cea7269a6320410fe4e03547dbd06dd930c9c51ba2340915fd9f364f4b4ea56a",
        mode="extract",
        functions=(
            "uint_to_uint",
            "int_to_uint",
            "floating_to_uint",
            "convert_to_uint_preverse_order",
            "compute_global_hist_kernel",
            "sweep",
        ),
        shims={
            "def get_int_t(num_bits: tl.constexpr, signed: tl.constexpr) -> tl.dtype:": (
                "# kbopt shim: sort.py's compile-time helpers (tl.constexpr functions that the "
                "key conversion calls)\n\n\n"
                "def _unwrap(o):\n"
                "    return o.value if isinstance(o, tl.constexpr) else o\n\n\n"
                "@tl.constexpr\n"
                "def get_int_t(num_bits, signed):\n"
                "    return tl.core.get_int_dtype(_unwrap(num_bits), _unwrap(signed))\n\n\n"
                "@tl.constexpr\n"
                "def one_zeros(num_bits):\n"
                "    return 1 << (_unwrap(num_bits) - 1)\n\n\n"
                "@tl.constexpr\n"
                "def zero_ones(num_bits):\n"
                "    return (1 << (_unwrap(num_bits) - 1)) - 1"
            ),
        },
        used_by=("flaggems_radix_sort",),
        note="the LSD radix sort's two kernels (a per-pass digit histogram added atomically, "
        "then per pass a scatter whose bin offsets come from a decoupled look-back) with the "
        "order-preserving key conversions; the compile-time dtype helpers shimmed, the "
        "bitonic sort_kernel (top-k's argsort) left out",
    ),
    flaggems_502(
        name="flaggems_batch_norm",
        path="src/flag_gems/ops/batch_norm.py",
        dest="flag_gems/batch_norm.py",
        sha256="323605ceba5b93a78d1ba302e90090ef0546170d943d573319446345be402b58",
        mode="extract",
        functions=("batch_norm_forward_kernel",),
        shims={
            "rsqrt = tl_extra_shim.rsqrt": (
                "from triton.language.extra import libdevice  # kbopt shim: FlagGems' "
                "tl_extra_shim is CUDA's libdevice\n\n"
                "rsqrt = libdevice.rsqrt"
            ),
        },
        used_by=("flaggems_batch_norm",),
        note="the batch-norm forward kernel only (its module imports FlagGems' runtime, "
        "whose @libentry, YAML-tuned @triton.autotune and @triton.heuristics wrap it)",
    ),
    flaggems_502(
        name="flaggems_embedding_backward",
        path="src/flag_gems/ops/embedding_dense_backward.py",
        dest="flag_gems/embedding_dense_backward.py",
        sha256="ca9c1eb9ba9df066f5838872c70c5a50f1f0b70f1ec38a8a2c0c48fc9bf57630",
        mode="extract",
        functions=("_embedding_dense_backward_kernel",),
        used_by=("flaggems_embedding_backward",),
        note="the atomic scatter-add kernel only (the scale_grad_by_freq pair, a count "
        "kernel and a scaled scatter, left out: nn.Embedding's default is off)",
    ),
    flaggems_502(
        name="flaggems_hadamard",
        path="src/flag_gems/ops/hadamard_transform.py",
        dest="flag_gems/hadamard_transform.py",
        sha256="77239a1b69424187fd590ce564085ab9a9750932a806b70fe74a8ef7cfa566b1",
        mode="extract",
        functions=("_butterfly_stage_2d", "_fht_kernel_2d"),
        used_by=("flaggems_hadamard",),
        note="the fp32 2-D butterfly kernel and its stage helper (the path FlagGems takes "
        "above 1024 columns, and for fp32); the seven other specialised kernels left out",
    ),
    flaggems_502(
        name="flaggems_max_pool2d",
        path="src/flag_gems/ops/max_pool2d_with_indices.py",
        dest="flag_gems/max_pool2d_with_indices.py",
        sha256="5e84cc945fecebe5c466c93a4e56abe65a33b078a85dfe9620549f0f2dd22585",
        mode="extract",
        functions=("max_pool2d_forward_kernel",),
        shims=dict(_DTYPE_MIN_SHIM),
        used_by=("flaggems_max_pool2d",),
        note="the max-pooling forward kernel only (its module imports FlagGems' @libentry; "
        "the @triton.autotune over twelve tiles is dropped, the backward kernel left out)",
    ),
    flaggems_502(
        name="flaggems_masked_select",
        path="src/flag_gems/ops/masked_select.py",
        dest="flag_gems/masked_select.py",
        sha256="8f580bc9d1219f974e1444c94aab588b3eae8d4f6e91a3dbfb9a215283a5a9ac",
        mode="extract",
        functions=("mask_part_sum_kernel", "write_back_kernel"),
        used_by=("flaggems_masked_select",),
        note="the two-pass stream compaction (per-program mask counts whose last program, "
        "found by an atomic ticket, scans them; then the selected values written at their "
        "offsets); the single-program kernel for 4096 elements or fewer left out",
    ),
    flaggems_502(
        name="flaggems_upsample_bicubic2d_aa",
        path="src/flag_gems/ops/upsample_bicubic2d_aa.py",
        dest="flag_gems/upsample_bicubic2d_aa.py",
        sha256="ea35125bd8e066dcb6cc6712c08a90ee740de57948c0a9f1297b6f25b1b9d98e",
        mode="extract",
        functions=("general_interpolate_bicubic2d_aa_kernel",),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_upsample_bicubic2d_aa",),
        note="the general (downsampling) anti-aliased bicubic kernel only (its module "
        "imports FlagGems' runtime, whose YAML-tuned @triton.autotune wraps it); the "
        "fixed 4-tap upsampling kernel left out",
    ),
    flaggems_502(
        name="flaggems_cumsum",
        path="src/flag_gems/ops/cumsum.py",
        dest="flag_gems/cumsum.py",
        sha256="6d176602817786c610a1f3668f5114476bbc43b8be10856e02eaea947a697294",
        mode="extract",
        functions=(
            "reduce_then_scan_block_sum_kernel_row",
            "reduce_then_scan_root_scan_kernel_row",
            "reduce_then_scan_block_scan_kernel_row",
        ),
        shims={
            "def get_scan_accum_type(inp_dtype: tl.dtype) -> tl.dtype:": (
                "# kbopt shim: cumsum.py's compile-time accumulator dtype (a tl.constexpr "
                "function): fp32 for 16-bit floats, int64 for integers, else the input's\n\n\n"
                "@tl.constexpr\n"
                "def get_scan_accum_type(inp_dtype):\n"
                "    inp_dtype = inp_dtype.value if isinstance(inp_dtype, tl.constexpr) "
                "else inp_dtype\n"
                "    if inp_dtype.is_bf16() or inp_dtype.is_fp16():\n"
                "        return tl.float32\n"
                "    if inp_dtype.is_int():\n"
                "        return tl.int64\n"
                "    return inp_dtype"
            ),
        },
        used_by=("flaggems_cumsum",),
        note="the row scan's three reduce-then-scan kernels (tile sums per program, a scan "
        "of them per row, then each program's tiles scanned from its prefix) with the "
        "accumulator dtype helper shimmed; the persistent one-program path (16384 columns "
        "or fewer) is the middle kernel, the column scans left out",
    ),
    flaggems_502(
        name="flaggems_scatter_add",
        path="src/flag_gems/ops/scatter_add_.py",
        dest="flag_gems/scatter_add_.py",
        sha256="f4b70eaaf314b4d04f7c2ecff0a909fec132cf9d668b28b73bfe19b254d20a16",
        mode="extract",
        functions=("scatter_add_kernel_1",),
        used_by=("flaggems_scatter_add",),
        note="the flat last-dimension kernel (each element's value added atomically at its "
        "index), FlagGems' path when the index covers the whole last dimension; the "
        "code-generated strided kernel for the other cases left out",
    ),
    flaggems_502(
        name="flaggems_isin",
        path="src/flag_gems/ops/isin.py",
        dest="flag_gems/isin.py",
        sha256="2e623a0b4451438673726f47ec5d5559cfe7b6fe359aabb791d6a39ed06d1d7f",
        mode="extract",
        functions=("isin_by_search_impl", "isin_by_search_kernel"),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_isin",),
        note="the binary-search kernel and its per-tile body (FlagGems' path when either "
        "tensor has more than 12288 elements); the all-pairs comparison kernel for small "
        "inputs and the unique-based path left out",
    ),
    flaggems_502(
        name="flaggems_repeat_interleave",
        path="src/flag_gems/ops/repeat_interleave.py",
        dest="flag_gems/repeat_interleave.py",
        sha256="7e41eab9427782eb2abe77e46b55411ac17c3d92c843f79409a842821ae3afab",
        mode="extract",
        functions=("repeat_interleave_tensor_kernel",),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_repeat_interleave",),
        note="the tensor-repeats kernel (one program per entry writes its index repeats "
        "times at its offset); the pointwise copy for a scalar repeat, made by FlagGems' "
        "code generator, left out",
    ),
    flaggems_502(
        name="flaggems_count_nonzero",
        path="src/flag_gems/ops/count_nonzero.py",
        dest="flag_gems/count_nonzero.py",
        sha256="403300ecfdd6afd6fc8dae40abd9d2709fd2cb2ffb2a6862053a125849691654",
        mode="extract",
        functions=("count_nonzero_combin_kernel", "count_nonzero_combin_kernel_1"),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_count_nonzero",),
        note="the two kernels of a count along a dimension longer than 2048 (int64 counts "
        "per 2048-column block, then each row's block counts summed; the second under a "
        "YAML-tuned @triton.autotune, dropped); the whole-tensor and short-row kernels "
        "left out",
    ),
    flaggems_502(
        name="flaggems_index_select",
        path="src/flag_gems/ops/index_select.py",
        dest="flag_gems/index_select.py",
        sha256="9005510a64c3894207c094c0ede93e79b7e853f6a5ed41b2bcdc839e7055facf",
        mode="extract",
        functions=("index_select_kernel",),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_index_select",),
        note="the index_select kernel (rows of the dimension-compressed input, the selected "
        "columns gathered per tile; its @triton.heuristics tile choice dropped)",
    ),
    flaggems_502(
        name="flaggems_argmax",
        path="src/flag_gems/ops/argmax.py",
        dest="flag_gems/argmax.py",
        sha256="d20eefb2ec60348ba03103f3c9ced2cffda374e71716c5ad7d0c28b30f9e29f6",
        mode="extract",
        functions=("argmax_kernel_inner",),
        shims={
            **_TLE_SHIM,
            **_DTYPE_MIN_SHIM,
        },
        used_by=("flaggems_argmax",),
        note="the argmax over the last dimension (one program per row looping over "
        "TILE_N-wide tiles; its @triton.heuristics choice dropped); the whole-tensor and "
        "inner-dimension kernels left out",
    ),
    flaggems_502(
        name="flaggems_unfold_backward",
        path="src/flag_gems/ops/unfold_backward.py",
        dest="flag_gems/unfold_backward.py",
        sha256="1306ce79de6da7adf74cb9611345ce508bd6ea47e8e19e31585f474656868193",
        mode="extract",
        functions=("_unfold_backward_kernel",),
        used_by=("flaggems_unfold_backward",),
        note="the unfold backward kernel (each window element's gradient added atomically "
        "into fp32 at its position: an overlap-add)",
    ),
    flaggems_502(
        name="flaggems_quantile",
        path="src/flag_gems/ops/quantile.py",
        dest="flag_gems/quantile.py",
        sha256="3e8b919426f4f6e6ed84262ec68c298f075eef033f21e84c4dfd9282ad301d65",
        mode="extract",
        functions=("quantile_bitonic_kernel",),
        shims={
            **_TLE_SHIM,
            "from flag_gems.utils import libentry, tl_extra_shim": (
                "from triton.language.extra import libdevice as tl_extra_shim  # kbopt shim: "
                "FlagGems' tl_extra_shim is CUDA's libdevice (its rint, for 'nearest')"
            ),
            "from .topk import _get_finfo_val, argsort": (
                "# kbopt shim: `from .topk import _get_finfo_val, argsort`; the launcher sets "
                "both on this module from topk.py as fetched for flaggems_topk (the same "
                "v5.0.2 file)\n"
                "_get_finfo_val = argsort = None"
            ),
        },
        used_by=("flaggems_quantile",),
        note="the one-program-per-row quantile of rows of at most 1024 (a bitonic sort of "
        "the row in registers with topk.py's argsort, then the quantiles picked and "
        "interpolated); the path for longer rows (torch's sort, then a gather kernel) left "
        "out",
    ),
    flaggems_502(
        name="flaggems_var_mean",
        path="src/flag_gems/ops/var_mean.py",
        dest="flag_gems/var_mean.py",
        sha256="bffa798c38cafc14bce4a0f113b04b24e7e4d112d0f4e96b3f691e552697a39f",
        mode="extract",
        functions=("welford_func", "var_mean_welford_kernel"),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_var_mean",),
        note="the per-row Welford var_mean (BLOCK_M rows per program, per-lane running "
        "statistics merged by tl.reduce with welford_func; its YAML-tuned @triton.autotune "
        "dropped); the whole-tensor two-kernel path left out",
    ),
    flaggems_502(
        name="flaggems_soft_margin_loss",
        path="src/flag_gems/ops/soft_margin_loss.py",
        dest="flag_gems/soft_margin_loss.py",
        sha256="66e702eb6dfe13948f58f8a36a52345146590793838a82486e8ddac0772e213d",
        mode="extract",
        functions=("_soft_margin_loss_sum_kernel",),
        used_by=("flaggems_soft_margin_loss",),
        note="the soft-margin loss with a sum or mean reduction (each 1024-element "
        "program's fp32 sum of log(1 + exp(-x y)) added atomically into one scalar); the "
        "elementwise kernel for reduction='none' left out",
    ),
    flaggems_502(
        name="flaggems_upsample_linear1d",
        path="src/flag_gems/ops/upsample_linear1d.py",
        dest="flag_gems/upsample_linear1d.py",
        sha256="5889d23263ffb69651fe5880ecd26fac67e9fa5fb2cbe855df51104b96e78449",
        mode="extract",
        functions=("upsample_linear1d_kernel",),
        used_by=("flaggems_upsample_linear1d",),
        note="the 1-D linear interpolation (one program per row and 256 output samples, "
        "two gathered source samples weighted in fp32)",
    ),
    flaggems_502(
        name="flaggems_pixel_unshuffle",
        path="src/flag_gems/ops/pixel_unshuffle.py",
        dest="flag_gems/pixel_unshuffle.py",
        sha256="0a4f88adeda1902cf680fa19dfd6295a757937e3cba02b8e2e1290e77e1ac9ab",
        mode="extract",
        functions=("pixel_unshuffle_kernel",),
        used_by=("flaggems_pixel_unshuffle",),
        note="pixel_unshuffle (space to depth over contiguous NCHW: 1024 output elements "
        "per program, each decoded to its input element and copied)",
    ),
    flaggems_502(
        name="flaggems_kron",
        path="src/flag_gems/ops/kron.py",
        dest="flag_gems/kron.py",
        sha256="cda2d14af72ad3c0302ee70596d8979c2a341a53e0b0fb0e670260368153235a",
        mode="extract",
        functions=("kron_kernel_for_batch_size_1",),
        shims=_TLE_SHIM,
        used_by=("flaggems_kron",),
        note="the Kronecker product of two matrices (no batch dimensions): BLOCK_M x "
        "BLOCK_N output tiles, each element one product of a gathered pair",
    ),
    flaggems_502(
        name="flaggems_mv",
        path="src/flag_gems/ops/mv.py",
        dest="flag_gems/mv.py",
        sha256="1a803ff6342d21d7228df79fd1e0be4282501e8adf978e4f5e197346d662e981",
        mode="extract",
        functions=("mv_kernel",),
        shims=_TLE_SHIM,
        used_by=("flaggems_mv",),
        note="the matrix-vector product (GEMV): BLOCK_N output rows per program, each "
        "walking the row in BLOCK_M-column steps of fp32 products, summed at the end",
    ),
    flaggems_502(
        name="flaggems_dropout",
        path="src/flag_gems/ops/dropout.py",
        dest="flag_gems/dropout.py",
        sha256="cd2596a43ab03a28dbc3dcfa21ad7f78483583f84019b30514cdc0c149fc6a77",
        mode="extract",
        functions=("dropout_forward_kernel",),
        shims={
            "from flag_gems.utils.random_utils import (": (
                "uint_to_uniform_float = tl.uint_to_uniform_float  # kbopt shim: FlagGems' "
                "random_utils takes Triton's own when it exists (Triton 3.6 has it); its "
                "host-side philox_backend_seed_offset is the launcher's"
            ),
        },
        used_by=("flaggems_dropout",),
        note="the dropout forward (native_dropout): one Philox4x32 call per BLOCK counters "
        "gives four uniforms, each masking one of four BLOCK-element slices; the backward "
        "kernel left out",
    ),
    flaggems_502(
        name="flaggems_weight_norm",
        path="src/flag_gems/ops/weightnorm.py",
        dest="flag_gems/weightnorm.py",
        sha256="8dc4134a5d9cd443afd04184450939e5bac6a1caedd39de747a976428223bd9e",
        mode="extract",
        functions=("weight_norm_kernel_first",),
        shims=_TLE_SHIM,
        used_by=("flaggems_weight_norm",),
        note="the weight-norm forward over dim 0 (_weight_norm_interface: BLOCK_ROW_SIZE "
        "output channels per program, each row's fp32 sum of squares over BLOCK_COL_SIZE "
        "steps, then a second read scaled by g / norm; its YAML-tuned @triton.autotune "
        "dropped); the last-dimension kernel and both backward kernels left out",
    ),
    flaggems_502(
        name="flaggems_one_hot",
        path="src/flag_gems/ops/one_hot.py",
        dest="flag_gems/one_hot.py",
        sha256="79b19d22f916d889653e1599890b100465a64e54ae4868dbf0aef986e0543122",
        mode="extract",
        functions=("one_hot_kernel",),
        used_by=("flaggems_one_hot",),
        note="one_hot (BLOCK_M indices per program, each compared with BLOCK_N classes per "
        "loop step and stored as int64)",
    ),
    flaggems_502(
        name="flaggems_nll_loss",
        path="src/flag_gems/ops/nllloss.py",
        dest="flag_gems/nllloss.py",
        sha256="673a55df28ae37ca281fb49ec4c6690c28e5f9ecfe46dcb58a85049d2f54f575",
        mode="extract",
        functions=("nll_loss_forward_kernel",),
        used_by=("flaggems_nll_loss",),
        note="the NLL loss forward over [N, C] (BLOCK_N rows per program gather their "
        "target's log-probability; mean: per-program sums added atomically, the last "
        "program dividing); the 2-d kernel and both backward kernels left out",
    ),
    flaggems_502(
        name="flaggems_index_add",
        path="src/flag_gems/ops/index_add.py",
        dest="flag_gems/index_add.py",
        sha256="9ec4a2af3083980837089cdd26b9321ef25029041eab7ad8f0c7b3485f34025d",
        shims={
            "from flag_gems.utils.code_cache import code_cache_dir": (
                "def code_cache_dir():  # kbopt shim: FlagGems' code cache folder, a temporary one\n"
                "    import pathlib\n"
                "    import tempfile\n\n"
                "    return pathlib.Path(tempfile.gettempdir())"
            ),
            "from flag_gems.utils.code_utils import IndentedBuffer": (
                "class IndentedBuffer:  # kbopt shim: FlagGems' (PyTorch inductor's) code buffer\n"
                "    def __init__(self, initial_indent=0):\n"
                "        self._lines, self._indent = [], initial_indent\n\n"
                "    def getvalue(self):\n"
                '        return "\\n".join(self._lines) + "\\n"\n\n'
                "    def writeline(self, line):\n"
                '        self._lines.append(" " * 4 * self._indent + line if line.strip() else "")\n\n'
                "    def newline(self):\n"
                '        self._lines.append("")\n\n'
                "    def indent(self, offset=1):\n"
                "        import contextlib\n\n"
                "        @contextlib.contextmanager\n"
                "        def ctx():\n"
                "            self._indent += offset\n"
                "            try:\n"
                "                yield\n"
                "            finally:\n"
                "                self._indent -= offset\n\n"
                "        return ctx()"
            ),
        },
        used_by=("flaggems_index_add",),
        note="the whole file: a code generator whose kernel (one per source rank) exists only "
        "as the text it writes; its two FlagGems imports shimmed (a temporary code cache "
        "folder and a minimal IndentedBuffer), the generated @libentry dropped by the launcher",
    ),
    flaggems_502(
        name="flaggems_vector_norm",
        path="src/flag_gems/ops/vector_norm.py",
        dest="flag_gems/vector_norm.py",
        sha256="fe31c7b928cd3332b78fc61e23b65b9b06db2df35d9d31e1b79d1f2c89192acd",
        mode="extract",
        functions=("l2_norm_kernel_1", "l2_norm_kernel_2"),
        shims=_TLE_SHIM,
        used_by=("flaggems_vector_norm",),
        note="the whole-tensor L2 norm's two kernels only (per-program sums of squares into "
        "a partial buffer, then one program's square root of their sum)",
    ),
    flaggems_502(
        name="flaggems_cat",
        path="src/flag_gems/ops/cat.py",
        dest="flag_gems/cat.py",
        sha256="8dd1563cf51f35cab94027d8e62e3171628ad07766b7ca90b9f5e2ce5d1253d2",
        mode="extract",
        functions=("cat_copy_func_kernel_4",),
        used_by=("flaggems_cat",),
        note="the concatenation kernel (up to four contiguous inputs per launch, one grid "
        "row each: BLOCK_X input elements per program, each decoded to its output index "
        "and copied)",
    ),
    flaggems_502(
        name="flaggems_trace",
        path="src/flag_gems/ops/trace.py",
        dest="flag_gems/trace.py",
        sha256="7e9fbcc91e70689dbcbd8ad265084c31cf0b36885024111793041b901c31b977",
        mode="extract",
        functions=("trace_kernel",),
        used_by=("flaggems_trace",),
        note="the trace kernel (one program walks the diagonal BLOCK_SIZE elements at a "
        "time, stride0 + stride1 apart, summing them in fp32)",
    ),
    flaggems_502(
        name="flaggems_paged_mqa_metadata",
        path="src/flag_gems/ops/get_paged_mqa_logits_metadata.py",
        dest="flag_gems/get_paged_mqa_logits_metadata.py",
        sha256="41381997e625b3b8f92397d88add305afdfc365b5c4e4656bcf3631ad2de5f69",
        mode="extract",
        functions=("_paged_mqa_logits_metadata_kernel",),
        used_by=("flaggems_paged_mqa_metadata",),
        note="DeepSeek-V3.2's paged MQA logits schedule (DeepGEMM's get_paged_mqa_logits_"
        "metadata): every program scans the batch's 256-token segment counts and stores "
        "its SM's first request and split",
    ),
    flaggems_502(
        name="flaggems_rwkv_mm_sparsity",
        path="src/flag_gems/fused/rwkv_mm_sparsity.py",
        dest="flag_gems/rwkv_mm_sparsity.py",
        sha256="d1c08376f90342545e5be4e13fe5abe6dfc3432a200285ad41f68f6e540883fa",
        mode="extract",
        functions=("rwkv_mm_sparsity_kernel",),
        used_by=("flaggems_rwkv_mm_sparsity",),
        note="RWKV-7's sparse channel-mix value product: 16 output columns per program walk "
        "the key vector in 512-row steps, loading only the value rows whose key is non-zero",
    ),
    flaggems_502(
        name="flaggems_topk_softmax",
        path="src/flag_gems/fused/topk_softmax.py",
        dest="flag_gems/topk_softmax.py",
        sha256="1c638cdf748a074c5c79b5a5e3b5cd2a09a1f5f11346ce057d87e22846d7412a",
        mode="extract",
        functions=("topk_gating_softmax_kernel",),
        used_by=("flaggems_topk_softmax",),
        note="the MoE gating top-k softmax (vLLM's topk_softmax op): a tile of token rows "
        "per program, each row's softmax over the experts, then k rounds of max and argmax",
    ),
    flaggems_502(
        name="flaggems_attention_bwd",
        path="src/flag_gems/ops/attention.py",
        dest="flag_gems/attention_bwd.py",
        sha256="0648fe030c875dd06d7d0685b8bdf9661af130e5f9a9b38567c396243fcd2d0d",
        mode="extract",
        functions=("_attn_bwd_preprocess", "_attn_bwd_dkdv", "_attn_bwd_dq", "_attn_bwd"),
        used_by=("flaggems_attention_bwd",),
        note="scaled_dot_product_attention's causal backward (Triton tutorial 06's "
        "FlashAttention-2 backward: the o.do preprocess, then one kernel for dK, dV and dQ), "
        "without its @libentry and YAML-tuned @libtuner; the forward kernels are left out",
    ),
    flaggems_502(
        name="flaggems_sdpa_masked_fwd",
        path="src/flag_gems/ops/attention.py",
        dest="flag_gems/attention_fwd.py",
        sha256="0c1b8395b176199e422571344372508bb9dcdd58404a117eef5e5b3a2495f671",
        mode="extract",
        functions=("_attn_fwd_inner", "_attn_fwd"),
        used_by=("flaggems_sdpa_masked_fwd",),
        note="scaled_dot_product_attention's forward (Triton tutorial 06's FlashAttention-2 "
        "forward with an additive attention mask tile and grouped-query heads), without its "
        "@libentry and YAML-tuned @libtuner; the backward kernels are left out",
    ),
    flaggems_502(
        name="flaggems_grouped_topk",
        path="src/flag_gems/fused/grouped_topk.py",
        dest="flag_gems/grouped_topk.py",
        sha256="ea31fc0b801333962aeb77cf877756c749ded6109e109411e25f3b1d89c0bfc6",
        mode="extract",
        functions=("topk_with_k2_triton", "group_idx_and_topk_triton"),
        used_by=("flaggems_grouped_topk",),
        note="DeepSeek-V3's group-limited top-k routing: each group's top-2 sum, then per "
        "token the best groups and the top-k experts among them (two kernels)",
    ),
    flaggems_502(
        name="flaggems_multinomial",
        path="src/flag_gems/ops/multinomial.py",
        dest="flag_gems/multinomial.py",
        sha256="5fd6cf753ad9c8fd03cb6211a22fbe06dce5a5416b40d13326f20359de5bbe88",
        mode="extract",
        functions=("multinomial_with_replacement",),
        shims={
            "from flag_gems.utils.random_utils import philox_backend_seed_offset, uniform": (
                "# kbopt shim: FlagGems' flag_gems.utils.random_utils.uniform (v5.0.2, "
                "verbatim): four uniforms from one Philox4x32-10 call on counter offset + i; "
                "its host-side philox_backend_seed_offset is the launcher's\n"
                "uint_to_uniform_float = tl.uint_to_uniform_float\n\n\n"
                "@triton.jit\n"
                "def uniform(seed, philox_offset, offset):\n"
                "    seed = seed.to(tl.int64)\n"
                "    philox_offset = philox_offset.to(tl.int64)\n"
                "    c0 = (philox_offset & 0xFFFFFFFF).to(tl.uint32)\n"
                "    c1 = ((philox_offset >> 32) & 0xFFFFFFFF).to(tl.uint32)\n"
                "    i4 = offset\n"
                "    c0 += i4\n"
                "    _O = c0 * 0\n"
                "    r0, r1, r2, r3 = tl.philox(seed, c0, c1, _O, _O)\n"
                "    r0 = uint_to_uniform_float(r0)\n"
                "    r1 = uint_to_uniform_float(r1)\n"
                "    r2 = uint_to_uniform_float(r2)\n"
                "    r3 = uint_to_uniform_float(r3)\n"
                "    return r0, r1, r2, r3"
            ),
        },
        used_by=("flaggems_multinomial",),
        note="multinomial sampling with replacement (one program per 128 samples of a "
        "distribution: a Philox uniform each, then a binary search of the normalised CDF); "
        "the normed_cumsum before it and the without-replacement path left out",
    ),
    flaggems_502(
        name="flaggems_layer_norm_backward",
        path="src/flag_gems/ops/layernorm.py",
        dest="flag_gems/layer_norm_backward.py",
        sha256="36ab03bce5d90d23ec5b4a813ea4e26ffd685b70bfb6be5e9421c88c7fd6cd13",
        mode="extract",
        functions=("layer_norm_backward_kernel", "weight_bias_backward_kernel"),
        shims=_TLE_SHIM,
        used_by=("flaggems_layer_norm_backward",),
        note="layer_norm's backward (the input gradient per block of rows, then the weight "
        "and bias gradients per block of columns: two kernels), without their @libentry "
        "and YAML-tuned @triton.autotune; the forward kernels are left out",
    ),
    flaggems_502(
        name="flaggems_rms_norm_backward",
        path="src/flag_gems/ops/rms_norm.py",
        dest="flag_gems/rms_norm_backward.py",
        sha256="404a81fdf7543cea719965eab45a533ad03b704ed89f301297de09e577cc2d2c",
        mode="extract",
        functions=("rms_norm_grad_dx_kernel", "rms_norm_grad_dw_kernel"),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_rms_norm_backward",),
        note="rms_norm's backward (the input gradient, one program per row holding the whole "
        "row; then the weight gradient's per-tile partial sums over row blocks, which "
        "FlagGems sums with torch), without their @libentry; the forward kernels are left out",
    ),
    flaggems_502(
        name="flaggems_conv3d",
        path="src/flag_gems/ops/conv3d.py",
        dest="flag_gems/conv3d.py",
        sha256="8e840b0ad4b274e5455d663e537ea12e1269b0c834625f5cbb8fc990b72fab0c",
        mode="extract",
        functions=("conv3d_forward_kernel",),
        used_by=("flaggems_conv3d",),
        note="the 3-D convolution forward kernel only (an implicit GEMM over NCDHW taps; its "
        "module imports FlagGems' runtime, whose @libentry and YAML-tuned @triton.autotune "
        "wrap it)",
    ),
    flaggems_502(
        name="flaggems_gdn_fused_kkt_inv",
        path="src/flag_gems/fused/FLA/fused_cumsum_kkt_solve_tril.py",
        dest="flag_gems/fla_fused_cumsum_kkt_solve_tril.py",
        sha256="74c85c4d0d932fe7723d3921bd0f57c7931cec36cde9c12b52a8eb451d02f2e9",
        mode="extract",
        functions=("chunk_gated_delta_rule_fused_cumsum_kkt_solve_tril_kernel",),
        shims={
            "from flag_gems.fused.FLA.triton_ops_helper import exp, make_tensor_descriptor": (
                "@triton.jit\n"
                "def exp(x):  # kbopt shim: FlagGems' FLA exp, tl.exp with FLA_USE_FAST_OPS unset\n"
                "    return tl.exp(x)\n\n\n"
                "make_tensor_descriptor = tl.make_tensor_descriptor  # kbopt shim: Triton >= 3.4's"
            ),
        },
        used_by=("flaggems_gdn_fused_kkt_inv",),
        note="the gated delta rule's fused chunk prologue (one program per 64-token chunk and "
        "head: cumsum of the log gates, beta K K^T * exp(g_i - g_j) by BK-wide tl.dots, then "
        "the inverse of I + A by 16x16 blocks), without its @libentry / @triton.heuristics / "
        "@libtuner (the module imports FlagGems' FLA index, solve_tril and utils at import; "
        "its exp and make_tensor_descriptor shimmed as Triton's)",
    ),
    flaggems_502(
        name="flaggems_sparse_attn_sink",
        path="src/flag_gems/fused/sparse_attention.py",
        dest="flag_gems/sparse_attention.py",
        sha256="9faf080f584abfd375f47991a8d55b8e26c094cd1bbeb293b780941369c32fab",
        mode="extract",
        functions=("sparse_attn_triton_kernel",),
        used_by=("flaggems_sparse_attn_sink",),
        note="the top-k sparse attention with an attention sink (one program per query "
        "token holds all heads, gathers its selected KV rows in BLOCK-row tl.dot steps "
        "under an online softmax, the sink added to the denominator)",
    ),
    flaggems_502(
        name="flaggems_bincount",
        path="src/flag_gems/fused/bincount.py",
        dest="flag_gems/bincount.py",
        sha256="fbfd5cc8fa5aefba25a4fcca3bee2706c4bd8267e3421013cffe7d9a516b510d",
        mode="extract",
        functions=("fused_max_bincount_kernel",),
        used_by=("flaggems_bincount",),
        note="the unweighted bincount's fused pass (per BLOCK_SIZE ids, an atomic max of "
        "the block's largest id and one atomic add per id into an int64 histogram); the "
        "weighted variants and the second pass for ids past the pre-sized histogram left out",
    ),
    flaggems_502(
        name="flaggems_mhc_sinkhorn",
        path="src/flag_gems/fused/mhc/hc_split_sinkhorn.py",
        dest="flag_gems/hc_split_sinkhorn.py",
        sha256="c7822d62e4e4979237e240c0a88d2536e5d456f34978f2b71b0e99dc31e93e97",
        mode="extract",
        functions=("mhc_split_sinkhorn_kernel_hcmult_4",),
        used_by=("flaggems_mhc_sinkhorn",),
        note="the mHC split + Sinkhorn kernel for four streams (BLOCK_N tokens per program, "
        "each lane one token's 4 x 4 matrix in registers; the generic one-token kernel left out)",
    ),
    flaggems_502(
        name="flaggems_mhc_pre",
        path="src/flag_gems/fused/mhc/mhc_pre.py",
        dest="flag_gems/mhc_pre.py",
        sha256="ee13045ad82c80a6889b2c7e4f27514f07e79fd95151071ad9ddf64ecd9dd473",
        mode="extract",
        functions=("_mhc_pre_fused_kernel_hc_mult_4_impl", "mhc_pre_fused_kernel_hc_mult_4"),
        used_by=("flaggems_mhc_pre",),
        note="the mHC pre block's fused kernel for four streams (one program per token: the "
        "streams' sum of squares BLOCK_H at a time, the 24 projected logits normalised, "
        "scaled and biased, pre / post sigmoids, a 4 x 4 Sinkhorn in registers, then a "
        "second pass mixing the four streams into the layer input; the cuBLAS projection "
        "and the generic-HC kernel left out)",
    ),
    flaggems_502(
        name="flaggems_mm_syrk",
        path="src/flag_gems/ops/mm.py",
        dest="flag_gems/mm_syrk.py",
        sha256="2ca00ab603ae1c061aba48823a28e234bc7f77c14bd3e421304a7f48fef55276",
        mode="extract",
        functions=("mm_kernel_syrk",),
        used_by=("flaggems_mm_syrk",),
        note="aten::mm's A @ A^T path (a packed lower-triangular grid of BLOCK_M x BLOCK_M "
        "tiles, each reading two row panels of A in BLOCK_K tl.dot steps and stored twice, "
        "as itself and transposed; the general and stream-K GEMMs left out)",
    ),
    flaggems_502(
        name="flaggems_replication_pad3d",
        path="src/flag_gems/ops/replication_pad3d.py",
        dest="flag_gems/replication_pad3d.py",
        sha256="fafa78cdd61b72786974e0dfd3fc83a81138e90fea4d15dc8f5a9c13df64b244",
        mode="extract",
        functions=("replicationpad3d_kernel",),
        used_by=("flaggems_replication_pad3d",),
        note="the 3-D replication padding kernel only (its module imports FlagGems' "
        "runtime, whose @libentry and YAML-tuned @triton.autotune wrap it)",
    ),
    flaggems_502(
        name="flaggems_bucket_topk",
        path="src/flag_gems/fused/DSA/bin_topk.py",
        dest="flag_gems/bin_topk.py",
        sha256="311415046ebf401304f73b093ed533c529f103c7913294d3758be4fcd6432c9d",
        mode="extract",
        functions=("convert_to_uint16", "convert_to_uint32", "kernel_bucket_sort_topk"),
        used_by=("flaggems_bucket_topk",),
        note="the DSA indexer's bucket-sort top-k (one program per row: a 256-bin histogram "
        "of the scores' top key byte, a suffix sum for the threshold bin, then up to four "
        "rounds refining that bin's candidates a byte at a time) with its two key helpers; "
        "the @triton.autotune over ten configurations dropped, the TLE-only kernel and its "
        "helpers (FlagTree's triton.experimental.tle) left out",
    ),
    flaggems_502(
        name="flaggems_grouped_mm",
        path="src/flag_gems/ops/group_gemm.py",
        dest="flag_gems/group_gemm.py",
        sha256="37c41b413b7118ca393211729829ce6e6afca37966b0be6e6b0d0032ca965e4e",
        mode="extract",
        functions=("grouped_launch", "grouped_mm_tma_kernel"),
        used_by=("flaggems_grouped_mm",),
        note="aten::_grouped_mm's Hopper path (NUM_SMS persistent programs walk one tile list "
        "over every group's rows, each tile's K loop reading A and B through TMA tensor "
        "descriptors in tl.dot steps) with its GROUP_M swizzle helper; the @libtuner over "
        "seven configurations dropped, the block-pointer twin for pre-Hopper GPUs and the "
        "pointer-array group_gemm kernels left out",
    ),
    flaggems_502(
        name="flaggems_mm_tma",
        path="src/flag_gems/runtime/backend/_nvidia/hopper/ops/mm.py",
        dest="flag_gems/mm_hopper_tma.py",
        sha256="fd9404abe764ebc86cd42d4590b6a5f0671c9d9b4799063475dbcb600760d606",
        mode="extract",
        functions=("mm_kernel_general_host_tma",),
        used_by=("flaggems_mm_tma",),
        note="aten::mm's Hopper path (one program per output tile in GROUP_M order, A and B "
        "read through host TMA tensor descriptors, a column-major B -- a bias-free linear's "
        "weight.t() -- loaded as [BLOCK_N, BLOCK_K] boxes and transposed before tl.dot); the "
        "@libtuner over its generated configurations dropped, the device-descriptor and "
        "stream-K kernels and the gemv left out",
    ),
    flaggems_502(
        name="flaggems_dsa_indexer",
        path="src/flag_gems/fused/DSA/indexer_k_tiled.py",
        dest="flag_gems/indexer_k_tiled.py",
        sha256="1c11334ec30cae4f695ac5d2eb1760c9d44aab5e4c6c914d4710f2d23c4b8e01",
        mode="extract",
        functions=("triton_lighting_indexer_k_tiled",),
        used_by=("flaggems_dsa_indexer",),
        note="DeepSeek-V3.2's lightning indexer logits over ragged key windows (per query "
        "and TK-key tile, [BQ*H, D] x [D, BK] fp16 tl.dots, relu times the head weights, "
        "summed over heads into fp32 logits); the @triton.autotune over two warp/stage "
        "configurations is dropped",
    ),
    flaggems_502(
        name="flaggems_flash_mla",
        path="src/flag_gems/fused/flash_mla.py",
        dest="flag_gems/flash_mla.py",
        sha256="4527c2c5ddb84865b3287bfd0336ba9146ec488bf89f4f22066853a8e99b1448",
        mode="extract",
        functions=("flash_mla_attn_kernel",),
        shims=dict(_TLE_SHIM),
        used_by=("flaggems_flash_mla",),
        note="the MLA decode kernel over a paged latent KV cache (per BLOCK_H heads and "
        "sequence, the whole context walked BLOCK_N rows at a time through the block table: "
        "nope and rope tl.dots into one score tile, online softmax, p times the rows' first "
        "512 columns; no KV split); its @triton.heuristics EVEN_H passed by the launcher",
    ),
    flaggems_502(
        name="flaggems_moe_align",
        path="src/flag_gems/fused/moe_align_block_size.py",
        dest="flag_gems/moe_align_block_size.py",
        sha256="599b73aa2dfda5a31f62454e080baf4cf135d579a0d39e17acb0faab46509fc6",
        mode="extract",
        functions=(
            "moe_align_block_size_stage1",
            "moe_align_block_size_stage2_vec",
            "moe_align_block_size_stage2",
            "moe_align_block_size_stage3",
            "moe_align_block_size_stage4",
        ),
        used_by=("flaggems_moe_align",),
        note="moe_align_block_size_triton's stock-Triton path (per-expert atomic counts, the "
        "column scan in both forms, the rounded segment offsets, the ranked scatter: four "
        "launches); the FlagTree-only TLE cluster and cooperative kernels left out (the "
        "module imports FlagGems' utils and, where FlagTree is installed, its TLE at import)",
    ),
    flaggems_502(
        name="flaggems_avg_pool2d_backward",
        path="src/flag_gems/ops/avg_pool2d.py",
        dest="flag_gems/avg_pool2d_backward.py",
        sha256="896ef3c9b6c27d96f67c5078a2a706f3ac419f82c44b69d08ee2381b085b4631",
        mode="extract",
        functions=("avg_pool2d_backward_kernel",),
        used_by=("flaggems_avg_pool2d_backward",),
        note="the average-pooling backward kernel only (FlagGems' aten::avg_pool2d_backward: "
        "one program per input tile gathers the gradients of the output windows that cover "
        "it), without its @libentry and the @triton.autotune over six tiles; the forward "
        "kernel of the same file is pinned apart as flaggems_avg_pool2d",
    ),
    flaggems_502(
        name="flaggems_conv2d_wgrad",
        path="src/flag_gems/ops/conv2d.py",
        dest="flag_gems/conv2d_wgrad.py",
        sha256="b24f332b779b44d095532c506e877e213c140fe49757232e195213c21814e8e8",
        mode="extract",
        functions=("conv2d_backward_kernel_weight",),
        used_by=("flaggems_conv2d_wgrad",),
        note="the convolution's weight-gradient kernel only (FlagGems' Conv2d.backward: one "
        "program per tile of filter rows and output channels walks every output position and "
        "the batch), without its @libentry and YAML-tuned @triton.autotune; the forward kernel "
        "of the same file (which the backward also runs for the input's gradient) is pinned "
        "apart as flaggems_conv2d",
    ),
    vllm_0340(
        name="vllm_w4a16_gemm",
        path="vllm/model_executor/kernels/linear/mixed_precision/triton_w4a16.py",
        dest="vllm/w4a16_gemm.py",
        sha256="c3b7deca21410a272794b7ba81fcccbcc1bce58c178df3ca7100e60546943401",
        mode="extract",
        functions=("triton_w4a16_gemm_kernel",),
        used_by=("vllm_w4a16_gemm",),
        note="the W4A16 GEMM kernel only (TritonW4A16LinearKernel's fused int4 dequantization "
        "and tl.dot, GPTQ-packed along N; the module imports vLLM's platform, parameter and "
        "custom-op helpers); its host wrapper, whose tile table the launcher copies, and the "
        "linear-kernel class that repacks the checkpoint are left out",
    ),
    flaggems_502(
        name="flaggems_flash_mla_sparse",
        path="src/flag_gems/fused/flashmla_sparse.py",
        dest="flag_gems/flashmla_sparse.py",
        sha256="057fd5aeb02d3c0959488b9be7f88ad9faa2a72ddbf8e547c8a4a04ec8cd144c",
        mode="extract",
        functions=("triton_flash_mla_sparse_fwd",),
        used_by=("flaggems_flash_mla_sparse",),
        note="the sparse MLA prefill kernel only (FlagGems' drop-in for FlashMLA's "
        "flash_mla_sparse_fwd, DeepSeek-V3.2's sparse attention prefill: per query token and "
        "32 heads, the token's top-k latent rows gathered 16 at a time, nope and rope tl.dots, "
        "an online softmax, p times the rows' 512 latent columns), without its two-entry "
        "@triton.autotune; the older fused/DSA/sparse_mla.py (fp16 accumulation, a batch "
        "dimension) is left out",
    ),
    vllm_0340(
        name="vllm_vit_prefill_attn",
        path="vllm/v1/attention/ops/triton_prefill_attention.py",
        dest="vllm/vit_prefill_attention.py",
        sha256="13d3ec98154ddc2dc2356af5aa01eab6134620069bd6e06dd5fffa5d29e940b1",
        mode="extract",
        functions=("_fwd_kernel",),
        used_by=("vllm_vit_prefill_attn",),
        note="the prefill attention kernel only (vLLM's copy of SGLang's, with sliding "
        "windows, sinks and a split head dim added; launched non-causal as the vision "
        "encoders' TRITON_ATTN backend runs it); its module imports vLLM's platform and "
        "memory helpers at import, and context_attention_fwd, which picks the tile from "
        "them, is left out",
    ),
    flaggems_502(
        name="flaggems_bmm",
        path="src/flag_gems/ops/bmm.py",
        dest="flag_gems/bmm.py",
        sha256="23c44279aa61afcc1ea8c6ea4cda6bb159c9906e185fea33fa2e050795b8588c",
        mode="extract",
        functions=("bmm_kernel",),
        shims=_TLE_SHIM,
        used_by=("flaggems_bmm",),
        note="the batched GEMM (aten::bmm and bmm.out: one program per TILE_M x TILE_N tile "
        "of one batch entry, grouped GROUP_M row tiles at a time, walking K in TILE_K tl.dot "
        "steps), without its @libentry, YAML-tuned @libtuner and @triton.heuristics (the "
        "launcher passes the DIVISIBLE_M/N/K flags as its heuristics compute them); "
        "baddbmm's kernel is left out",
    ),
    flaggems_502(
        name="flaggems_mhc_sinkhorn_bwd",
        path="src/flag_gems/fused/mhc/mhc_bwd.py",
        dest="flag_gems/mhc_bwd.py",
        sha256="d918c8b2c018443db65c7d73f8a51701798f7fa0a34892a86e8c0607898a6199",
        mode="extract",
        functions=("_mhc_bwd_kernel_n4",),
        used_by=("flaggems_mhc_sinkhorn_bwd",),
        note="the mHC Sinkhorn backward for four streams only (implicit differentiation by "
        "conjugate gradient, BLOCK_S tokens per program, each lane one token's 4 x 4 system "
        "in registers); the generic autotuned kernel (which only stores dR * R, and which "
        "mhc_bwd never launches: other stream counts take its torch fallback) left out",
    ),
    vllm_0340(
        name="vllm_int8_scaled_mm",
        path="vllm/model_executor/layers/quantization/compressed_tensors/triton_scaled_mm.py",
        dest="vllm/int8_scaled_mm.py",
        sha256="f017a116b817d217df403a0c6d449612100a361c2e6198ad4ea7fe856ad9279e",
        mode="extract",
        functions=("scaled_mm_kernel",),
        used_by=("vllm_int8_scaled_mm",),
        note="the W8A8 scaled GEMM kernel only (TritonInt8ScaledMMLinearKernel's int8 tl.dot "
        "into int32 over the whole of K, then the per-token and per-channel scales and the "
        "bias in fp32; the module imports vLLM's triton_utils and its allocator helper); its "
        "host wrapper triton_scaled_mm, whose tile table by M the launcher copies, is left out",
    ),
    # Apple's Cut Cross-Entropy 25.1.1 (PyPI `cut-cross-entropy==25.1.1`, a pure-Python
    # wheel; the package at the repository's root).  License: Apple's AML (the permissive
    # "IMPORTANT: This Apple software is supplied to you..." text of its LICENSE: use,
    # reproduce, modify and redistribute with the notice kept).  The repository tags no
    # release: the ref names the PyPI version, which --from-pypi fetches and verifies.
    Source(
        name="cce_lse_forward",
        repo="apple/ml-cross-entropy",
        ref="v25.1.1",
        path="cut_cross_entropy/cce_lse_forward.py",
        license="AML",
        dest="cce/cce_lse_forward.py",
        sha256="1a83f3bfef4ca5ba27fb93ac62a073b91314651bf25f2398264f3425b4180083",
        shims={
            "from cut_cross_entropy.tl_autotune import cce_forward_autotune": (
                "cce_forward_autotune = lambda: (lambda fn: fn)  # kbopt shim: CCE's "
                "tl_autotune (CCE_AUTOTUNE unset: one fixed configuration, which the "
                "launcher passes itself)"
            ),
            "from cut_cross_entropy.tl_utils import b_bin_fn, tl_logaddexp, tl_softcapping": (
                "b_bin_fn = tl_logaddexp = tl_softcapping = None  # kbopt shim: CCE's "
                "tl_utils, bound by the launcher from the cce_tl_utils source"
            ),
        },
        pypi=("cut-cross-entropy", "25.1.1", "cut_cross_entropy/cce_lse_forward.py"),
        used_by=("cce_lse_forward",),
        note="the whole module (its kernel is made by calling triton.jit, not decorated, so "
        "extract cannot take it): the LSE forward kernel under triton.heuristics and the "
        "host wrapper cce_lse_forward_kernel, whose fixed configuration the launcher copies; "
        "the backward (cce_backward.py) and the indexed dot left out",
    ),
    Source(
        name="cce_tl_utils",
        repo="apple/ml-cross-entropy",
        ref="v25.1.1",
        path="cut_cross_entropy/tl_utils.py",
        license="AML",
        dest="cce/tl_utils.py",
        sha256="54ece9b05606bb92f9391fadeaf2858eeba2d0c786516e51876b4d6cbbd624eb",
        pypi=("cut-cross-entropy", "25.1.1", "cut_cross_entropy/tl_utils.py"),
        used_by=("cce_lse_forward",),
        note="CCE's Triton helpers (logaddexp, log1p and tanh through libdevice, softcapping, "
        "the lock-held add, b_bin_fn); the launcher binds the LSE forward's into its module",
    ),
    Source(
        name="torchao_jagged_fp8_colwise",
        repo="pytorch/ao",
        ref="v0.18.0",
        path="torchao/prototype/moe_training/kernels/jagged_float8_scales.py",
        license="BSD-3-Clause",
        dest="torchao/jagged_float8_scales.py",
        sha256="abe1b753bb93cedb4816523c852a6672500f2230793e8cc0f418eb65dffd8845",
        mode="extract",
        functions=("_triton_fp8_per_group_colwise_scales_dual_kernel",),
        pypi=(
            "torchao",
            "0.18.0",
            "torchao/prototype/moe_training/kernels/jagged_float8_scales.py",
        ),
        used_by=("torchao_jagged_fp8_colwise",),
        note="torchao v0.18.0 (BSD-3-Clause; the file is the same in the torchao 0.18.0 wheel "
        "on PyPI): the dual jagged column-wise fp8 quantization kernel only (fp8 rowwise MoE "
        "training's weight-gradient operands, both in one launch); it is defined under the "
        "module's `if has_triton():`, which extract reads one level down; its @triton.autotune "
        "(36 configurations) is dropped, and the module's custom ops, the single-tensor, fused "
        "and row-wise kernels are left out",
    ),
    gemlite_060(
        name="gemlite_gemv_revsplitk",
        path="gemlite/triton_kernels/gemv_revsplitK_kernels.py",
        dest="gemlite/gemv_revsplitk.py",
        sha256="8d366f860cfea9df0c56b162866056662a48a84bff2dd15662b6c77afe888d35",
        mode="extract",
        functions=("gemv_INT_revsplitK_kernel",),
        shims={
            "from .config import AUTOTUNE, KERNEL_CACHE, BLOCK_QUANT_SIZE": (
                "BLOCK_QUANT_SIZE = 128  # kbopt shim: gemlite's triton_kernels/config.py value, "
                "the kernel's block_quant_size default"
            ),
        },
        used_by=("gemlite_gemv_revsplitk",),
        note="the integer reverse split-K GEMV kernel only (GemLite's default for 1 to 4 rows "
        "with weights below 8 bits: two BLOCK_SIZE_K slices of K per program, fp32 partial "
        "sums added atomically into the output); its autotuner, its config pruner and the "
        "host wrapper (whose H100 config table the launcher copies) left out; load_ptr and "
        "dequantize come from gemlite_utils (the module imports them with a star import, and "
        "its config import reads the CUDA device at import)",
    ),
    gemlite_060(
        name="gemlite_utils",
        path="gemlite/triton_kernels/utils.py",
        dest="gemlite/utils.py",
        sha256="2178e9be3973ccba4fdef7d60f900a2ed8394c9409f3f08680f2071540073f5f",
        mode="extract",
        functions=("load_ptr", "dequantize"),
        used_by=("gemlite_gemv_revsplitk",),
        note="GemLite's shared @triton.jit load and unpack-dequantize helpers (the launcher "
        "hands them to the GEMV kernel's module; the module queries the CUDA device and sets "
        "Triton's allocator at import)",
    ),
    # LMDeploy v0.18.0 (Apache-2.0: its LICENSE; its metadata's README says "released under
    # the Apache 2.0 license"): `lmdeploy==0.18.0` on PyPI is a CPython-specific wheel (its
    # TurboMind extension), which pip picks for this interpreter; the fused LoRA kernel is
    # pure Triton, at the same path in the wheel as in the repository.
    Source(
        name="lmdeploy_fused_lora",
        repo="InternLM/lmdeploy",
        ref="v0.18.0",
        path="lmdeploy/pytorch/kernels/cuda/fused_lora.py",
        license="Apache-2.0",
        dest="lmdeploy/fused_lora.py",
        sha256="b381076cceb8ea32d8a2f0234e2af8f02f73e9dd4129b7f0c2a0ba3c24f82dcb",
        mode="extract",
        functions=("_atomic_store", "_fused_lora_kernel"),
        shims={"import torch": "import torch"},
        pypi=("lmdeploy", "0.18.0", "lmdeploy/pytorch/kernels/cuda/fused_lora.py"),
        used_by=("lmdeploy_fused_lora",),
        note="LMDeploy's fused LoRA kernel (the A and B products of one adapter in one "
        "program, as its PyTorch engine's TritonLoRAImpl runs it after every LoRA-wrapped "
        "linear) with its _atomic_store helper (relaxed atomic add for fp16 and fp32, a "
        "load-add-store for bf16; torch is imported for its dtype test); its "
        "@triton.autotune (two configurations) is dropped, and the host wrapper fused_lora, "
        "whose grid and rank tile the launcher copies, is left out",
    ),
    # FlashInfer v0.7.4 (Apache-2.0: its LICENSE; its wheel's metadata says License-Expression
    # Apache-2.0): `flashinfer-python==0.7.4` on PyPI, a pure-Python wheel (its CUDA kernels
    # are compiled at run time), the package at the repository's root, as in the wheel.
    Source(
        name="flashinfer_persistent_gemm",
        repo="flashinfer-ai/flashinfer",
        ref="v0.7.4",
        path="flashinfer/triton/kernels/sm_constraint_gemm.py",
        license="Apache-2.0",
        dest="flashinfer/sm_constraint_gemm.py",
        sha256="e9ca27f037ec1a97ec4ecf0fd0f917dbfb1f6eeeaa78b66b64574fa8a7c94344",
        mode="extract",
        functions=("_compute_pid", "gemm_kernel_persistent"),
        shims={
            "def _matmul_launch_metadata(": (
                "# kbopt shim: the profiler-only launch_metadata hook (names the launch and "
                "counts its flops for proton) left out\n"
                "_matmul_launch_metadata = None"
            ),
        },
        pypi=(
            "flashinfer-python",
            "0.7.4",
            "flashinfer/triton/kernels/sm_constraint_gemm.py",
        ),
        used_by=("flashinfer_persistent_gemm",),
        note="FlashInfer's SM-bounded persistent GEMM kernel (gemm_persistent's, num_sms the "
        "caller's SM budget) and its tile-order helper only; its @triton.autotune (one "
        "configuration, which the launcher copies) is dropped, and the TMA-descriptor "
        'persistent variant, the non-persistent gemm_kernel ("only for testing") and the '
        "host wrappers in flashinfer/triton/sm_constraint_gemm.py are left out",
    ),
    # Unsloth 2026.10.9 (PyPI `unsloth==2026.10.9`, a pure-Python wheel; the package at the
    # repository's root).  License: Apache-2.0 for unsloth/kernels/fp8.py (its header; the
    # wheel's metadata says Apache-2.0).  Several other files of unsloth/kernels (nf4_gemv,
    # nvfp4, int4_packed, large_head_attention, qk_norm_rope, ...) and the whole
    # unsloth/kernels/moe/ folder carry AGPL-3.0 headers or license files: none is fetched.
    # The repository does not tag its releases by version: the ref names the PyPI version,
    # which --from-pypi fetches and verifies.
    Source(
        name="unsloth_fp8_small_m",
        repo="unslothai/unsloth",
        ref="2026.10.9",
        path="unsloth/kernels/fp8.py",
        license="Apache-2.0",
        dest="unsloth/fp8_small_m.py",
        sha256="abc763ee900b289731a340d4ad2596757993ebdb1c2682c0883e9f4b3de75e3d",
        mode="extract",
        functions=("_w8a8_block_fp8_small_m",),
        pypi=("unsloth", "2026.10.9", "unsloth/kernels/fp8.py"),
        used_by=("unsloth_fp8_small_m",),
        note="the fused small-M block fp8 linear kernel only (the activations' per-row, "
        "per-128-column e4m3 quantization inside the K loop of a block-scaled fp8 GEMM, K "
        "split with an in-kernel deterministic reduction by the last program to arrive); its "
        "host wrapper fp8_block_small_m_linear and _small_m_config, whose H100 choices the "
        "launcher copies, are left out (the module imports unsloth_zoo and queries the CUDA "
        "devices at import), as are the module's other kernels (weight_dequant, act_quant, "
        "the block GEMM, the rowwise and block GEMVs, the e4m3 byte dequantizations)",
    ),
    # xFormers v0.0.35 (BSD-3-Clause: its LICENSE, "Copyright (c) Facebook, Inc. and its
    # affiliates", and the file's header; its wheel's metadata classifies it "BSD License"):
    # `xformers==0.0.35` on PyPI is a py39-none manylinux wheel (its CUDA extensions,
    # 3.3 MB), which pip picks for this interpreter; the Triton kernels are pure Python, at
    # the same path in the wheel as in the repository.
    Source(
        name="xformers_scaled_index_add",
        repo="facebookresearch/xformers",
        ref="v0.0.35",
        path="xformers/ops/_triton/k_scaled_index_add.py",
        license="BSD-3-Clause",
        dest="xformers/k_scaled_index_add.py",
        sha256="6187d291eba4f42131332199f9e9e5ede16212cb6c4e3116e197dd61753509ea",
        mode="extract",
        functions=("scaled_index_add_fwd_kernel",),
        pypi=("xformers", "0.0.35", "xformers/ops/_triton/k_scaled_index_add.py"),
        used_by=("xformers_scaled_index_add",),
        note="xFormers' scaled index add forward kernel only (x[index] += alpha * scaling * "
        "source in place over [batch, tokens, channels] tiles, as DINOv2's stochastic-depth "
        "residual adds a kept subset of the batch's LayerScale-scaled branch back); the host "
        "wrapper scaled_index_add_fwd, whose fixed 1 x 1 x 512 tile the launcher copies, and "
        "the backward kernel are left out",
    ),
    # flash-linear-attention (fla-core 0.6.0 on PyPI, MIT: its LICENSE; its wheel's metadata
    # says "License: MIT License"): `fla-core==0.6.0` is a pure-Python wheel holding the fla
    # package (`flash-linear-attention` the meta-package that depends on it), at the same
    # path as in the repository's v0.6.0 tag.
    Source(
        name="fla_causal_conv1d_bwd",
        repo="fla-org/flash-linear-attention",
        ref="v0.6.0",
        path="fla/modules/causal_conv1d/ops.py",
        license="MIT",
        dest="fla/causal_conv1d_bwd.py",
        sha256="24dc730b4bab1f5766d5f06ea2c15aa1c9ed6d067558b2e59e8a526b0b7c0239",
        mode="extract",
        functions=("causal_conv1d_bwd_kernel",),
        pypi=("fla-core", "0.6.0", "fla/modules/causal_conv1d/ops.py"),
        used_by=("fla_causal_conv1d_bwd",),
        note="FLA's short-convolution backward kernel only (ShortConvolution's Triton "
        "backward: dx and per-chunk fp32 filter-gradient partials through SiLU's gradient), "
        "without its @triton.heuristics (the launcher passes the flags) and its "
        "fla_cache_autotune over BD x num_warps (whose first configuration the launcher "
        "takes); the host wrapper causal_conv1d_bwd, the forward, update and state kernels "
        "and the dh0 kernel are left out (the module imports FLA's backends, context-"
        "parallel helpers and cache at import)",
    ),
    # NVIDIA Transformer Engine v2.20.2 (Apache-2.0: its LICENSE; its wheel's README badge
    # says Apache 2.0): `transformer-engine==2.20.2` on PyPI is a pure-Python py3-none wheel
    # (the framework extensions and the C++ library are the separate transformer_engine_cu12
    # and transformer_engine_torch distributions), holding the Triton kernels at the same
    # path as the repository, transformer_engine/common/triton/.
    Source(
        name="te_grouped_dbias_dscales",
        repo="NVIDIA/TransformerEngine",
        ref="v2.20.2",
        path="transformer_engine/common/triton/grouped_dbias_dscales.py",
        license="Apache-2.0",
        dest="te/grouped_dbias_dscales.py",
        sha256="5f37bb0c9240e3265d5136ca36c72bbb37569191e2c3720ef830f6d21df045ca",
        mode="extract",
        functions=("_grouped_dbias_kernel",),
        pypi=(
            "transformer-engine",
            "2.20.2",
            "transformer_engine/common/triton/grouped_dbias_dscales.py",
        ),
        used_by=("te_grouped_dbias_dscales",),
        note="TE's fused grouped bias gradient kernel only (per-expert dbias of dy scaled by "
        "the routing probabilities, fused with the probabilities' gradient dy . bias, fp32 "
        "atomics); its PyTorch wrappers in transformer_engine/pytorch/triton/"
        "grouped_dbias_dscales.py (_launch_grouped_dbias, whose fixed 128 x 128, 4-split, "
        "4-warp, 2-stage launch the launcher copies, and compute_grouped_dbias[_dscales]) are "
        "left out",
    ),
)

BY_NAME = {s.name: s for s in SOURCES}


@dataclass(frozen=True)
class TreePart:
    """Folders of one repository at one commit, placed under a prefix of the archive."""

    repo: str  # owner/name on GitHub
    commit: str  # full commit id: the content is addressed by it
    paths: tuple[str, ...]  # folders (or files) in the repository; () for the whole tree
    prefix: str  # where they land inside the archive's top folder ("" for its root)


@dataclass(frozen=True)
class Archive:
    """A source tree to compile elsewhere, packed from pinned parts into one .tgz."""

    name: str
    dest: str  # the archive, relative to third_party/
    top: str  # the one top folder inside the archive
    parts: tuple[TreePart, ...]
    license: str
    used_by: tuple[str, ...] = ()
    note: str = ""


ARCHIVES: tuple[Archive, ...] = (
    Archive(
        name="flashmla",
        dest="flashmla-src.tgz",
        top="flashmla",
        parts=(
            TreePart("deepseek-ai/FlashMLA", "9241ae3ef9bac614dd25e45e507e089f888280e0", (), ""),
            # the commit of FlashMLA's csrc/cutlass submodule at that FlashMLA commit
            TreePart(
                "NVIDIA/cutlass",
                "147f5673d0c1c3dcf66f78d677fd647e4a020219",
                ("include", "tools/util/include"),
                "csrc/cutlass",
            ),
        ),
        license="MIT (FlashMLA), BSD-3-Clause (CUTLASS)",
        used_by=("kernels/mla_decode flashmla baseline",),
        note="dense sm90 decode built by scripts/build_flashmla.sh on the GPU machine",
    ),
)

ARCHIVES_BY_NAME = {a.name: a for a in ARCHIVES}


class FetchError(Exception):
    """A source could not be fetched or verified; the message says what to try."""


# ---------------------------------------------------------------------- turning text into a file


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def extract_functions(text: str, names: tuple[str, ...], origin: str) -> str:
    """The named top-level @triton.jit functions, verbatim, each under its @triton.jit alone
    (FlagGems' @libentry, @triton.autotune and @triton.heuristics dropped).  A function
    defined one level down in a top-level `if` (torchao's `if has_triton():`) counts as
    top-level: its lines lose that block's indent, and nothing else of the block is kept."""
    try:
        tree = ast.parse(text)
    except SyntaxError as exc:
        raise FetchError(f"{origin}: not Python ({exc})") from None
    lines = text.splitlines()
    found: dict[str, str] = {}
    nodes = [n for top in tree.body for n in (top.body if isinstance(top, ast.If) else [top])]
    for node in nodes:
        if not isinstance(node, ast.FunctionDef) or node.name not in names:
            continue
        decorators = [ast.unparse(d) for d in node.decorator_list]
        # a bare @triton.jit, or one with arguments (do_not_specialize=...), kept as written
        jit = [d for d in decorators if d == "triton.jit" or d.startswith("triton.jit(")]
        if not jit:
            raise FetchError(f"{origin}: {node.name} is not a @triton.jit function")
        assert node.end_lineno is not None
        indent = node.col_offset  # 0 at the top level; an `if` block's indent otherwise
        body = "\n".join(ln[indent:] for ln in lines[node.lineno - 1 : node.end_lineno])
        found[node.name] = f"@{jit[0]}\n" + body
    missing = [n for n in names if n not in found]
    if missing:
        raise FetchError(f"{origin}: no top-level function(s) {', '.join(missing)}")
    return "\n\n\n".join(found[n] for n in names) + "\n"


def render(source: Source, text: str, origin: str) -> tuple[str, str]:
    """(the file to write, the hash to check) from the upstream text."""
    header = (
        f"# Third-party code, NOT part of kbopt: {source.repo} @ {source.ref}\n"
        f"#   {source.path}\n"
        f"# License: {source.license} (see the upstream repository).  Written by\n"
        f"# scripts/fetch_third_party.py ({source.mode}); never commit this file.\n"
    )
    if source.mode == "extract":
        body = extract_functions(text, source.functions, origin)
        digest = sha256(body)
        preamble = ""
        for line, replacement in source.shims.items():
            if line not in text:
                raise FetchError(f"{origin}: the line to shim is gone ({line!r}); update the pin")
            preamble += replacement + "\n"
        shimmed = "\n" + preamble if preamble else ""
        out = header + "\nimport triton\nimport triton.language as tl\n" + shimmed + "\n\n" + body
        return out, digest
    digest = sha256(text)
    out = text
    for line, replacement in source.shims.items():
        if line not in out:
            raise FetchError(f"{origin}: the line to shim is gone ({line!r}); update the pin")
        out = out.replace(line, replacement, 1)
    return header + out, digest


# ---------------------------------------------------------------------- the ways to get the text


def _git(*args: str, cwd: Path | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=600, check=False
        )
    except FileNotFoundError:
        raise FetchError("git is not installed (or use --from-pypi / --from-files)") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"git {' '.join(args[:2])} took more than 10 minutes") from None
    if done.returncode != 0:
        raise FetchError(f"git {' '.join(args)} failed: {done.stderr.strip()[-400:]}")
    return done.stdout


def from_git(source: Source, cache: dict[str, Path]) -> tuple[str, str]:
    """Shallow-fetch the pinned ref from GitHub (one fetch per repo and ref)."""
    key = f"{source.repo}@{source.ref}"
    if key not in cache:
        work = Path(tempfile.mkdtemp(prefix="kbopt-tp-"))
        _git("init", "-q", str(work))
        url = f"https://github.com/{source.repo}.git"
        print(f"  git fetch --depth 1 {url} {source.ref}", file=sys.stderr)
        _git("fetch", "-q", "--depth", "1", url, source.ref, cwd=work)
        cache[key] = work
    work = cache[key]
    commit = _git("rev-parse", "FETCH_HEAD", cwd=work).strip()
    return _git("show", f"FETCH_HEAD:{source.path}", cwd=work), f"git {commit}"


def from_mirror(source: Source, root: Path) -> tuple[str, str]:
    """A bare git mirror D/<owner>+<name> (or D/<owner>+<name>/repo) holding the ref."""
    base = root / source.repo.replace("/", "+")
    gitdir = base / "repo" if (base / "repo").is_dir() else base
    if not gitdir.is_dir():
        raise FetchError(f"no mirror of {source.repo} at {base}")
    text = _git("--git-dir", str(gitdir), "show", f"{source.ref}:{source.path}")
    commit = _git("--git-dir", str(gitdir), "rev-parse", f"{source.ref}^{{commit}}").strip()
    return text, f"mirror {gitdir} {commit}"


def from_files(source: Source, root: Path) -> tuple[str, str]:
    """A copy made by hand: D/<owner>+<name>/<path> (the hash decides if it is the pin)."""
    path = root / source.repo.replace("/", "+") / source.path
    if not path.is_file():
        raise FetchError(f"no copy at {path}")
    return path.read_text(encoding="utf-8"), f"files {path}"


def from_pypi(source: Source, cache: dict[str, Path]) -> tuple[str, str]:
    """The file from the pinned wheel, downloaded with pip (no install, no dependencies;
    one download per distribution and version in a run, however many files it gives)."""
    if source.pypi is None:
        raise FetchError("not published on PyPI: fetch it with git, --from-mirror or --from-files")
    dist, version, inner = source.pypi
    key = f"pypi:{dist}=={version}"
    if key not in cache:
        tmp = Path(tempfile.mkdtemp(prefix="kbopt-tp-"))
        cache[key] = tmp
        binary = ["--no-binary", ":all:"] if dist in SDIST_ONLY else ["--only-binary", ":all:"]
        cmd = [sys.executable, "-m", "pip", "download", "--no-deps", *binary]
        cmd += ["-q", "-d", str(tmp), f"{dist}=={version}"]
        print(f"  pip download {dist}=={version}", file=sys.stderr)
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
        got = list(tmp.glob("*.tar.gz" if dist in SDIST_ONLY else "*.whl"))
        if done.returncode != 0 or not got:
            raise FetchError(f"pip download {dist}=={version} failed: {done.stderr.strip()[-400:]}")
    if dist in SDIST_ONLY:
        return from_sdist(next(iter(cache[key].glob("*.tar.gz"))), inner), f"pypi {dist}=={version}"
    wheels = list(cache[key].glob("*.whl"))
    if not wheels:
        raise FetchError(f"pip download {dist}=={version} gave no wheel")
    with zipfile.ZipFile(wheels[0]) as zf:
        try:
            raw = zf.read(inner).decode("utf-8")
        except KeyError:
            raise FetchError(f"{wheels[0].name} has no {inner}") from None
    return universal_newlines(raw), f"pypi {dist}=={version}"


def from_sdist(archive: Path, inner: str) -> str:
    """`inner` (a path in the package, as in a wheel) from a source distribution's tarball,
    under its one top folder (name-version/)."""
    with tarfile.open(archive, "r:gz") as tar:
        for member in tar.getmembers():
            _top, _, rest = member.name.partition("/")
            if rest == inner and member.isfile():
                handle = tar.extractfile(member)
                assert handle is not None
                return universal_newlines(handle.read().decode("utf-8"))
    raise FetchError(f"{archive.name} has no {inner}")


def universal_newlines(text: str) -> str:
    """Line ends as git (text mode) and a file read as text give them: a file committed
    with CRLF ends (FlagGems' index_add.py) then hashes the same whichever way it came."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


# ---------------------------------------------------------------------- source trees -> one archive


def _git_bytes(*args: str, cwd: Path | None = None) -> bytes:
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=900, check=False
        )
    except FileNotFoundError:
        raise FetchError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise FetchError(f"git {' '.join(args[:3])} took more than 15 minutes") from None
    if done.returncode != 0:
        err = done.stderr.decode("utf-8", "replace").strip()[-400:]
        raise FetchError(f"git {' '.join(args[:4])} failed: {err}")
    return done.stdout


def part_tar_from_mirror(part: TreePart, root: Path) -> tuple[bytes, str]:
    """The part as a tar stream (git archive) from a bare mirror D/<owner>+<name>[/repo]."""
    base = root / part.repo.replace("/", "+")
    gitdir = base / "repo" if (base / "repo").is_dir() else base
    if not gitdir.is_dir():
        raise FetchError(f"no mirror of {part.repo} at {base}")
    commit = _git("--git-dir", str(gitdir), "rev-parse", f"{part.commit}^{{commit}}").strip()
    if commit != part.commit:
        raise FetchError(f"mirror {gitdir} resolves {part.commit} to {commit}")
    tar = _git_bytes("--git-dir", str(gitdir), "archive", "--format=tar", commit, "--", *part.paths)
    return tar, f"mirror {gitdir} {commit}"


def part_tar_from_git(part: TreePart, work: Path) -> tuple[bytes, str]:
    """The part as a tar stream, fetched from GitHub at depth 1.

    With named folders the fetch is blob-less and a sparse checkout of those folders brings
    their files in one batch (git archive alone would ask for each missing file in turn).
    """
    _git("init", "-q", str(work))
    url = f"{GITHUB}/{part.repo}.git"
    print(f"  git fetch --depth 1 {url} {part.commit}", file=sys.stderr)
    if part.paths:
        _git("fetch", "-q", "--depth", "1", "--filter=blob:none", url, part.commit, cwd=work)
        _git("sparse-checkout", "set", "--no-cone", *part.paths, cwd=work)
        _git("checkout", "-q", "FETCH_HEAD", cwd=work)
    else:
        _git("fetch", "-q", "--depth", "1", url, part.commit, cwd=work)
    commit = _git("rev-parse", "FETCH_HEAD", cwd=work).strip()
    if commit != part.commit:
        raise FetchError(f"{url} gave {commit} for {part.commit}")
    tar = _git_bytes("archive", "--format=tar", commit, "--", *part.paths, cwd=work)
    return tar, f"git {url} {commit}"


def pack_archive(archive: Archive, tars: list[tuple[TreePart, bytes]]) -> bytes:
    """One gzip'd tar: every part's files under <top>/<prefix>/, in a fixed order and with
    fixed owners and gzip time, so the same commits give the same bytes."""
    members: dict[str, tuple[tarfile.TarInfo, bytes | None]] = {}
    for part, data in tars:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as src:
            for info in src.getmembers():
                if not (info.isfile() or info.isdir()):
                    continue  # git archive writes no links for these trees; skip any
                name = "/".join(x for x in (archive.top, part.prefix, info.name.rstrip("/")) if x)
                body = src.extractfile(info).read() if info.isfile() else None  # type: ignore[union-attr]
                out = tarfile.TarInfo(name)
                out.type, out.mode, out.mtime = info.type, info.mode, info.mtime
                out.size = len(body) if body is not None else 0
                if name in members and info.isdir():
                    continue  # a folder both parts name (FlashMLA's empty csrc/cutlass)
                members[name] = (out, body)
    provenance = json.dumps(
        {
            "archive": archive.name,
            "license": archive.license,
            "parts": [
                {"repo": p.repo, "commit": p.commit, "paths": list(p.paths), "prefix": p.prefix}
                for p, _ in tars
            ],
            "written_by": "kbopt scripts/fetch_third_party.py (never commit this archive)",
        },
        indent=1,
    ).encode()
    info = tarfile.TarInfo(f"{archive.top}/KBOPT_SOURCES.json")
    info.size, info.mode = len(provenance), 0o644
    members[info.name] = (info, provenance)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w:", format=tarfile.PAX_FORMAT) as tar:
        for name in sorted(members):
            info, body = members[name]
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(body) if body is not None else None)
    packed = io.BytesIO()
    with gzip.GzipFile(fileobj=packed, mode="wb", compresslevel=9, mtime=0) as gz:
        gz.write(raw.getvalue())
    return packed.getvalue()


def fetch_archive(archive: Archive, args: argparse.Namespace) -> dict[str, str]:
    if args.from_files or args.from_pypi:
        raise FetchError("a source tree: fetch it with git (GitHub) or --from-mirror DIR")
    tars: list[tuple[TreePart, bytes]] = []
    hows: list[str] = []
    with tempfile.TemporaryDirectory(prefix="kbopt-tp-") as tmp:
        for i, part in enumerate(archive.parts):
            if args.from_mirror:
                data, how = part_tar_from_mirror(part, Path(args.from_mirror))
            else:
                data, how = part_tar_from_git(part, Path(tmp) / str(i))
            tars.append((part, data))
            hows.append(how)
    blob = pack_archive(archive, tars)
    dest = Path(args.dest) / archive.dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    partial = dest.with_name(dest.name + ".part")
    partial.write_bytes(blob)
    partial.replace(dest)
    return {
        "name": archive.name,
        "repo": ", ".join(p.repo for p in archive.parts),
        "ref": ", ".join(p.commit for p in archive.parts),
        "path": "; ".join(
            f"{p.repo}:{','.join(p.paths) or '.'} -> {archive.top}/{p.prefix}"
            for p in archive.parts
        ),
        "license": archive.license,
        "file": archive.dest,
        "mode": "archive",
        "sha256": hashlib.sha256(blob).hexdigest(),
        "bytes": str(len(blob)),
        "verified": "yes (commit ids)",
        "fetched_with": "; ".join(hows),
        "used_by": ",".join(archive.used_by),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


# ---------------------------------------------------------------------- main


def fetch_one(source: Source, args: argparse.Namespace, cache: dict[str, Path]) -> dict[str, str]:
    if args.from_files:
        text, how = from_files(source, Path(args.from_files))
    elif args.from_mirror:
        text, how = from_mirror(source, Path(args.from_mirror))
    elif args.from_pypi:
        text, how = from_pypi(source, cache)
    else:
        text, how = from_git(source, cache)
    out, digest = render(source, text, f"{source.repo}:{source.path}")
    verified = digest == source.sha256
    if not verified and not args.no_verify:
        raise FetchError(
            f"SHA-256 {digest} does not match the pin {source.sha256} "
            "(another upstream version?); --no-verify keeps it anyway"
        )
    dest = Path(args.dest) / source.dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    for folder in {dest.parent, Path(args.dest)}:
        # the copies are read as a namespace-free package by file path; no __init__ needed
        folder.mkdir(parents=True, exist_ok=True)
    dest.write_text(out, encoding="utf-8")
    return {
        "name": source.name,
        "repo": source.repo,
        "ref": source.ref,
        "path": source.path,
        "license": source.license,
        "file": source.dest,
        "mode": source.mode,
        "sha256": digest,
        "verified": "yes" if verified else "NO (--no-verify)",
        "fetched_with": how,
        "used_by": ",".join(source.used_by),
        "date": dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        description="Fetch the pinned third-party kernels that benchmarks/foreign/ wraps "
        "into the git-ignored third_party/ folder (see the module docstring).",
    )
    ap.add_argument(
        "sources",
        nargs="*",
        help=f"sources to fetch (default all: {', '.join([*BY_NAME, *ARCHIVES_BY_NAME])})",
    )
    how = ap.add_mutually_exclusive_group()
    how.add_argument("--from-mirror", metavar="DIR", help="bare git mirrors DIR/<owner>+<name>")
    how.add_argument("--from-files", metavar="DIR", help="loose copies DIR/<owner>+<name>/<path>")
    how.add_argument("--from-pypi", action="store_true", help="pinned wheels via pip download")
    ap.add_argument("--dest", default=os.environ.get("KBOPT_THIRD_PARTY", str(DEFAULT_DEST)))
    ap.add_argument("--no-verify", action="store_true", help="keep a copy whose hash differs")
    ap.add_argument("--list", action="store_true", help="print the pins and what is in place")
    ap.add_argument("--json", action="store_true", help="print the manifest entries as JSON")
    args = ap.parse_args(argv)

    known = [*BY_NAME, *ARCHIVES_BY_NAME]
    unknown = [n for n in args.sources if n not in known]
    if unknown:
        print(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(known)}", file=sys.stderr)
        return 2
    names = args.sources or known
    chosen = [BY_NAME[n] for n in names if n in BY_NAME]
    archives = [ARCHIVES_BY_NAME[n] for n in names if n in ARCHIVES_BY_NAME]
    dest = Path(args.dest)
    manifest_path = dest / MANIFEST
    manifest: dict[str, dict[str, str]] = {}
    if manifest_path.is_file():
        try:
            manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            manifest = {}

    if args.list:
        rows = []
        for s in chosen:
            present = (dest / s.dest).is_file()
            rows.append({**s.__dict__, "shims": list(s.shims), "present": present})
            if not args.json:
                state = "present" if present else "missing"
                print(f"{s.name:18} {state:8} {s.repo}@{s.ref[:12]} {s.path} ({s.license})")
        for a in archives:
            present = (dest / a.dest).is_file()
            rows.append(
                {
                    "name": a.name,
                    "dest": a.dest,
                    "present": present,
                    "license": a.license,
                    "parts": [p.__dict__ for p in a.parts],
                }
            )
            if not args.json:
                state = "present" if present else "missing"
                pins = " + ".join(f"{p.repo}@{p.commit[:12]}" for p in a.parts)
                print(f"{a.name:18} {state:8} {pins} -> {a.dest} ({a.license})")
        if args.json:
            print(json.dumps(rows, indent=1, default=list))
        return 0

    failed = 0
    cache: dict[str, Path] = {}
    try:
        for s in chosen:
            if args.from_pypi and s.pypi is None:
                print(f"{s.name}: skipped (not on PyPI; use git, --from-mirror or --from-files)")
                failed += 1
                continue
            try:
                entry = fetch_one(s, args, cache)
            except FetchError as exc:
                print(f"{s.name}: FAILED: {exc}", file=sys.stderr)
                failed += 1
                continue
            manifest[s.name] = entry
            print(
                f"{s.name}: {entry['file']} ({entry['fetched_with']}, verified {entry['verified']})"
            )
    finally:
        for work in cache.values():
            shutil.rmtree(work, ignore_errors=True)
    for a in archives:
        try:
            entry = fetch_archive(a, args)
        except FetchError as exc:
            print(f"{a.name}: FAILED: {exc}", file=sys.stderr)
            failed += 1
            continue
        manifest[a.name] = entry
        print(f"{a.name}: {entry['file']} ({entry['bytes']} bytes; {entry['fetched_with']})")
    if manifest:
        dest.mkdir(parents=True, exist_ok=True)
        manifest_path.write_text(json.dumps(manifest, indent=1, sort_keys=True) + "\n")
    if args.json:
        print(json.dumps(manifest, indent=1, sort_keys=True))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
