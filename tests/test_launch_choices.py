"""What a Triton version leaves to the kernel, learnt without a GPU: the fake backend
compiles the version's launch for sm_90 without running it (kbopt.bench.launch_choices),
so the catalog designer can scale its moves from those values in a dry run."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kbopt.bench.backend import FakeBackend
from kbopt.bench.launch_choices import LaunchFollower, chosen
from kbopt.bench.trials import TrialConfig
from kbopt.errors import VersionFailed
from kbopt.kernel import load_spec

REPO = Path(__file__).resolve().parent.parent
# add_rmsnorm measured on an H200: what triton_v3's launches recorded (it leaves its warps
# to the kernel, which sizes them to the row)
H200_RESULTS = REPO / "kernels" / "add_rmsnorm" / "results" / "20261202T182713Z-NVIDIA-H200.json"


def test_chosen_keeps_the_plain_values_and_the_warps_every_kernel_shares() -> None:
    info = {"splits": 4, "block": 64, "kernel_names": ["a", "b"], "metrics": {"grid_size": 8}}
    assert chosen(info, [{"num_warps": 4, "num_stages": 2}] * 2) == {
        "splits": 4,
        "block": 64,
        "num_warps": 4,
        "num_stages": 2,
    }
    # kernels of several warps: which one carries the call needs a timing, so none is taken
    two = chosen(info, [{"num_warps": 1, "num_stages": 3}, {"num_warps": 4, "num_stages": 3}])
    assert "num_warps" not in two and two["num_stages"] == 3  # Triton's default, shared
    assert chosen({"num_warps": 8}, [{"num_warps": 4, "num_stages": 1}])["num_warps"] == 8
    # a value the launcher could only stand in for on CPU tensors, and said so, is left out
    marked = {"programs_per_sm": 1, "programs_per_sm_from": "interpreter", "block": 64}
    assert chosen(marked, []) == {"block": 64}  # (nothing compiled: no warps either)


def test_the_fake_backend_learns_what_the_h200_launch_recorded() -> None:
    pytest.importorskip("triton")
    spec = load_spec("add_rmsnorm", REPO)
    assert spec.knob_values("triton_v3")["num_warps"] is None
    measured = {
        r["config"]: r for r in json.loads(H200_RESULTS.read_text()) if r["version"] == "triton_v3"
    }
    backend = FakeBackend(REPO)
    for config in ("large", "xlarge"):
        # the launch sizes its block and warps to the row, not to the number of rows: 256
        # rows keep the CPU inputs small (the xlarge trial's are over a GB)
        gpu = measured[config]
        dims = {**gpu["dims"], "rows": 256}
        m = backend.measure(spec, "triton_v3", TrialConfig.of(config, dims))
        assert "read from its launch, compiled for sm_90 without running" in m.note, m.note
        for key in ("num_warps", "block", "num_stages", "rows_per_program", "shared"):
            assert m.launched[key] == gpu[f"kernel_{key}"], (config, key)
    # the warps differ by row width (4 at 4096, 8 at 8192), so each shape was followed
    assert {measured[c]["kernel_num_warps"] for c in ("large", "xlarge")} == {4, 8}
    # triton_v4 sizes its persistent grid from the compiled kernel's occupancy on a GPU:
    # on CPU tensors its launcher stands in 1 and says so, and the stand-in is not learnt
    small = TrialConfig.of("large", {"rows": 256, "hidden": 4096})
    persistent = backend.measure(spec, "triton_v4", small).launched
    assert persistent["persistent"] is True and "programs_per_sm" not in persistent


def test_the_fake_backend_reports_the_metrics_the_launch_records() -> None:
    # a launch records catalog metrics of its own (add_rmsnorm's: its grid and programs per
    # SM; vLLM's LoRA launches: the share of programs with work): facts of the launch, not
    # timings, so a dry run's profile carries them as a GPU run's does
    pytest.importorskip("triton")
    spec = load_spec("add_rmsnorm", REPO)
    backend = FakeBackend(REPO)
    try:
        m = backend.measure(spec, "triton_v3", TrialConfig.of("large", {"rows": 8, "hidden": 4096}))
        assert backend._follower is not None
        recorded = backend._follower.last_metrics
        assert recorded["grid_size"] == 8.0  # one program a row
        assert {k: m.metrics[k] for k in recorded} == recorded
    finally:
        if backend._follower is not None:
            backend._follower.close()


def test_a_launch_that_cannot_be_followed_says_why(tmp_path: Path) -> None:
    spec = load_spec("add_rmsnorm", REPO)
    follower = LaunchFollower(REPO)
    try:
        launched, why = follower.learn(spec, "triton_v99", {"rows": 8, "hidden": 64}, None)
        assert launched == {} and why is not None and "triton_v99" in why
        # one that takes too long is given up on, and the process with it
        follower.timeout_s = 0.001
        launched, why = follower.learn(spec, "triton_v3", {"rows": 8, "hidden": 64}, None)
        assert launched == {} and why == "compiling its launch took more than 0.001 s"
        assert follower.proc is None
    finally:
        follower.close()


def test_a_configuration_the_launcher_refuses_fails_as_on_a_gpu() -> None:
    # add_rmsnorm's one-pass launcher checks its configuration in Python before compiling
    # (triton_common._plan): a block other than the whole row raises ValueError there, on
    # any device, so the fake backend fails the version instead of keeping it
    pytest.importorskip("triton")
    spec = load_spec("add_rmsnorm", REPO)
    backend = FakeBackend(REPO)
    small = TrialConfig.of("large", {"rows": 8, "hidden": 4096})
    with pytest.raises(VersionFailed) as failed:
        backend.measure(spec, "triton_v3", small, {"block": 1024})
    text = str(failed.value)
    assert text.startswith("add_rmsnorm triton_v3 at ")
    assert "its launcher refuses this configuration: one-pass versions hold the whole row" in text
    # once known, the refusal is not asked again (the follower's process is not needed)
    assert backend._follower is not None
    backend._follower.close()
    backend._follower.timeout_s = 0.001  # a new request would time out, not fail
    with pytest.raises(VersionFailed, match="its launcher refuses"):
        backend.measure(spec, "triton_v3", small, {"block": 1024})
    # the version itself, unchanged, is followed as before
    backend._follower.timeout_s = 120
    assert backend.measure(spec, "triton_v3", small).launched["num_warps"] == 4


def test_only_a_value_error_raised_in_the_specs_own_folder_is_a_refusal(tmp_path: Path) -> None:
    # raised inside torch, Triton or a third-party wrapper, an error on CPU tensors may only
    # mean that the call needs a GPU: the values then stay unknown, as before
    from kbopt.bench.launch_choices import own_refusal

    def raised(exc: Exception, where: Path) -> Exception:
        code = compile("def f(e):\n    raise e\n", str(where), "exec")
        scope: dict[str, Any] = {}
        exec(code, scope)
        try:
            scope["f"](exc)
        except Exception as caught:
            return caught
        raise AssertionError("not raised")

    folder = tmp_path / "kernel"
    folder.mkdir()
    assert own_refusal(raised(ValueError("too wide"), folder / "launcher.py"), folder)
    assert not own_refusal(raised(RuntimeError("needs CUDA"), folder / "launcher.py"), folder)
    assert not own_refusal(raised(ValueError("too wide"), tmp_path / "torch.py"), folder)
    assert not own_refusal(ValueError("never raised"), folder)


def test_an_autotuned_launch_is_refused_with_the_reason() -> None:
    # Triton's autotuner times its candidates through the active driver's benchmarker: the
    # compile-only driver has none to give, and says why (Liger's DyT launch is autotuned)
    pytest.importorskip("triton")
    from kbopt.bench.compile_only import CompileOnlyDriver

    with pytest.raises(RuntimeError, match="autotuned launch chooses its configuration by"):
        CompileOnlyDriver(90).get_benchmarker()


def test_an_idle_follower_ends_and_the_next_request_starts_another(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # an idle process holds torch and a shape's inputs: it ends after KBOPT_LAUNCH_CHOICES_IDLE_S
    pytest.importorskip("triton")
    monkeypatch.setenv("KBOPT_LAUNCH_CHOICES_IDLE_S", "1")
    spec = load_spec("add_rmsnorm", REPO)
    follower = LaunchFollower(REPO)
    small = {"rows": 8, "hidden": 4096}
    try:
        first, why = follower.learn(spec, "triton_v3", small, None)
        assert why is None and first["num_warps"] == 4
        assert follower.proc is not None
        follower.proc.wait(timeout=30)  # it ends by itself, idle
        assert follower.proc.returncode == 0
        again, why = follower.learn(spec, "triton_v3", small, None)
        assert why is None and again == first
    finally:
        follower.close()


def test_the_command_line_answers_one_request_or_says_how_to_ask(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from kbopt.bench.launch_choices import main

    assert main(["add_rmsnorm"]) == 2
    assert "usage: python -m kbopt.bench.launch_choices" in capsys.readouterr().err
    assert main(["add_rmsnorm", "triton_v99", '{"rows": 8, "hidden": 64}']) == 0
    answer = json.loads(capsys.readouterr().out)
    assert "triton_v99" in answer["error"] and "launched" not in answer
    refused = ["add_rmsnorm", "triton_v3", '{"rows": 8, "hidden": 4096}', '{"block": 1024}']
    assert main(refused) == 0
    answer = json.loads(capsys.readouterr().out)
    assert answer["refused"].startswith("one-pass versions hold the whole row")


def test_recorded_metrics_are_the_launchs_catalog_numbers_and_its_splits() -> None:
    from kbopt.bench.launch_choices import recorded_metrics

    info = {"splits": 4, "metrics": {"heads_per_program": 16}}
    assert recorded_metrics(info) == {"heads_per_program": 16.0, "num_splits": 4.0}
    # what the launch put under "metrics" wins over its plain splits, as on the GPU
    assert recorded_metrics({"splits": 4, "metrics": {"num_splits": 2}}) == {"num_splits": 2.0}
    assert recorded_metrics({"n_regs": 96}) == {}
    with pytest.raises(ValueError):  # a broken record is not silently dropped
        recorded_metrics({"metrics": {"heads_per_program": "x"}})
