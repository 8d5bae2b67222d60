"""The measurement backend: what the profiler and the cycle ask of a GPU (or of a fake).

A backend times one kernel version at one trial configuration, checks its output against
the kernel's reference, and (when it can) reads hardware counters.  The kernel is given
by its spec (`kbopt.kernel.KernelSpec`).  Two implementations:

- `kbopt.bench.real.RealBackend`: imports the kernel's versions and torch on a CUDA device
  and measures with the shared harness (`kbopt.bench.harness`); `ncu` for counters;
- `FakeBackend` (here): deterministic, no torch, no GPU: it never runs a version.  Every
  figure it produces is labelled fake (device `fake-gpu`, the command says `--backend
  fake`) and must never be used as evidence.  Its times come from a documented stand-in
  cost model over the spec's roofline and the version's source text:

      floor      = max(bytes_moved / 3000 GB/s, flops / 600 TFLOP/s)     (FAKE_DEVICE)
      efficiency = 0.30 + 0.65 * u,  u in [0, 1) from SHA-256(version source, knob values)
      time       = 4 us launch + floor / efficiency

  so that any edit of a version file (a designer's change, a restore from backup) changes
  what is measured, as on a GPU, but with no claim about which way.  A version file may
  instead script its figures with module constants (the tests do):

      FAKE_DURATION_US = {"decode": 120.0, "spec": 950.0}   # per trial name, or one number;
                                                            # scales with the backoff dim
      FAKE_FLOOR_US = {"decode": 55.0, "spec": 880.0}       # optional roofline floor
      FAKE_CORRECT = True                                   # optional
      FAKE_MAX_BACKOFF = 16                                 # optional: above it, OOM
      FAKE_COUNTERS = {"dram_throughput_pct": 40.0, ...}    # optional hardware counters
      FAKE_TIMING_METRICS = {...}                           # optional extra metrics
      FAKE_PARAM_FACTORS = {"block_n": {"64": 0.8}}         # optional knob effects

  `KBOPT_FAKE_DELAY_S` slows every measurement (the kill-and-resume test uses it).

It imports nothing of a version but one case: a Triton version that leaves knobs to the
kernel (None), whose choices a GPU launch would record for the catalog designer to scale
its moves from.  Those are learnt by compiling the version's launch for sm_90 without
running it (`kbopt.bench.launch_choices`, in one process of its own kept while the
backend uses it, once per version file, knob values and shape); they are facts of the
code, not figures.  A configuration the version's own launcher refuses while it is
followed (a tile past what a thread may hold) fails as it would on a GPU (VersionFailed).
"""

from __future__ import annotations

import ast
import datetime as dt
import hashlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from kbopt.bench.ncu import KernelCounters, NcuOutcome
from kbopt.bench.trials import TrialConfig, run_with_backoff
from kbopt.errors import KbError, ProblemList, VersionFailed
from kbopt.kernel import KernelSpec, check_version_source

if TYPE_CHECKING:
    from kbopt.bench.launch_choices import LaunchFollower

# Metrics every measurement carries from timing alone (plus the spec's dimension metrics).
TIMING_METRICS = ("duration_us", "pct_of_floor")
FAKE_DEVICE_NAME = "fake-gpu"  # the device every fake measurement names
FAKE_DEVICE = {"copy_bw_gbps": 3000.0, "matmul_tflops": 600.0, "sm_count": 132, "launch_us": 4.0}


