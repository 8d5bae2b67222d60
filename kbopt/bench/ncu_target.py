"""The program ncu profiles: calls of kernel versions inside cudaProfilerStart/Stop.

    python -m kbopt.bench.ncu_target SPEC VERSION DIMS_JSON
    python -m kbopt.bench.ncu_target SPEC --run CONFIG:v1,v2 [--run ...] --out launches.json

SPEC is how `kbopt.kernel.load_spec` finds the kernel (a kernel name, a spec file, or
module:attr).  The first form is one call of one version at DIMS_JSON (e.g.
'{"rows": 8192, "hidden": 4096}'): what `kbopt profile` reads counters from.  The second
profiles several versions in one process, for a devlog: CONFIG is a trial of the spec
(`decode`) or dims (`b=8,s=1,t=8192`), the versions are comma-separated (baselines
included), and `--out` receives the sidecar that attributes ncu's rows, one record per
profiled kernel launch, in launch order:

    {"version": "triton_v7", "config": "decode", "dims": {"b": 32, "s": 1, "t": 4096},
     "kernel": "main", "launch": 0, "kernels": 2, "splits": 2, ...}

How many launches one call makes, and their labels, come from what the version recorded
in the spec's `launch_info(family)` dict during the profiled call: `kernels` (1 when it
recorded other things only) and optionally `kernel_names`; without names the first launch
is `main` and the others `launch1`, `launch2`...  The other plain values it recorded
(`splits`, `n_regs`...) are copied into each record.  A call that recorded nothing (a
baseline: plain torch makes several launches kbopt cannot see) gets one record with
`"kernels": null`; `kbopt devlog`, which
pairs the records with ncu's CSV rows in order (`kbopt.devlog_profiles`), gives such a
call whatever rows the others leave, so a session may hold one of them.

Inputs are made, and a version's once-per-input set-up (`prepare`) runs, before the
profiled range; so do two warm-up calls (JIT compilation, allocator growth).  Run under
`ncu --profile-from-start off`, ncu then reports exactly the kernels of the profiled calls.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kbopt.errors import KbError

if TYPE_CHECKING:
    from kbopt.bench.trials import TrialConfig
    from kbopt.kernel import KernelSpec

USAGE = (
    "usage: python -m kbopt.bench.ncu_target SPEC VERSION DIMS_JSON\n"
    "       python -m kbopt.bench.ncu_target SPEC --run CONFIG:v1,v2 [--run ...] "
    "--out launches.json"
)
# launch_info keys that describe the launches themselves, not a value to copy per record
_LAUNCH_KEYS = ("kernels", "kernel_names")


@dataclass(frozen=True)
class PlanItem:
    """One profiled call: a version at a configuration."""

    config: TrialConfig
    version: str


def parse_run(text: str, spec: KernelSpec) -> list[PlanItem]:
    """`decode:v1,v2` or `b=8,s=1,t=8192:v1` -> one item per version."""
    from kbopt.bench.trials import parse_config

    config_text, sep, names = text.rpartition(":")
    versions = [v.strip() for v in names.split(",") if v.strip()]
    if not sep or not config_text.strip() or not versions:
        raise KbError(
            f"--run {text!r}: write CONFIG:VERSIONS, e.g. "
            f"{spec.trials[0].name}:{next(iter(spec.version_files()), 'v1')}"
        )
    config = parse_config(config_text.strip(), spec)
    for v in versions:
        if spec.version_family(v) is not None and not spec.version_path(v).is_file():
            known = ", ".join(spec.version_files()) or "none"
            raise KbError(f"--run {text!r}: {spec.name} has no version {v!r} (known: {known})")
    return [PlanItem(config, v) for v in versions]


def build_plan(spec: KernelSpec, runs: Sequence[str]) -> list[PlanItem]:
    """Every --run, in the order given: the calls profiled, in launch order."""
    if not runs:
        raise KbError("give at least one --run CONFIG:VERSIONS")
    return [item for text in runs for item in parse_run(text, spec)]


def launch_count(info: Mapping[str, Any]) -> int | None:
    """How many kernels the call launched: what it recorded; 1 when it recorded other
    things only (a single-kernel version); None when it recorded nothing (a baseline)."""
    names = info.get("kernel_names") or ()
    if not info:
        return None
    count = int(info.get("kernels", len(names) or 1))
    if count < 1:
        raise KbError(f"a launch recorded kernels={count}; a profiled call makes at least one")
    return count


def launch_labels(count: int, names: Sequence[str] = ()) -> list[str]:
    """`kernel_names` where given, else `main`, `launch1`, `launch2`... (see module doc)."""
    defaults = ["main", *(f"launch{i}" for i in range(1, count))]
    return [str(names[i]) if i < len(names) else defaults[i] for i in range(count)]


def launch_records(item: PlanItem, info: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The sidecar records of one profiled call (one per kernel launch; one with
    `"kernels": null` when the call did not record how many it made)."""
    count = launch_count(info)
    labels = launch_labels(count or 1, info.get("kernel_names") or ())
    extra = {
        k: v
        for k, v in info.items()
        if k not in _LAUNCH_KEYS and isinstance(v, int | float | str | bool)
    }
    return [
        {
            "version": item.version,
            "config": item.config.name,
            "dims": item.config.dims_dict,
            "kernel": label,
            "launch": i,
            "kernels": count,
            **extra,
        }
        for i, label in enumerate(labels)
    ]


