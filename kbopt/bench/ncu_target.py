"""The program ncu profiles: one call of one kernel version, inside cudaProfilerStart/Stop.

    python -m kbopt.bench.ncu_target KERNEL VERSION B S T

Warm-up calls (JIT compilation, allocator growth) run before the profiled range, so
`ncu --profile-from-start off` reports exactly the kernels of one call: two for a split
version (the split kernel and the combine), one otherwise.
"""

from __future__ import annotations

import importlib
import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 5:
        print("usage: python -m kbopt.bench.ncu_target KERNEL VERSION B S T", file=sys.stderr)
        return 2
    kernel, version = args[0], args[1]
    b, s, t = (int(x) for x in args[2:])
    sys.path.insert(0, os.getcwd())
    import torch

    registry = importlib.import_module(f"kernels.{kernel}.registry")
    ref = importlib.import_module(f"kernels.{kernel}.reference")
    fn = registry.get(version).fn
    inputs = ref.make_inputs(b, s, t, dtype=torch.bfloat16, device="cuda")
    for _ in range(2):
        fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    fn(*inputs)
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
