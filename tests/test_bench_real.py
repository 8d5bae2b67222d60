"""The real backend: clear errors without a GPU, and one real measurement with one."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.bench.real import RealBackend
from kbopt.bench.trials import TrialConfig
from kbopt.errors import KbError
from kbopt.kernel import load_spec

REPO = Path(__file__).resolve().parent.parent
MLA = load_spec("mla_decode", REPO)
SMALL = TrialConfig.of("small", {"b": 2, "s": 1, "t": 256}, "a few KV tiles")


def test_versions_come_from_the_kernel_spec() -> None:
    names = RealBackend(REPO).versions(MLA)
    assert "torch" in names and "triton_v1" in names


def test_unknown_kernel_is_a_clean_error() -> None:
    with pytest.raises(KbError, match="no kernel 'no_such_kernel'"):
        load_spec("no_such_kernel", REPO)


def test_without_cuda_the_error_says_what_to_do() -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(KbError, match="--backend fake"):
        RealBackend(REPO).measure(MLA, "torch", SMALL)


@pytest.mark.gpu
def test_measure_and_counters_on_the_gpu() -> None:
    backend = RealBackend(REPO, rep_ms=20)
    m = backend.measure(MLA, "triton_v2", SMALL)
    assert m.correct and m.duration_us > 0
    assert m.floor_us is not None and 0 < (m.pct_of_floor or 0) <= 100
    assert m.sm_count and m.device
    assert m.shape_metrics["kv_len"] == 256 and m.all_metrics()["batch"] == 2
    tuned = backend.measure(MLA, "triton_v2", SMALL, {"block_n": 64})
    assert tuned.correct and "block_n=64" in tuned.command
    with pytest.raises(KbError, match="unknown knob"):
        backend.measure(MLA, "triton_v2", SMALL, {"no_such": 1})
    with pytest.raises(KbError, match="not allowed"):
        backend.measure(MLA, "triton_v2", SMALL, {"block_n": 48})
    outcome = backend.counters(MLA, "triton_v2", SMALL)
    assert outcome.available or outcome.unavailable  # either counters or the reason why not
    if outcome.available:
        assert outcome.kernels[0].metrics["duration_us"] > 0


def test_profile_budget_left_after_the_measurement_bounds_ncu(tmp_path, monkeypatch) -> None:
    """`kbopt profile --budget-s` is the whole profile's: ncu gets what the measurement left,
    and is not started when too little is left (the profile then says why)."""
    import time

    from kbopt.bench import real
    from kbopt.bench.trials import TrialConfig
    from kbopt.kernel import load_spec

    backend = real.RealBackend(tmp_path)
    seen = {}

    def fake_launches(target, **kw):
        seen["budget_s"] = kw["budget_s"]
        return real.NcuOutcome(kernels=[], command=[], unavailable="stub")

    monkeypatch.setattr(real, "profile_launches", fake_launches)
    spec = load_spec("add_rmsnorm")
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8, "hidden": 64}})
    backend.ncu_deadline = time.monotonic() + 2.0
    out = backend.counters(spec, "triton_v1", cfg)
    assert "budget" in (out.unavailable or "") and "budget_s" not in seen
    backend.ncu_deadline = time.monotonic() + 100.0
    backend.counters(spec, "triton_v1", cfg)
    assert 90.0 < seen["budget_s"] <= 100.0
    backend.ncu_deadline = None  # no caller deadline: the backend's own ncu limit
    backend.counters(spec, "triton_v1", cfg)
    assert seen["budget_s"] == backend.ncu_timeout_s


def test_a_version_that_raises_is_not_timed(monkeypatch) -> None:
    """A version that raises in the check (e.g. Triton's OutOfResources) comes back as a
    row with its error and no time; calling it again to time it would only raise again,
    and `kbopt profile` then printed a traceback."""
    from kbopt.bench import harness, suite

    spec = load_spec("add_rmsnorm", REPO)
    problem = f"{harness.RAISED} OutOfResources: out of resource: shared memory"
    monkeypatch.setattr(harness, "check", lambda *a, **k: (float("inf"), problem))

    def never(*a, **k):
        raise AssertionError("a version that raised was timed")

    monkeypatch.setattr(harness, "bench_ms", never)
    version = spec.load_versions()[0]["torch"]
    dims = dict(spec.trials[0].dims)
    row = suite.time_version(spec, version, dims, [], {}, 10, time_wrong=True)
    assert row["status"] == "wrong" and row["error"] == problem and "time_us" not in row


def test_an_infinity_the_reference_has_too_matches_and_any_other_does_not() -> None:
    """A sampling filter writes -inf into the logits it masks (vLLM's min-p, SGLang's
    grammar bitmask): the same -inf in the same places is exact; NaN (an unwritten element
    of a poisoned output), an infinity the reference lacks, or the other sign is not."""
    import torch

    from kbopt.bench.harness import rel_error

    inf = float("inf")
    ref = torch.tensor([1.0, -inf, 2.0, -inf])
    assert rel_error(torch.tensor([1.0, -inf, 2.0, -inf]), ref) == 0.0
    assert 0.0 < rel_error(torch.tensor([1.1, -inf, 2.0, -inf]), ref) < 0.1
    assert rel_error(torch.tensor([1.0, -inf, 2.0, 0.0]), ref) == inf  # a mask missed
    assert rel_error(torch.tensor([1.0, -inf, -inf, -inf]), ref) == inf  # one too many
    assert rel_error(torch.tensor([1.0, inf, 2.0, -inf]), ref) == inf  # the other sign
    assert rel_error(torch.tensor([1.0, -inf, float("nan"), -inf]), ref) == inf
    assert rel_error(torch.tensor([1.0, 2.0]), torch.tensor([1.0, 2.0])) == 0.0
