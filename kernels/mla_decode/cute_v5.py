"""CuTe DSL MLA decode, version 5: cute_v4's kernels, launched without per-call argument conversion.

At decode sizes the host side of one call (input checks, output allocation, and CuTe DSL turning
every Python argument into ctypes values) took about as long as the GPU work (see
``host_us_per_call`` in the cute_bench results). This version keeps ctypes slots for the
arguments and hands their addresses to the compiled entry directly
(:class:`kernels.mla_decode.cute_common.PackedLaunch`); the first call per compiled variant
checks the packed bytes against CuTe DSL's own conversion. Kernels: v4's, unchanged.
"""

from kernels.mla_decode.cute_v4 import _HOST as _V4_HOST
from kernels.mla_decode.cute_v4 import entry, example_args

VERSION = "cute_v5"
DESCRIPTION = "CuTe DSL: cute_v4 launched through pre-packed ctypes arguments (less host time)"

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

_HOST = _V4_HOST.with_launch(VERSION, packed=True)  # v4's kernel and compiles
mla_decode = _HOST.mla_decode
