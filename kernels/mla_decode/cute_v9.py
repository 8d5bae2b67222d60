"""CuTe DSL MLA decode, version 9: cute_v8's kernel behind a per-shape launch plan.

Host-side only (see :mod:`kernels.mla_decode.cute_plan`): the split, the scratch buffers, the
arrival counters, the stream object and the packed arguments are built once per (shapes, dtype,
device, stream); a call checks its inputs, allocates its output and launches one kernel. Aimed
at the un-graphed decode call, whose Python time exceeded its GPU time in v7.
"""

from kernels.mla_decode.cute_v8 import _HOST as _V8_HOST
from kernels.mla_decode.cute_v8 import entry, example_args

VERSION = "cute_v9"
DESCRIPTION = "CuTe DSL: cute_v8's kernel launched through a cached per-shape plan (host time)"

__all__ = ["DESCRIPTION", "VERSION", "entry", "example_args", "mla_decode"]

_HOST = _V8_HOST.with_launch(VERSION, planned=True)  # v8's kernel and compiles
mla_decode = _HOST.mla_decode
