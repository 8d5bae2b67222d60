"""The real backend: clear errors without a GPU, and one real measurement with one."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.bench.real import RealBackend
from kbopt.bench.trials import TrialConfig
from kbopt.errors import KbError

REPO = Path(__file__).resolve().parent.parent
SMALL = TrialConfig("small", 2, 1, 256, "a few KV tiles")


def test_versions_come_from_the_kernel_registry() -> None:
    names = RealBackend(REPO).versions("mla_decode")
    assert "torch" in names and "triton_v1" in names


def test_unknown_kernel_is_a_clean_error() -> None:
    with pytest.raises(KbError, match="no importable registry"):
        RealBackend(REPO).versions("no_such_kernel")


def test_without_cuda_the_error_says_what_to_do() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(KbError, match="--backend fake"):
        RealBackend(REPO).measure("mla_decode", "torch", SMALL)


@pytest.mark.gpu
def test_measure_and_counters_on_the_gpu() -> None:
    backend = RealBackend(REPO, rep_ms=20)
    m = backend.measure("mla_decode", "triton_v2", SMALL)
    assert m.correct and m.duration_us > 0
    assert m.floor_us is not None and 0 < (m.pct_of_floor or 0) <= 100
    assert m.sm_count and m.device
    tuned = backend.measure("mla_decode", "triton_v2", SMALL, {"block_n": 64})
    assert tuned.correct and "block_n=64" in tuned.command
    with pytest.raises(KbError, match="unknown parameter"):
        backend.measure("mla_decode", "triton_v2", SMALL, {"no_such": 1})
    outcome = backend.counters("mla_decode", "triton_v2", SMALL)
    assert outcome.available or outcome.unavailable  # either counters or the reason why not
    if outcome.available:
        assert outcome.kernels[0].metrics["duration_us"] > 0
