"""CuTe DSL MLA decode, version 5: cute_v4's kernels, launched without per-call argument conversion.

At decode sizes the host side of one call (input checks, output allocation, and CuTe DSL turning
every Python argument into ctypes values) took about as long as the GPU work (see
``host_us_per_call`` in the cute_bench results). This version keeps ctypes slots for the
arguments and hands their addresses to the compiled entry directly
(:class:`kernels.mla_decode.cute_common.PackedLaunch`); the first call per compiled variant
checks the packed bytes against CuTe DSL's own conversion. Kernels: v4's, unchanged.
"""

import torch

from kernels.mla_decode.cute_common import run_split_kv
from kernels.mla_decode.cute_v4 import M_BLK, N_BLK, _compiled, entry, example_args

VERSION = "cute_v5"
DESCRIPTION = "CuTe DSL: cute_v4 launched through pre-packed ctypes arguments (less host time)"

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]


def mla_decode(
    q: torch.Tensor, kv_cache: torch.Tensor, cache_seqlens: torch.Tensor, sm_scale: float
) -> torch.Tensor:
    return run_split_kv(
        VERSION,
        _compiled,
        M_BLK,
        N_BLK,
        q,
        kv_cache,
        cache_seqlens,
        sm_scale,
        fused_merge=True,
        packed=True,
    )
