"""The measurement backend: what the profiler and the cycle ask of a GPU (or of a fake).

A backend times one kernel version at one trial configuration, checks its output against
the reference, and (when it can) reads hardware counters.  Two implementations:

- `kbopt.bench.real.RealBackend`: imports `kernels/<kernel>/` and torch on a CUDA device,
  times with the kernel's own bench helpers, and runs `ncu` for counters;
- `FakeBackend` (here): deterministic, no torch.  It reads constants from the version's
  source file, `kernels/<kernel>/<version>.py`, so that an edit to that file (a designer's
  parameter change, a restore from backup) changes what is measured, exactly as on a GPU:

      FAKE_DURATION_US = {"decode": 120.0, "spec": 950.0}   # at b=32; scales with b
      FAKE_FLOOR_US = {"decode": 55.0, "spec": 880.0}       # optional roofline floor
      FAKE_CORRECT = True                                   # optional
      FAKE_MAX_BATCH = 16                                   # optional: b above it is OOM
      FAKE_COUNTERS = {"dram_throughput_pct": 40.0, ...}    # optional hardware counters

  `KBOPT_FAKE_DELAY_S` slows every measurement (the kill-and-resume test uses it).
"""

from __future__ import annotations

import ast
import datetime as dt
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from kbopt.bench.ncu import KernelCounters, NcuOutcome
from kbopt.bench.trials import TrialConfig, run_with_backoff
from kbopt.errors import KbError

# Canonical metrics every measurement carries, from timing alone.
TIMING_METRICS = ("duration_us", "pct_of_floor", "batch", "query_len", "kv_len")


