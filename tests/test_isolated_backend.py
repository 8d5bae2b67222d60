"""Measurements in a child process: a launch that breaks its process's GPU context fails
only its own trial; a hung or dead child fails only its own; errors keep their names."""

from __future__ import annotations

import functools
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from kbopt.bench.backend import FakeBackend, Measurement
from kbopt.bench.isolated import LOST, IsolatedBackend, remote_error
from kbopt.bench.trials import TrialConfig, is_out_of_memory
from kbopt.kernel import KernelSpec, clear_cache, load_spec
from kbopt.store import Store
from kbopt.workflow.ablation import run_ablation

REPO = Path(__file__).resolve().parent.parent
DECODE = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})


class StickyFaultBackend(FakeBackend):
    """The fake backend with CUDA's sticky fault: once a launch faults (num_warps=16 here),
    every later measurement in the same process fails with the same error."""

    def __init__(self, root: str, hang_warps: int | None = None, die_warps: int | None = None):
        super().__init__(root)
        self.broken = False
        self.hang_warps, self.die_warps = hang_warps, die_warps

    def measure(
        self, spec: KernelSpec, version: str, config: TrialConfig, params: Any = None
    ) -> Measurement:
        warps = (params or {}).get("num_warps")
        if warps is not None and warps == self.hang_warps:
            time.sleep(60)
        if warps is not None and warps == self.die_warps:
            os._exit(3)
        if self.broken or warps == 16:
            self.broken = True
            # CUDA's errors run on over several lines; a search keeps the first.
            raise RuntimeError(
                "CUDA error: an illegal memory access was encountered\n"
                "CUDA kernel errors might be asynchronously reported at some other API call"
            )
        return super().measure(spec, version, config, params)

    def device_usable(self) -> bool:
        return not self.broken


def _project(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "docs" / "knowledge", tmp_path / "docs" / "knowledge")
    (tmp_path / "kernels").mkdir()
    shutil.copy(REPO / "kernels" / "__init__.py", tmp_path / "kernels" / "__init__.py")
    shutil.copytree(
        REPO / "kernels" / "mla_decode",
        tmp_path / "kernels" / "mla_decode",
        ignore=shutil.ignore_patterns("results", "__pycache__"),
    )
    clear_cache()
    return tmp_path


def _grid(root: Path, backend: Any) -> list[dict[str, Any]]:
    doc = run_ablation(
        spec=load_spec("mla_decode", root),
        backend=backend,
        store=Store(root),
        start="triton_v2",
        config=DECODE,
        arms=["grid"],
        trials=14,
        seed=1,
    )
    # The results say how often the measuring process was replaced, where one was.
    assert doc.get("measuring_restarts") == getattr(backend, "restarts", None)
    return list(doc["rows"][0]["trajectory"])


def test_a_faulting_configuration_fails_only_its_own_trials(tmp_path: Path) -> None:
    root = _project(tmp_path)
    # In one process the fault takes every later trial with it (what the child prevents).
    here = _grid(root, StickyFaultBackend(str(root)))
    first = min(t["n"] for t in here if t["values"]["num_warps"] == 16)
    assert any(t["status"] == "error" and t["values"]["num_warps"] != 16 for t in here)
    with IsolatedBackend(root, make=StickyFaultBackend) as backend:
        apart = _grid(root, backend)
        restarts = backend.restarts
    faulted = [t for t in apart if t["values"]["num_warps"] == 16]
    assert faulted and all(t["status"] == "error" and LOST in t["note"] for t in faulted)
    assert all(t["status"] == "ok" for t in apart if t["values"]["num_warps"] != 16)
    assert any(t["n"] > first and t["status"] == "ok" for t in apart)
    assert restarts == len(faulted)  # a new child after each fault, none otherwise
    # The same values measured in a child as in this process, up to the fault.
    assert [t["duration_us"] for t in apart[: first - 1]] == [
        t["duration_us"] for t in here[: first - 1]
    ]


@pytest.mark.parametrize(
    ("kind", "make", "said"),
    [
        ("hangs", functools.partial(StickyFaultBackend, hang_warps=4), "no result within 3 s"),
        ("dies", functools.partial(StickyFaultBackend, die_warps=4), "died (exit code 3)"),
    ],
)
def test_a_child_that_hangs_or_dies_fails_its_trial_and_the_next_one_runs(
    tmp_path: Path, kind: str, make: Any, said: str
) -> None:
    root = _project(tmp_path)
    spec = load_spec("mla_decode", root)
    with IsolatedBackend(root, make=make, timeout_s=3) as backend:
        ok = backend.measure(spec, "triton_v2", DECODE, {"num_warps": 8})
        with pytest.raises(RuntimeError, match=said.replace("(", r"\(").replace(")", r"\)")):
            backend.measure(spec, "triton_v2", DECODE, {"num_warps": 4})
        again = backend.measure(spec, "triton_v2", DECODE, {"num_warps": 8})
    assert again.duration_us == ok.duration_us and backend.restarts == 1


def test_errors_keep_their_class_names_so_the_backoff_still_sees_out_of_memory() -> None:
    oom = remote_error("OutOfMemoryError", "CUDA out of memory. Tried to allocate 2 GiB")
    assert is_out_of_memory(oom) and type(oom).__name__ == "OutOfMemoryError"
    other = remote_error("AcceleratorError", "CUDA error: misaligned address")
    assert not is_out_of_memory(other) and f"{type(other).__name__}: {other}".startswith(
        "AcceleratorError: CUDA error"
    )
