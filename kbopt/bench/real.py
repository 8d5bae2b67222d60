"""The real measurement backend: a kernel's versions on a CUDA GPU, ncu for counters.

Everything it knows about the kernel comes from the kernel's spec
(`kbopt.kernel.KernelSpec`): inputs, reference, tolerance, FLOPs and bytes, versions and
their knobs.  Correctness and timing are the shared harness (`kbopt.bench.harness`): the
output is checked against the reference with a NaN-poisoned pool before anything is
timed, and timing is the median of `do_bench` (L2 flushed) over rotated input sets, both
made once per shape and kept while the same shape is measured again (`InputCache`).  The
roofline floor is `max(bytes / copy bandwidth, FLOPs / matmul rate)` with both ceilings
measured by this backend on this device, once per process.  Without counters the DRAM%
and TC% of a profile are the achieved fractions of those two ceilings (lower bounds: the
real traffic is at least the minimal bytes).

Edited version files are re-imported before each measurement (the cycle's designer may
change a version's source between two measurements in one process).  Knob values given
as `params` are applied for the duration of one measurement: on the version's `CONFIG`
dataclass (`dataclasses.replace`) or on its upper-case module constant.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib
import json
import os
import sys
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

from kbopt.bench.backend import Measurement, timing_metrics
from kbopt.bench.harness import InputCache
from kbopt.bench.launch_choices import recorded_metrics
from kbopt.bench.ncu import NcuOutcome, profile_launches
from kbopt.bench.trials import TrialConfig
from kbopt.errors import KbError, VersionFailed
from kbopt.kernel import KernelSpec
from kbopt.moves import launched_by_knob

CONFIG_ATTR = "CONFIG"  # the tunable dataclass a version module may expose


MIN_NCU_S = 10.0  # below this ncu cannot finish even its timing pass


class RealBackend:
    name = "real"

    def __init__(self, root: Path | str, rep_ms: int | None = None):
        self.root = Path(root).resolve()
        # do_bench repetition time per measurement; KBOPT_BENCH_REP_MS shortens a budgeted run.
        self.rep_ms = rep_ms or int(os.environ.get("KBOPT_BENCH_REP_MS", "100"))
        self.ncu_timeout_s = float(os.environ.get("KBOPT_NCU_TIMEOUT_S", "300"))
        # A caller's wall-clock deadline (time.monotonic()) for a whole profile: ncu gets
        # what the measurement left of it (`kbopt profile --budget-s`).
        self.ncu_deadline: float | None = None
        self._ceilings: dict[str, dict[str, float]] = {}
        self._hashes: dict[str, str] = {}
        # The last shape's inputs and reference output: a search measures one shape many
        # times, and making some kernels' inputs costs more than timing them.
        self.inputs = InputCache()
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))

    # ------------------------------------------------------------------ modules

    def _refresh(self, spec: KernelSpec) -> None:
        """Re-import the kernel's modules whose source changed since they were loaded."""
        prefix = f"{spec.package}."
        for mod_name, mod in sorted(sys.modules.items()):
            path = getattr(mod, "__file__", None)
            if not mod_name.startswith(prefix) or not path or not os.path.isfile(path):
                continue
            digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
            old = self._hashes.get(mod_name)
            self._hashes[mod_name] = digest
            if old is not None and old != digest:
                importlib.reload(mod)

    def _torch(self) -> Any:
        try:
            import torch
        except ImportError:
            raise KbError("the real backend needs torch (pip install kbopt[gpu])") from None
        if not torch.cuda.is_available():
            raise KbError("the real backend needs a CUDA GPU; use --backend fake on a CPU")
        return torch

    # ------------------------------------------------------------------ interface

    def check_device(self) -> None:
        """Refuse at once, before a search starts workers, on a machine without a GPU."""
        self._torch()

    def versions(self, spec: KernelSpec) -> list[str]:
        return list(spec.load_versions()[0])

    def version_files(self, spec: KernelSpec, version: str) -> list[Path]:
        path = spec.version_path(version)
        return [path] if path.is_file() else []

    def release_memory(self) -> None:
        import torch

        torch.cuda.empty_cache()

    def device_usable(self) -> bool:
        """Whether this process can still launch on the GPU: after a faulting launch (an
        illegal address, a trap) CUDA refuses every later one in the same process."""
        import torch

        try:
            torch.cuda.synchronize()
            return float(torch.ones(1, device="cuda").add_(1).item()) == 2.0
        except Exception:  # the fault's own error, raised again by any CUDA call
            return False

    def ceilings(self, dtype: str) -> dict[str, float]:
        if dtype not in self._ceilings:
            from kbopt.bench.harness import measure_ceilings

            self._ceilings[dtype] = measure_ceilings(self.rep_ms, dtype)
        return self._ceilings[dtype]

    def _version(self, spec: KernelSpec, version: str) -> Any:
        """A version file's module, or a baseline (without importing every version)."""
        if spec.version_family(version) is not None:
            return spec.load_version(version)
        baselines = dict(spec.baselines()) if spec.baselines is not None else {}
        if version in baselines:
            return baselines[version]
        known = ", ".join([*baselines, *spec.version_files()]) or "none"
        raise KbError(f"{spec.name} has no version {version!r}; known: {known}")

    def measure(
        self,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement:
        from kbopt.bench import launch_stats
        from kbopt.bench.harness import software
        from kbopt.bench.suite import time_version

        torch = self._torch()
        self._refresh(spec)
        ceil = self.ceilings(spec.matmul_precision)
        self._version(spec, version)
        self._refresh(spec)  # loading the version may have imported its modules just now
        dims = config.dims_dict
        with _params_applied(spec, version, params):
            entry = self._version(spec, version)
            try:
                sets = self.inputs.input_sets(spec, dims, spec.dtype)
                row = time_version(
                    spec, entry, dims, sets, ceil, self.rep_ms, time_wrong=True, cache=self.inputs
                )
            except torch.cuda.OutOfMemoryError:
                self.inputs.clear()  # the caller backs off to a smaller shape: free this one
                raise
        if "time_us" not in row:  # it raised: a one-line error, never a traceback
            raise VersionFailed(f"{spec.name} {version} at {config.compact}: {row['error']}"[:600])
        us = float(row["time_us"])
        metrics = timing_metrics(spec, dims, us, ceil["copy_bw_gbps"], ceil["matmul_tflops"])
        info = {k.removeprefix("kernel_"): v for k, v in row.items() if k.startswith("kernel_")}
        if "n_regs" in info:
            metrics["registers_per_thread"] = float(info["n_regs"])
        props = torch.cuda.get_device_properties(0)
        launches = launch_stats.from_summary(row.get("launches"))
        metrics.update(
            launch_stats.launch_metrics(
                launches, int(props.multi_processor_count), launch_stats.device_limits(props)
            )
        )
        metrics.update(recorded_metrics(info))
        return Measurement(
            kernel=spec.name,
            version=version,
            config=config,
            duration_us=us,
            correct=row["status"] == "ok",
            floor_us=spec.floor_us(dims, ceil["copy_bw_gbps"], ceil["matmul_tflops"]),
            error=float(row["rel_err"]),
            tolerance=spec.tolerance(spec.dtype),
            quantiles_us=(float(row["p20_us"]), us, float(row["p80_us"])),
            metrics=metrics,
            shape_metrics=spec.dim_metrics(dims),
            device=torch.cuda.get_device_name(0),
            versions=software(),
            date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            command=f"kbopt profile {spec.source or spec.name} {version} --config {config.compact}"
            + (
                " (params " + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
                if params
                else ""
            ),
            note=str(row.get("error", "")),
            sm_count=int(props.multi_processor_count),
            launched=launched_by_knob(spec.knobs_for(version), _launched(info, launches)),
            inputs_written=tuple(row.get("inputs_written", ())),
        )

    def counters(self, spec: KernelSpec, version: str, config: TrialConfig) -> NcuOutcome:
        budget = self.ncu_timeout_s
        if self.ncu_deadline is not None:
            budget = min(budget, self.ncu_deadline - time.monotonic())
            if budget < MIN_NCU_S:
                return NcuOutcome(
                    kernels=[],
                    command=[],
                    unavailable=(
                        f"not run: the measurement used the wall-time budget, {max(budget, 0):.0f} s "
                        f"left (ncu needs at least {MIN_NCU_S:.0f} s; raise --budget-s)"
                    ),
                )
        target = [
            sys.executable,
            "-m",
            "kbopt.bench.ncu_target",
            spec.locator,
            version,
            json.dumps(config.dims_dict),
        ]
        pythonpath = os.pathsep.join(
            p for p in (str(self.root), os.environ.get("PYTHONPATH", "")) if p
        )
        return profile_launches(
            target,
            env={"PYTHONPATH": pythonpath},
            cwd=self.root,
            budget_s=budget,
            progress=lambda msg: print(f"  {msg}", file=sys.stderr, flush=True),
        )


class _params_applied:
    """Set knob values on the version module (CONFIG field or constant), then put them back."""

    def __init__(self, spec: KernelSpec, version: str, params: Mapping[str, Any] | None):
        self.params = dict(params or {})
        self.module: ModuleType | None = None
        self.saved: dict[str, Any] = {}
        if not self.params:
            return
        spec.check_knobs(version, self.params)
        self.module = importlib.import_module(spec.module_name(version))

    def __enter__(self) -> None:
        mod = self.module
        if mod is None:
            return
        config = getattr(mod, CONFIG_ATTR, None)
        in_config = (
            {f.name for f in dataclasses.fields(config)}
            if dataclasses.is_dataclass(config) and not isinstance(config, type)
            else set()
        )
        self.saved = {CONFIG_ATTR: config} if in_config else {}
        if in_config & set(self.params):
            fields = {k: v for k, v in self.params.items() if k in in_config}
            setattr(mod, CONFIG_ATTR, dataclasses.replace(config, **fields))  # type: ignore[type-var]
        for name, value in self.params.items():
            if name in in_config:
                continue
            const = name.upper()
            if not hasattr(mod, const):
                raise KbError(
                    f"{mod.__name__} sets knob {name} neither in CONFIG nor as {const} = ..."
                )
            self.saved[const] = getattr(mod, const)
            setattr(mod, const, value)

    def __exit__(self, *exc: object) -> None:
        if self.module is not None:
            for name, value in self.saved.items():
                setattr(self.module, name, value)


def _launched(info: Mapping[str, Any], launches: Sequence[Any]) -> dict[str, Any]:
    """The scalar values the version's launch recorded, plus the warps and pipeline stages
    of the launch that carries the call (Triton's own `num_warps`, `num_stages`) when the
    version did not record them."""
    from kbopt.bench import launch_stats

    out = {k: v for k, v in info.items() if isinstance(v, int | float | str)}
    main = launch_stats.heaviest(launches)
    if main is not None:
        out.setdefault("num_warps", main.num_warps)
        if main.num_stages is not None:
            out.setdefault("num_stages", main.num_stages)
    return out