# ---------------------------------------------------------------------- on the GPU


def _launch(spec: KernelSpec, version: str, dims: Mapping[str, int]) -> Callable[[], Any]:
    from kbopt.bench.harness import torch_dtype
    from kbopt.bench.real import RealBackend

    entry = RealBackend(os.getcwd())._version(spec, version)
    inputs = spec.make_inputs(dims, dtype=torch_dtype(spec.dtype), device="cuda")
    if entry.prepare is not None:
        launch: Callable[[], Any] = entry.prepare(*inputs)
        return launch
    return lambda: entry.fn(*inputs)


def _profiled_call(spec: KernelSpec, version: str, dims: Mapping[str, int]) -> dict[str, Any]:
    """Warm up, then one call inside the profiled range; what its launch recorded."""
    import torch

    launch = _launch(spec, version, dims)
    for _ in range(2):
        launch()
    torch.cuda.synchronize()
    family = spec.version_family(version) or ""
    info = spec.launch_info(family) if spec.launch_info is not None else {}
    if isinstance(info, dict):
        info.clear()  # only the profiled call's record counts
    torch.cuda.profiler.start()
    launch()
    torch.cuda.synchronize()
    torch.cuda.profiler.stop()
    return dict(info) if isinstance(info, dict) else {}


def profile_plan(spec: KernelSpec, plan: Sequence[PlanItem]) -> list[dict[str, Any]]:
    records: list[dict[str, Any]] = []
    for item in plan:
        info = _profiled_call(spec, item.version, item.config.dims_dict)
        records += launch_records(item, info)
    unknown = [f"{r['version']}/{r['config']}" for r in records if r["kernels"] is None]
    if len(unknown) > 1:
        print(
            f"ncu_target: warning: {', '.join(unknown)} did not record how many kernels they "
            "launch; the devlog can attribute ncu's rows to one such call per session: "
            "profile the others in sessions of their own",
            file=sys.stderr,
        )
    return records


def _single(args: list[str]) -> int:
    locator, version, dims_text = args
    from kbopt.kernel import load_spec

    spec = load_spec(locator, os.getcwd())
    dims = {k: int(v) for k, v in json.loads(dims_text).items()}
    _profiled_call(spec, version, dims)
    return 0


def parse_batch(argv: Sequence[str]) -> argparse.Namespace:
    p = argparse.ArgumentParser(prog="python -m kbopt.bench.ncu_target", usage=USAGE)
    p.add_argument("spec", help="the kernel: a name under kernels/, a spec.py, or module:attr")
    p.add_argument(
        "--run",
        action="append",
        required=True,
        help="CONFIG:v1,v2 (a trial or dims, then versions); repeat",
    )
    p.add_argument("--out", type=Path, required=True, help="the sidecar JSON (launch order)")
    return p.parse_args(list(argv))


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, os.getcwd())
    try:
        if len(args) == 3 and not any(a.startswith("-") for a in args):
            return _single(args)
        if not any(a.startswith("--run") for a in args):
            print(USAGE, file=sys.stderr)
            return 2
        ns = parse_batch(args)
        from kbopt.kernel import load_spec

        spec = load_spec(ns.spec, os.getcwd())
        plan = build_plan(spec, ns.run)
        records = profile_plan(spec, plan)
    except KbError as exc:
        print(f"ncu_target: error: {exc}", file=sys.stderr)
        return 2
    ns.out.write_text(json.dumps(records, indent=1) + "\n", encoding="utf-8")
    print(
        f"profiled {len(records)} launches: "
        + ", ".join(f"{r['version']}/{r['config']}/{r['kernel']}" for r in records),
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
