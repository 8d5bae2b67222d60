"""The real measurement backend: `kernels/<kernel>/` on a CUDA GPU, ncu for counters.

It relies on the layout every kernel folder follows (see `kernels/mla_decode/`):

- `registry.py`: `versions()` / `get(name)` -> objects with `.family` and `.fn`, all with the
  reference's signature;
- `reference.py`: `Config`, `make_inputs(b, s, t, ..., dtype=, device=)`, `flops(b, s, t)`,
  `bytes_moved(b, s, t)`;
- `bench.py`: `measure_ceilings(rep_ms)` (copy bandwidth, matmul rate), `_check(family, fn,
  cfg, b)` (fresh ragged inputs, poisoned pool, fp32 reference), `_bench_ms(fn, rep_ms)`
  (`triton.testing.do_bench` median with L2 flush), `_rotating(fn, sets)`, `software()`.

Timing, ceilings and correctness are the kernel's own bench code, not a copy of it.  The
roofline floor is `max(bytes / copy bandwidth, FLOPs / matmul rate)`.  Without counters
the DRAM% and TC% of a profile are the achieved fractions of those two ceilings (lower
bounds: the real traffic is at least the minimal bytes).

Edited kernel files are re-imported before each measurement (the cycle's designer may
change a version's source between two measurements in one process).  Tuning parameters
are applied by replacing the version module's `CONFIG` dataclass for the duration of the
measurement.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import importlib
import os
import sys
from collections.abc import Mapping
from pathlib import Path
from types import ModuleType
from typing import Any

from kbopt.bench.backend import Measurement
from kbopt.bench.ncu import NcuOutcome, run_ncu
from kbopt.bench.trials import TrialConfig
from kbopt.errors import KbError

L2_BYTES = 60_000_000  # rotate input sets whose KV caches together exceed the L2 several times
CONFIG_ATTR = "CONFIG"  # the tunable dataclass a version module exposes


class RealBackend:
    name = "real"

    def __init__(self, root: Path | str, rep_ms: int | None = None):
        self.root = Path(root).resolve()
        # do_bench repetition time per measurement; KBOPT_BENCH_REP_MS shortens a budgeted run.
        self.rep_ms = rep_ms or int(os.environ.get("KBOPT_BENCH_REP_MS", "100"))
        self.ncu_timeout_s = float(os.environ.get("KBOPT_NCU_TIMEOUT_S", "300"))
        self._ceilings: dict[str, float] | None = None
        self._hashes: dict[str, str] = {}
        if str(self.root) not in sys.path:
            sys.path.insert(0, str(self.root))

    # ------------------------------------------------------------------ modules

    def _module(self, kernel: str, name: str) -> ModuleType:
        try:
            return importlib.import_module(f"kernels.{kernel}.{name}")
        except ModuleNotFoundError as exc:
            raise KbError(f"kernels/{kernel}/ has no importable {name}.py: {exc}") from None

    def _refresh(self, kernel: str) -> None:
        """Re-import kernel modules whose source changed since they were loaded."""
        prefix = f"kernels.{kernel}."
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

    def versions(self, kernel: str) -> list[str]:
        return list(self._module(kernel, "registry").versions())

    def version_files(self, kernel: str, version: str) -> list[Path]:
        path = self.root / "kernels" / kernel / f"{version}.py"
        return [path] if path.is_file() else []

    def release_memory(self) -> None:
        import torch

        torch.cuda.empty_cache()

    def ceilings(self, kernel: str) -> dict[str, float]:
        if self._ceilings is None:
            self._ceilings = self._module(kernel, "bench").measure_ceilings(self.rep_ms)
        return self._ceilings

    def measure(
        self,
        kernel: str,
        version: str,
        config: TrialConfig,
        params: Mapping[str, Any] | None = None,
    ) -> Measurement:
        torch = self._torch()
        self._refresh(kernel)
        ref = self._module(kernel, "reference")
        bench = self._module(kernel, "bench")
        registry = self._module(kernel, "registry")
        ceil = self.ceilings(kernel)
        try:
            entry = registry.get(version)
        except KeyError as exc:
            raise KbError(str(exc).strip("'\"")) from None
        self._refresh(kernel)  # the registry may have imported the version just now
        with _params_applied(self, kernel, version, params):
            cfg = ref.Config(config.name, b=config.b, s=config.s, t=config.t)
            kv_bytes = cfg.b * cfg.t * ref.D_QK * 2
            n_sets = max(2, min(8, -(-4 * L2_BYTES // kv_bytes)))
            sets = [
                ref.make_inputs(cfg.b, cfg.s, cfg.t, cfg.h, dtype=torch.bfloat16, device="cuda")
                for _ in range(n_sets)
            ]
            _launch_info(kernel, clear=True)  # stale info from another version must not leak
            err, problem = bench._check(entry.family, entry.fn, cfg, cfg.b)
            med_ms, p20_ms, p80_ms = bench._bench_ms(bench._rotating(entry.fn, sets), self.rep_ms)
            info = _launch_info(kernel)
        del sets
        us = med_ms * 1e3
        nbytes = ref.bytes_moved(cfg.b, cfg.s, cfg.t, cfg.h)
        nflops = ref.flops(cfg.b, cfg.s, cfg.t, cfg.h)
        t_bw = nbytes / (ceil["copy_bw_gbps"] * 1e9) * 1e6
        t_mm = nflops / (ceil["matmul_tflops"] * 1e12) * 1e6
        gbps = nbytes / (us * 1e-6) / 1e9
        tflops = nflops / (us * 1e-6) / 1e12
        metrics = {
            "dram_throughput_pct": 100.0 * gbps / ceil["copy_bw_gbps"],
            "tensor_core_util_pct": 100.0 * tflops / ceil["matmul_tflops"],
            "arithmetic_intensity": nflops / nbytes,
            "num_heads": float(cfg.h),
        }
        if "n_regs" in info:
            metrics["registers_per_thread"] = float(info["n_regs"])
        if "splits" in info:
            metrics["num_splits"] = float(info["splits"])
        props = torch.cuda.get_device_properties(0)
        shape = f"{config.b},{config.s},{config.t}"
        return Measurement(
            kernel=kernel,
            version=version,
            config=config,
            duration_us=us,
            correct=problem is None,
            floor_us=max(t_bw, t_mm),
            error=float(err),
            tolerance=float(getattr(bench, "REL_TOL", 0.0)) or None,
            quantiles_us=(p20_ms * 1e3, med_ms * 1e3, p80_ms * 1e3),
            metrics=metrics,
            device=torch.cuda.get_device_name(0),
            versions=dict(bench.software()),
            date=dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            command=f"kbopt profile {kernel} {version} --config {shape}"
            + (
                " (params " + ", ".join(f"{k}={v}" for k, v in params.items()) + ")"
                if params
                else ""
            ),
            note=problem or "",
            sm_count=int(props.multi_processor_count),
        )

    def counters(self, kernel: str, version: str, config: TrialConfig) -> NcuOutcome:
        target = [
            sys.executable,
            "-m",
            "kbopt.bench.ncu_target",
            kernel,
            version,
            str(config.b),
            str(config.s),
            str(config.t),
        ]
        pythonpath = os.pathsep.join(
            p for p in (str(self.root), os.environ.get("PYTHONPATH", "")) if p
        )
        return run_ncu(
            target, env={"PYTHONPATH": pythonpath}, cwd=self.root, timeout_s=self.ncu_timeout_s
        )


class _params_applied:
    """Swap the version module's CONFIG dataclass for one with `params`, then put it back."""

    def __init__(
        self, backend: RealBackend, kernel: str, version: str, params: Mapping[str, Any] | None
    ):
        self.module: ModuleType | None = None
        self.saved: Any = None
        self.params = dict(params or {})
        if self.params:
            self.module = backend._module(kernel, version)
            if not dataclasses.is_dataclass(getattr(self.module, CONFIG_ATTR, None)):
                raise KbError(f"{version} has no CONFIG dataclass: it exposes no tunable parameter")

    def __enter__(self) -> None:
        if self.module is None:
            return
        self.saved = getattr(self.module, CONFIG_ATTR)
        names = {f.name for f in dataclasses.fields(self.saved)}
        unknown = sorted(set(self.params) - names)
        if unknown:
            raise KbError(
                f"unknown parameter(s) {', '.join(unknown)}; {type(self.saved).__name__} has "
                f"{', '.join(sorted(names))}"
            )
        setattr(self.module, CONFIG_ATTR, dataclasses.replace(self.saved, **self.params))

    def __exit__(self, *exc: object) -> None:
        if self.module is not None:
            setattr(self.module, CONFIG_ATTR, self.saved)


def _launch_info(kernel: str, clear: bool = False) -> dict[str, int]:
    """Registers / spills / splits of the last Triton launch, when the kernel records them."""
    mod = sys.modules.get(f"kernels.{kernel}.triton_tiled")
    info = getattr(mod, "LAST_INFO", None)
    if not isinstance(info, dict):
        return {}
    out = dict(info)
    if clear:
        info.clear()
    return out
