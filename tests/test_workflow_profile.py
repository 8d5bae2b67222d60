"""PROFILE: counters per kernel when readable, timing estimates otherwise, the devlog block."""

from __future__ import annotations

from pathlib import Path

import pytest
from workflow_fixtures import make_project, toy, toy_configs

from kbopt.bench.backend import FakeBackend
from kbopt.contracts.profile import Profile
from kbopt.devlog import Devlog
from kbopt.errors import KbError
from kbopt.store import Store
from kbopt.vocab import Bottleneck
from kbopt.workflow.profiler import profile_version, update_devlog

COUNTERS = """
FAKE_COUNTERS = [
    {"name": "_tiled_kernel(float*, int)", "duration_us": 90.0, "dram_throughput_pct": 78.0,
     "sm_throughput_pct": 30.0, "achieved_occupancy_pct": 12.0, "registers_per_thread": 222.0,
     "grid_size": 264.0, "local_memory_bytes": 0.0},
    {"name": "_combine_kernel", "duration_us": 10.0, "dram_throughput_pct": 40.0,
     "sm_throughput_pct": 10.0, "achieved_occupancy_pct": 70.0, "registers_per_thread": 32.0,
     "grid_size": 4096.0},
]
"""


def test_counters_give_one_stage_per_kernel_and_a_total(tmp_path: Path) -> None:
    make_project(tmp_path, [])
    v2 = tmp_path / "kernels" / "toy" / "toy_v2.py"
    v2.write_text(v2.read_text() + COUNTERS)
    run = profile_version(
        FakeBackend(tmp_path),
        toy(tmp_path),
        "toy_v2",
        toy_configs(tmp_path)[0],
        store=Store(tmp_path),
    )
    p = run.profile
    assert run.from_counters and not run.counters_note.startswith("hardware counters unavailable")
    assert [s.name for s in p.stages] == ["_tiled_kernel", "_combine_kernel", "total"]
    assert p.stages[0].bottleneck == "Memory" and p.stages[1].bottleneck == "Latency"
    assert p.bottleneck is Bottleneck.MEMORY  # duration-weighted DRAM% = 74.2
    assert p.metrics["dram_throughput_pct"] == pytest.approx(74.2)
    assert p.metrics["registers_per_thread"] == 222  # the max over the kernels
    assert p.metrics["ctas_per_sm"] == pytest.approx(264 / 132)  # from the longest kernel
    assert p.metrics["duration_us"] == 100.0  # the timed median, at b=16 after OOM backoff
    assert len(p.opportunities) <= 3
    assert Profile.parse(p.render()) == p  # the contract round-trips


def test_without_counters_the_profile_says_so(tmp_path: Path) -> None:
    make_project(tmp_path, [])
    backend = FakeBackend(tmp_path)
    run = profile_version(
        backend, toy(tmp_path), "toy_v1", toy_configs(tmp_path)[0], store=Store(tmp_path)
    )
    assert not run.from_counters
    assert "timing estimates" in run.profile.notes["Counters"]
    assert "fake backend: stand-in figures, not measured" in run.profile.root_cause
    assert [s.name for s in run.profile.stages] == ["total"]
    with pytest.raises(KbError, match="counters unavailable"):
        profile_version(
            backend,
            toy(tmp_path),
            "toy_v1",
            toy_configs(tmp_path)[0],
            counters="require",
            store=Store(tmp_path),
        )
    off = profile_version(
        backend,
        toy(tmp_path),
        "toy_v1",
        toy_configs(tmp_path)[0],
        counters="off",
        store=Store(tmp_path),
        recommend_top=False,
    )
    assert "--counters off" in off.counters_note and not off.profile.opportunities
    path = update_devlog(tmp_path, run)
    devlog = Devlog.load(path)
    assert "Notes a person wrote." in devlog.render()
    assert [p.version for p in devlog.performance_profiles()] == ["toy_v1"]