@dataclass
class Measurement:
    """One version at one configuration: time, roofline, correctness, provenance."""

    kernel: str
    version: str
    config: TrialConfig  # as run: b may be below the request after OOM backoff
    duration_us: float
    correct: bool
    floor_us: float | None = None
    error: float | None = None  # relative error against the reference
    tolerance: float | None = None
    quantiles_us: tuple[float, float, float] | None = None  # p20, p50, p80
    metrics: dict[str, float] = field(default_factory=dict)  # canonical names
    device: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    date: str = ""
    command: str = ""
    note: str = ""  # e.g. the OOM backoff
    sm_count: int | None = None  # multiprocessors of the device (for ctas_per_sm)

    @property
    def pct_of_floor(self) -> float | None:
        if not self.floor_us or self.duration_us <= 0:
            return None
        return 100.0 * self.floor_us / self.duration_us

    def all_metrics(self) -> dict[str, float]:
        out = dict(self.metrics)
        out["duration_us"] = self.duration_us
        if self.pct_of_floor is not None:
            out["pct_of_floor"] = self.pct_of_floor
        out.update(batch=self.config.b, query_len=self.config.s, kv_len=self.config.t)
        return out

    def as_dict(self) -> dict[str, Any]:
        return {
            "kernel": self.kernel,
            "version": self.version,
            "config": self.config.as_dict(),
            "duration_us": self.duration_us,
            "floor_us": self.floor_us,
            "pct_of_floor": self.pct_of_floor,
            "correct": self.correct,
            "error": self.error,
            "tolerance": self.tolerance,
            "quantiles_us": list(self.quantiles_us) if self.quantiles_us else None,
            "metrics": self.all_metrics(),
            "device": self.device,
            "versions": self.versions,
            "date": self.date,
            "command": self.command,
            "note": self.note,
            "sm_count": self.sm_count,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Measurement:
        c = d["config"]
        q = d.get("quantiles_us")
        return cls(
            kernel=d["kernel"],
            version=d["version"],
            config=TrialConfig(c["name"], c["b"], c["s"], c["t"], c.get("why", "")),
            duration_us=float(d["duration_us"]),
            correct=bool(d["correct"]),
            floor_us=d.get("floor_us"),
            error=d.get("error"),
            tolerance=d.get("tolerance"),
            quantiles_us=(q[0], q[1], q[2]) if q else None,
            metrics={
                k: float(v)
                for k, v in d.get("metrics", {}).items()
                if k not in {"duration_us", "pct_of_floor"}
            },
            device=d.get("device", ""),
            versions=dict(d.get("versions", {})),
            date=d.get("date", ""),
            command=d.get("command", ""),
            note=d.get("note", ""),
            sm_count=d.get("sm_count"),
        )


class MeasurementBackend(Protocol):
    name: str
    root: Path

    def versions(self, kernel: str) -> list[str]: ...

    def version_files(self, kernel: str, version: str) -> list[Path]: ...

    def measure(
        self,
        kernel: str,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement: ...

    def counters(self, kernel: str, version: str, config: TrialConfig) -> NcuOutcome: ...


def measure_with_backoff(
    backend: MeasurementBackend,
    kernel: str,
    version: str,
    config: TrialConfig,
    params: Mapping[str, Any] | None = None,
) -> Measurement:
    """`backend.measure`, halving b on out-of-memory (W2); the note says what happened."""
    result = run_with_backoff(
        lambda cfg: backend.measure(kernel, version, cfg, params),
        config,
        on_oom=getattr(backend, "release_memory", None),
    )
    m = result.value
    assert isinstance(m, Measurement)
    if result.reduced:
        m.note = "; ".join(x for x in (m.note, result.note) if x)
    return m


class FakeOutOfMemoryError(RuntimeError):
    """What the fake raises for a batch above FAKE_MAX_BATCH (named like torch's)."""

    def __init__(self, b: int, limit: int):
        super().__init__(f"CUDA out of memory (fake): b={b} > {limit}")


def read_constants(path: Path) -> dict[str, Any]:
    """Module-level `NAME = <literal>` assignments of a Python file, without importing it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError) as exc:
        raise KbError(f"{path}: cannot read the version's constants: {exc}") from None
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    out[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    continue
    return out


class FakeBackend:
    """Deterministic measurements read from the version files (see the module docstring)."""

    name = "fake"

    def __init__(self, root: Path | str):
        self.root = Path(root).resolve()
        self.calls: list[tuple[str, str, str, int]] = []

    def kernel_dir(self, kernel: str) -> Path:
        path = self.root / "kernels" / kernel
        if not path.is_dir():
            raise KbError(f"no kernel folder kernels/{kernel}/ under {self.root}")
        return path

    def versions(self, kernel: str) -> list[str]:
        return sorted(
            p.stem
            for p in self.kernel_dir(kernel).glob("*.py")
            if "FAKE_DURATION_US" in read_constants(p)
        )

    def version_files(self, kernel: str, version: str) -> list[Path]:
        return [self.kernel_dir(kernel) / f"{version}.py"]

    def _constants(self, kernel: str, version: str) -> dict[str, Any]:
        path = self.kernel_dir(kernel) / f"{version}.py"
        if not path.is_file():
            raise KbError(f"unknown version {version!r} of {kernel} (no {path.name})")
        consts = read_constants(path)
        if "FAKE_DURATION_US" not in consts:
            raise KbError(f"{path.name} has no FAKE_DURATION_US: not a fake-measurable version")
        return consts

    def measure(
        self,
        kernel: str,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement:
        delay = float(os.environ.get("KBOPT_FAKE_DELAY_S", "0") or 0)
        if delay:
            time.sleep(delay)
        consts = self._constants(kernel, version)
        self.calls.append((kernel, version, config.name, config.b))
        limit = consts.get("FAKE_MAX_BATCH")
        if limit is not None and config.b > int(limit):
            raise FakeOutOfMemoryError(config.b, int(limit))
        base = _per_config(consts["FAKE_DURATION_US"], config)
        # Larger batches take proportionally longer; a tuning parameter may scale the time.
        duration = base * config.b / 32.0
        for key, value in (params or {}).items():
            factors = consts.get("FAKE_PARAM_FACTORS", {}).get(key, {})
            duration *= float(factors.get(str(value), 1.0))
        floor = consts.get("FAKE_FLOOR_US")
        floor_us = _per_config(floor, config) * config.b / 32.0 if floor is not None else None
        return Measurement(
            kernel=kernel,
            version=version,
            config=config,
            duration_us=duration,
            correct=bool(consts.get("FAKE_CORRECT", True)),
            floor_us=floor_us,
            error=0.0 if consts.get("FAKE_CORRECT", True) else 1.0,
            tolerance=1e-2,
            quantiles_us=(duration * 0.99, duration, duration * 1.01),
            metrics={k: float(v) for k, v in dict(consts.get("FAKE_TIMING_METRICS", {})).items()},
            device="fake-gpu",
            sm_count=int(consts.get("FAKE_SM_COUNT", 132)),
            versions={"kbopt-fake": "1"},
            date=dt.date.today().isoformat(),
            command=f"kbopt profile {kernel} {version} --config {config.b},{config.s},{config.t} --backend fake",
        )

    def counters(self, kernel: str, version: str, config: TrialConfig) -> NcuOutcome:
        consts = self._constants(kernel, version)
        counters = consts.get("FAKE_COUNTERS")
        if not counters:
            return NcuOutcome(
                [], [], unavailable="the fake backend has no counters for this version"
            )
        kernels_spec = counters if isinstance(counters, list) else [counters]
        kernels = [
            KernelCounters(
                launch_id=i,
                name=str(spec.get("name", f"{version}_kernel_{i}")),
                metrics={k: float(v) for k, v in spec.items() if k != "name"},
            )
            for i, spec in enumerate(kernels_spec)
        ]
        return NcuOutcome(kernels, ["fake-ncu"])


def _per_config(spec: Any, config: TrialConfig) -> float:
    if isinstance(spec, int | float):
        return float(spec)
    if config.name in spec:
        return float(spec[config.name])
    key = "decode" if config.s == 1 else "spec"
    if key in spec:
        return float(spec[key])
    return float(spec.get("*", next(iter(spec.values()))))
