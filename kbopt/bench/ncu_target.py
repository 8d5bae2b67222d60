"""The program ncu profiles: one call of one kernel version, inside cudaProfilerStart/Stop.

    python -m kbopt.bench.ncu_target SPEC VERSION DIMS_JSON

SPEC is how `kbopt.kernel.load_spec` finds the kernel (a spec file, or module:attr);
DIMS_JSON the configuration, e.g. '{"rows": 8192, "hidden": 4096}'.  Inputs are made,
and a version's once-per-input set-up (`prepare`) runs, before the profiled range; so do
two warm-up calls (JIT compilation, allocator growth).  `ncu --profile-from-start off`
then reports exactly the kernels of one call.
"""

from __future__ import annotations

import json
import os
import sys


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 3:
        print("usage: python -m kbopt.bench.ncu_target SPEC VERSION DIMS_JSON", file=sys.stderr)
        return 2
    locator, version, dims_text = args
    sys.path.insert(0, os.getcwd())
    import torch

    from kbopt.bench.harness import torch_dtype
    from kbopt.bench.real import RealBackend
    from kbopt.kernel import load_spec

    spec = load_spec(locator, os.getcwd())
    dims = {k: int(v) for k, v in json.loads(dims_text).items()}
    entry = RealBackend(os.getcwd())._version(spec, version)
    inputs = spec.make_inputs(dims, dtype=torch_dtype(spec.dtype), device="cuda")
    launch = entry.prepare(*inputs) if entry.prepare is not None else (lambda: entry.fn(*inputs))
    for _ in range(2):
        launch()
    torch.cuda.synchronize()
    torch.cuda.profiler.start()
    launch()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