def test_cycle_counters_baseline_reads_them_once(tmp_path: Path) -> None:
    from workflow_fixtures import FASTER_STEP

    from kbopt.workflow import cycle
    from kbopt.workflow.designers import ScriptedDesigner

    plan = make_project(tmp_path, [FASTER_STEP])
    for name in ("toy_v1", "toy_v2"):
        path = tmp_path / "kernels" / "toy" / f"{name}.py"
        path.write_text(path.read_text() + COUNTERS)
    r = cycle.start(
        tmp_path,
        kernel="toy",
        target="pct_of_floor>=90",
        start_version="toy_v1",
        backend=FakeBackend(tmp_path),
        designer=ScriptedDesigner.from_file(plan),
        designer_spec="scripted",
        configs=toy_configs(tmp_path),
        store=Store(tmp_path),
        run_id="c1",
        counters="baseline",
    ).run()
    kept = Profile.parse(r.attempts[0].profile)
    assert kept.version == "toy_v2" and "baseline profile only" in kept.notes["Counters"]
    assert "_tiled_kernel" in r.baseline_profile  # the baseline was profiled with counters
    assert r.attempts[0].profile and "_tiled_kernel" not in r.attempts[0].profile
    with pytest.raises(KbError, match="--counters"):
        cycle.start(
            tmp_path,
            kernel="toy",
            target="pct_of_floor>=90",
            start_version="toy_v1",
            backend=FakeBackend(tmp_path),
            designer=ScriptedDesigner.from_file(plan),
            designer_spec="scripted",
            configs=toy_configs(tmp_path),
            store=Store(tmp_path),
            run_id="c2",
            counters="sometimes",
        )


def test_cli_profile_takes_several_configurations(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import json

    from kbopt.cli import main

    make_project(tmp_path, [])
    args = ["--root", str(tmp_path), "profile", "toy", "toy_v2", "--backend", "fake"]
    assert main([*args, "--config", "decode", "--config", "b=8,s=16,t=1024", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)
    assert [r["measurement"]["config"]["dims"]["s"] for r in runs] == [1, 16]
    assert runs[1]["measurement"]["config"]["dims"]["b"] == 8
    # the dims' catalog metrics are written into the profile, so triggers read them
    assert "| kv_len | 1024 |" in runs[1]["profile"]
    assert runs[1]["profile"].startswith("## Profile: toy toy_v2 | b=8, s=16, t=1024")
    # stand-in figures of the fake backend never reach the devlog
    assert all(r["devlog"] is None for r in runs)
    devlog_path = tmp_path / "docs" / "kernels" / "toy.md"
    assert not devlog_path.exists() or not Devlog.load(devlog_path).performance_profiles()
    # one configuration gives the same shape: a list of one run
    assert main([*args, "--config", "decode", "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)
    assert run["measurement"]["config"]["dims"]["s"] == 1
    assert main([*args, "--config", "32x1"]) == 2  # a clean error, no traceback
    assert "gives 1 value(s); toy has 3 dims (b, s, t)" in capsys.readouterr().err
    assert main(["--root", str(tmp_path), "profile", "nope", "v1", "--backend", "fake"]) == 2
    assert "no kernel 'nope'" in capsys.readouterr().err


def test_the_top_3_a_profile_prints_is_what_recommend_gives_for_it(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --language, `kbopt profile` ranked shared entries only while `kbopt
    recommend` ranks the profiled version's language too: the same profile got two Top 3s."""
    import json
    import re

    from kbopt.cli import main

    repo = Path(__file__).resolve().parent.parent
    args = ["--root", str(repo), "profile", "mla_decode", "triton_v2", "--backend", "fake"]
    assert main([*args, "--no-devlog", "--json"]) == 0
    (run,) = json.loads(capsys.readouterr().out)
    printed = re.findall(r"\]\(docs/knowledge/[\w/-]+/([\w-]+)\.md\)", run["profile"])
    profile = Profile.parse(run["profile"])
    from kbopt.strategy import recommend

    ranked = recommend(profile, language="triton", store=Store(repo), limit=3)
    assert printed == [o.id for o in ranked.opportunities]
    assert any(name.startswith("triton-") for name in printed)  # the version's own language
