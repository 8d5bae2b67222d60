"""Does each Triton kernel of a spec's versions fit on a Hopper GPU?  Checked without one.

A launch configuration that needs more shared memory than an SM gives one block fails only
when it runs (`OutOfResources`), so a wrap that copies an upstream configuration tuned for
another GPU costs a GPU session to find out: blind set 56's masked SDPA copied FlagGems'
first tuned configuration, whose 4 stages need 393,216 bytes at a 128-wide head, and both of
its profiling lines failed on an H100.  This script runs each version's call on CPU tensors
with Triton's driver replaced by a stand-in that compiles every `@triton.jit` launch for the
target (PTX, then a cubin with the ptxas Triton ships) instead of launching it, and reads the
shared memory each compiled kernel declares.

    .venv/bin/python scripts/triton_fit_check.py benchmarks/foreign/<name>/spec.py
    .venv/bin/python scripts/triton_fit_check.py <spec> --config b=8,t=2048 --json
    .venv/bin/python scripts/triton_fit_check.py <spec> --knob num_stages=4   # a configuration
    .venv/bin/python scripts/triton_fit_check.py <spec> --version triton_v1   # one version

Every version's call runs on CPU tensors at the trial's size, the plain-torch baseline
included: at a large GEMM or attention trial its CPU arithmetic can take many minutes, so
`--version` checks only the versions named.

Without --config, every trial of the spec is checked.  Exit status 1 when some kernel does
not fit, 2 when the check could not run (the reason printed: a call that needs a GPU to
choose its launch, such as one reading the SM count, cannot be checked here).  The numbers
are the compiler's, for the target named (sm_90: H100 and H200 alike); nothing runs.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
# Under the CPU interpreter @triton.jit makes no compiled kernels to measure: compile here.
os.environ.pop("TRITON_INTERPRET", None)

from kbopt.bench.compile_only import SM90_SHARED_LIMIT, compile_call  # noqa: E402


def check(
    spec: Any,
    dims_list: list[dict[str, int]],
    arch: int,
    limit: int = 0,
    knobs: dict[str, int] | None = None,
    only: set[str] | None = None,
) -> list[dict[str, Any]]:
    """One row per version (those in `only`, where given) and configuration: the kernels
    its call compiled, in order (a launch that did not fit and the one its launcher fell
    back to included), and the error that stopped the call, if one did."""
    limit = limit or SM90_SHARED_LIMIT
    import dataclasses

    import torch

    versions, errors = spec.load_versions()
    if only:
        missing = only - set(versions) - set(errors)
        if missing:
            raise SystemExit(
                f"error: --version {', '.join(sorted(missing))}: the spec has no such version "
                f"(it has {', '.join(sorted({*versions, *errors}))})"
            )
        versions = {k: v for k, v in versions.items() if k in only}
        errors = {k: v for k, v in errors.items() if k in only}
    rows: list[dict[str, Any]] = []
    for name, err in sorted(errors.items()):
        rows.append({"version": name, "dims": None, "error": f"did not load: {err}"})
    unused = set(knobs or {})
    for name in versions:
        # a version's launch configuration, with the knobs asked for set (a version whose
        # configuration has no such field is checked as it is)
        mod = sys.modules.get(spec.module_name(name))
        config = getattr(mod, "CONFIG", None)
        if knobs and dataclasses.is_dataclass(config):
            fields = {f.name for f in dataclasses.fields(config)}
            mod.CONFIG = dataclasses.replace(
                config, **{k: v for k, v in knobs.items() if k in fields}
            )
            unused -= fields
    if unused:
        raise SystemExit(
            f"error: --knob {', '.join(sorted(unused))}: no version's launch configuration "
            "has such a knob"
        )
    for dims in dims_list:
        inputs = spec.make_inputs(dims, dtype=getattr(torch, spec.dtype), device="cpu", seed=0)
        for name, version in sorted(versions.items()):
            compiled: list[dict[str, Any]] = []
            row: dict[str, Any] = {"version": name, "dims": dims, "kernels": compiled}
            try:
                compile_call(version, inputs, compiled, arch, limit)
            except Exception as e:  # the call needs something only a GPU gives
                # Triton's compile errors put the source excerpt between the place and
                # the reason: keep both ends
                lines = [ln for ln in str(e).strip().splitlines() if ln.strip()] or [""]
                text = lines[0] if len(lines) == 1 else f"{lines[0]} ... {lines[-1]}"
                row["error"] = f"{type(e).__name__}: {text[:300]}"
            rows.append(row)
    return rows


def parse_config(text: str) -> dict[str, int]:
    out = {}
    for part in text.split(","):
        key, sep, value = part.partition("=")
        if not sep or not value.strip().lstrip("-").isdigit():
            raise SystemExit(f"error: {text!r}: expected name=integer pairs, got {part!r}")
        out[key.strip()] = int(value)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("spec", help="a kernel spec: benchmarks/foreign/<name>/spec.py or a name")
    ap.add_argument("--config", action="append", help="dims as name=value,... (repeatable)")
    ap.add_argument(
        "--knob",
        action="append",
        default=[],
        help="a launch knob as name=value, set in every version whose configuration has it "
        "(repeatable): check a configuration before timing it",
    )
    ap.add_argument(
        "--version",
        action="append",
        default=[],
        help="check only this version (repeatable; default: every version, the plain-torch "
        "baseline included, whose CPU arithmetic at a large trial can take many minutes)",
    )
    ap.add_argument("--arch", type=int, default=90, help="compute capability x10 (default 90)")
    ap.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = ap.parse_args(argv)
    try:
        from kbopt.kernel import load_spec

        spec = load_spec(args.spec)
    except Exception as e:
        print(f"error: {args.spec}: {e}", file=sys.stderr)
        return 2
    dims_list = (
        [parse_config(c) for c in args.config]
        if args.config
        else [dict(t.dims) for t in spec.trials]
    )
    limit = SM90_SHARED_LIMIT
    knobs = parse_config(",".join(args.knob)) if args.knob else None
    rows = check(spec, dims_list, args.arch, limit, knobs, set(args.version) or None)
    # a call stopped by a kernel too big for the GPU (its launcher had no smaller one to try)
    too_big = [r for r in rows if r.get("error", "").startswith("OutOfResources")]
    failed = [r for r in rows if "error" in r and r not in too_big]
    if args.json:
        print(json.dumps({"arch": args.arch, "shared_limit_bytes": limit, "rows": rows}, indent=2))
    else:
        for r in rows:
            where = ",".join(f"{k}={v}" for k, v in (r["dims"] or {}).items())
            for k in r.get("kernels", []):
                verdict = "does NOT fit" if k["shared_bytes"] > limit else "fits"
                print(
                    f"{r['version']} at {where}: {k['kernel']} needs {k['shared_bytes']:,} bytes "
                    f"of shared memory a block ({k['num_warps']} warps, {k['num_stages']} "
                    f"stages): {verdict} (sm_{args.arch} limit {limit:,})"
                )
            if r in too_big:
                print(f"{r['version']} at {where}: FAILS on the GPU: {r['error']}")
            elif "error" in r:
                print(f"{r['version']} at {where}: not checked: {r['error']}")
            elif not r.get("kernels"):
                print(f"{r['version']} at {where}: no Triton launch")
    if too_big:
        return 1
    return 2 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