@dataclass
class Measurement:
    """One version at one configuration: time, roofline, correctness, provenance."""

    kernel: str
    version: str
    config: TrialConfig  # as run: the backoff dim may be below the request after OOM
    duration_us: float
    correct: bool
    floor_us: float | None = None
    error: float | None = None  # relative error against the reference
    tolerance: float | None = None
    quantiles_us: tuple[float, float, float] | None = None  # p20, p50, p80
    metrics: dict[str, float] = field(default_factory=dict)  # canonical names
    shape_metrics: dict[str, float] = field(default_factory=dict)  # dims the catalog reads
    device: str = ""
    versions: dict[str, str] = field(default_factory=dict)
    date: str = ""
    command: str = ""
    note: str = ""  # e.g. the OOM backoff
    sm_count: int | None = None  # multiprocessors of the device (for ctas_per_sm)
    # What the version's launch recorded about itself (its launch_info: the block size,
    # warps, splits it actually used), scalar values only: what a knob left at None
    # ("the kernel chooses") really was.
    launched: dict[str, Any] = field(default_factory=dict)
    # Positions of the inputs the version writes into: it was timed on restored copies of
    # them (`kbopt.bench.input_writes`); empty when it writes none.
    inputs_written: tuple[int, ...] = ()

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
        out.update(self.shape_metrics)
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
            "shape_metrics": self.shape_metrics,
            "device": self.device,
            "versions": self.versions,
            "date": self.date,
            "command": self.command,
            "note": self.note,
            "sm_count": self.sm_count,
            "launched": self.launched,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Measurement:
        q = d.get("quantiles_us")
        shape = {k: float(v) for k, v in d.get("shape_metrics", {}).items()}
        derived = {"duration_us", "pct_of_floor", *shape}
        return cls(
            kernel=d["kernel"],
            version=d["version"],
            config=TrialConfig.from_dict(d["config"]),
            duration_us=float(d["duration_us"]),
            correct=bool(d["correct"]),
            floor_us=d.get("floor_us"),
            error=d.get("error"),
            tolerance=d.get("tolerance"),
            quantiles_us=(q[0], q[1], q[2]) if q else None,
            metrics={k: float(v) for k, v in d.get("metrics", {}).items() if k not in derived},
            shape_metrics=shape,
            device=d.get("device", ""),
            versions=dict(d.get("versions", {})),
            date=d.get("date", ""),
            command=d.get("command", ""),
            note=d.get("note", ""),
            sm_count=d.get("sm_count"),
            launched=dict(d.get("launched") or {}),
        )


class MeasurementBackend(Protocol):
    name: str
    root: Path

    def versions(self, spec: KernelSpec) -> list[str]: ...

    def version_files(self, spec: KernelSpec, version: str) -> list[Path]: ...

    def measure(
        self,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement: ...

    def counters(self, spec: KernelSpec, version: str, config: TrialConfig) -> NcuOutcome: ...


def measure_with_backoff(
    backend: MeasurementBackend,
    spec: KernelSpec,
    version: str,
    config: TrialConfig,
    params: Mapping[str, Any] | None = None,
) -> Measurement:
    """`backend.measure`, halving the spec's backoff dim on out-of-memory (noted)."""
    result = run_with_backoff(
        lambda cfg: backend.measure(spec, version, cfg, params),
        config,
        spec.backoff_dim,
        on_oom=getattr(backend, "release_memory", None),
    )
    m = result.value
    assert isinstance(m, Measurement)
    if result.reduced:
        m.note = "; ".join(x for x in (m.note, result.note) if x)
    return m


class FakeOutOfMemoryError(RuntimeError):
    """What the fake raises above FAKE_MAX_BACKOFF (named like torch's error)."""

    def __init__(self, dim: str, value: int, limit: int):
        super().__init__(f"CUDA out of memory (fake): {dim}={value} > {limit}")


def _scripts_fake_figures(path: Path) -> bool:
    """Whether a version file sets the figures this backend reports (FAKE_DURATION_US)."""
    try:
        return "FAKE_DURATION_US" in read_constants(path)
    except KbError:
        return False


def read_constants(path: Path) -> dict[str, Any]:
    """Module-level constants of a Python file, without importing it: literals, and plain
    arithmetic over numbers and constants defined above (`FAKE_DURATION_US = 4096 / BLOCK`),
    so that a scripted figure can follow a knob the designer edits."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError) as exc:
        raise KbError(f"{path}: cannot read the version's constants: {exc}") from None
    out: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Name):
                try:
                    out[target.id] = ast.literal_eval(node.value)
                except ValueError:
                    value = _arithmetic(node.value, out)
                    if value is not None:
                        out[target.id] = value
    return out


_ARITH = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
}


def _arithmetic(node: ast.expr, names: Mapping[str, Any]) -> float | None:
    """A number from `+ - * / //` over numbers and numeric constants; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return float(node.value)
    if isinstance(node, ast.Name) and isinstance(names.get(node.id), int | float):
        return float(names[node.id])
    if isinstance(node, ast.BinOp) and type(node.op) in _ARITH:
        left, right = _arithmetic(node.left, names), _arithmetic(node.right, names)
        if (
            left is None
            or right is None
            or (right == 0 and isinstance(node.op, ast.Div | ast.FloorDiv))
        ):
            return None
        return float(_ARITH[type(node.op)](left, right))
    return None


class FakeBackend:
    """Deterministic stand-in figures, never a measurement (see the module docstring)."""

    name = "fake"

    def __init__(self, root: Path | str):
        self.root = Path(root).resolve()
        self.calls: list[tuple[str, str, str, tuple[tuple[str, int], ...]]] = []
        # per version file, knob values and shape: (launched, why unknown, the catalog
        # metrics the launch recorded), or the launcher's refusal
        self._choices: dict[
            str, tuple[dict[str, Any], str | None, dict[str, float]] | VersionFailed
        ] = {}
        self._follower: LaunchFollower | None = None  # started when first needed

    def versions(self, spec: KernelSpec) -> list[str]:
        return list(spec.version_files())

    def version_files(self, spec: KernelSpec, version: str) -> list[Path]:
        return [spec.version_path(version)]

    def _source(self, spec: KernelSpec, version: str) -> Path:
        path = spec.version_path(version)
        if path.exists() and not path.is_file():
            from kbopt.textio import file_kind

            raise KbError(f"{path}: is {file_kind(path.stat().st_mode)}, not a Python file")
        if spec.version_family(version) is None or not path.is_file():
            known = ", ".join(spec.version_files()) or "none"
            raise KbError(f"{spec.name} has no version {version!r} ({path.name}); known: {known}")
        # A GPU would refuse a version that does not parse or lacks the entry point when it
        # imports it; stand-in figures for it would hide the mistake.  Files that script this
        # backend's figures (FAKE_DURATION_US: the demo's, tests') are stand-ins by design.
        problems = check_version_source(spec, path)
        if problems and not _scripts_fake_figures(path):
            raise ProblemList(problems)
        return path

    def measure(
        self,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement:
        delay = float(os.environ.get("KBOPT_FAKE_DELAY_S", "0") or 0)
        if delay:
            time.sleep(delay)
        path = self._source(spec, version)
        if params and spec.knobs_for(version):
            spec.check_knobs(version, params)  # the same refusals as on a GPU
        consts = read_constants(path)
        dims = config.dims_dict
        self.calls.append((spec.name, version, config.name, config.dims))
        limit = consts.get("FAKE_MAX_BACKOFF")
        value = dims.get(spec.backoff_dim, 0)
        if limit is not None and value > int(limit):
            raise FakeOutOfMemoryError(spec.backoff_dim, value, int(limit))
        scale = value / _trial_value(spec, config) if value else 1.0
        if "FAKE_DURATION_US" in consts:
            duration = _per_config(consts["FAKE_DURATION_US"], config) * scale
            floor = consts.get("FAKE_FLOOR_US")
            floor_us = _per_config(floor, config) * scale if floor is not None else None
        else:
            floor_us = spec.floor_us(
                dims, FAKE_DEVICE["copy_bw_gbps"], FAKE_DEVICE["matmul_tflops"]
            )
            duration = FAKE_DEVICE["launch_us"] + floor_us / _efficiency(path, params)
        for key, val in (params or {}).items():
            factors = consts.get("FAKE_PARAM_FACTORS", {}).get(key, {})
            duration *= float(factors.get(str(val), 1.0))
        correct = bool(consts.get("FAKE_CORRECT", True))
        note = "fake backend: stand-in figures, not a measurement"
        launched: dict[str, Any] = {}
        recorded: dict[str, float] = {}
        if "FAKE_DURATION_US" not in consts and self._leaves_knobs(spec, version, params):
            try:
                launched, unknown, recorded = self._launch_choices(
                    spec, version, path, dims, params
                )
            except VersionFailed as exc:  # its own check: the same refusal on a GPU
                raise VersionFailed(
                    f"{spec.name} {version} at {config.compact}: {exc}"[:600]
                ) from None
            note += (
                f"; what it leaves to the kernel is not known: {unknown}"
                if unknown
                else "; what it leaves to the kernel was read from its launch, compiled for "
                "sm_90 without running"
            )
        metrics = {k: float(v) for k, v in dict(consts.get("FAKE_TIMING_METRICS", {})).items()}
        if "FAKE_DURATION_US" not in consts:
            metrics.update(
                timing_metrics(
                    spec, dims, duration, FAKE_DEVICE["copy_bw_gbps"], FAKE_DEVICE["matmul_tflops"]
                )
            )
        # What the launch itself records (heads a program handles, the share of programs
        # with work, splits) is a fact of the launch, not a timing: the same as on a GPU.
        metrics.update(recorded)
        return Measurement(
            kernel=spec.name,
            version=version,
            config=config,
            duration_us=duration,
            correct=correct,
            floor_us=floor_us,
            error=0.0 if correct else 1.0,
            tolerance=spec.tolerances.get(spec.dtype),
            quantiles_us=(duration * 0.99, duration, duration * 1.01),
            metrics=metrics,
            shape_metrics=spec.dim_metrics(dims),
            device=FAKE_DEVICE_NAME,
            sm_count=int(consts.get("FAKE_SM_COUNT", FAKE_DEVICE["sm_count"])),
            versions={"kbopt-fake": "1"},
            date=dt.date.today().isoformat(),
            command=f"kbopt profile {spec.name} {version} --config {config.compact} --backend fake",
            note=note,
            launched=launched,
        )

    @staticmethod
    def _leaves_knobs(spec: KernelSpec, version: str, params: Mapping[str, Any] | None) -> bool:
        """A Triton version with a knob at None once `params` are applied."""
        if spec.version_family(version) != "triton":
            return False
        values = {**spec.knob_values(version), **dict(params or {})}
        return any(v is None for v in values.values())

    def _launch_choices(
        self,
        spec: KernelSpec,
        version: str,
        path: Path,
        dims: Mapping[str, int],
        params: Mapping[str, Any] | None,
    ) -> tuple[dict[str, Any], str | None, dict[str, float]]:
        """What the version's launch chooses at `dims` (`kbopt.bench.launch_choices`), why
        not where it is not known, and the catalog metrics the launch recorded, once per
        version file, knob values and shape."""
        from kbopt.bench.launch_choices import LaunchFollower

        key = json.dumps(
            [hashlib.sha256(path.read_bytes()).hexdigest(), dict(dims), dict(params or {})],
            sort_keys=True,
            default=str,
        )
        if key not in self._choices:
            if self._follower is None:
                self._follower = LaunchFollower(self.root)
            try:
                launched, unknown = self._follower.learn(spec, version, dims, params)
                self._choices[key] = (launched, unknown, dict(self._follower.last_metrics))
            except VersionFailed as exc:
                self._choices[key] = exc
        known = self._choices[key]
        if isinstance(known, VersionFailed):
            raise known
        launched, unknown, recorded = known
        return dict(launched), unknown, dict(recorded)

    def counters(self, spec: KernelSpec, version: str, config: TrialConfig) -> NcuOutcome:
        consts = read_constants(self._source(spec, version))
        counters = consts.get("FAKE_COUNTERS")
        if not counters:
            return NcuOutcome(
                [], [], unavailable="the fake backend has no counters for this version"
            )
        kernels_spec = counters if isinstance(counters, list) else [counters]
        kernels = [
            KernelCounters(
                launch_id=i,
                name=str(item.get("name", f"{version}_kernel_{i}")),
                metrics={k: float(v) for k, v in item.items() if k != "name"},
            )
            for i, item in enumerate(kernels_spec)
        ]
        return NcuOutcome(kernels, ["fake-ncu"])


def _trial_value(spec: KernelSpec, config: TrialConfig) -> float:
    """The backoff dim's value at the trial point this configuration is named after."""
    trial = spec.trial(config.name)
    dims = trial.dims if trial is not None else config.dims_dict
    return float(dims.get(spec.backoff_dim) or 1)


def _efficiency(path: Path, params: Mapping[str, Any] | None) -> float:
    """0.30 .. 0.95, a fixed function of the version's source and knob values."""
    digest = hashlib.sha256(path.read_bytes())
    digest.update(json.dumps(dict(params or {}), sort_keys=True, default=str).encode())
    u = int.from_bytes(digest.digest()[:8], "big") / 2**64
    return 0.30 + 0.65 * u


def timing_metrics(
    spec: KernelSpec,
    dims: Mapping[str, int],
    duration_us: float,
    copy_bw_gbps: float,
    matmul_tflops: float,
) -> dict[str, float]:
    """DRAM% and TC% from the spec's bytes and FLOPs over the time, against the ceilings
    (lower bounds when no counters were read: the real traffic is at least these bytes)."""
    seconds = duration_us * 1e-6
    nbytes, nflops = spec.bytes_moved(dims), spec.flops(dims)
    # A kernel timed above a ceiling (noise, or a ceiling measured in another precision than
    # its products) is at that ceiling: a share of a pipe cannot pass 100%.  pct_of_floor is
    # left as measured, so a floor above 100% still shows.
    out = {
        "dram_throughput_pct": min(100.0, 100.0 * nbytes / seconds / (copy_bw_gbps * 1e9)),
        "tensor_core_util_pct": min(100.0, 100.0 * nflops / seconds / (matmul_tflops * 1e12)),
    }
    if nbytes:
        out["arithmetic_intensity"] = nflops / nbytes
    return out


def _per_config(spec: Any, config: TrialConfig) -> float:
    if isinstance(spec, int | float):
        return float(spec)
    if config.name in spec:
        return float(spec[config.name])
    return float(spec.get("*", next(iter(spec.values()))))
