"""`kbopt ablate` on the fake backend: three arms at an equal trial budget, no files left
in the kernel's folder or the catalog, fake figures written only where --out says."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any, ClassVar

import pytest

from kbopt.bench.backend import FakeBackend, Measurement
from kbopt.bench.trials import TrialConfig
from kbopt.cli import main
from kbopt.kernel import KernelSpec, clear_cache, load_spec
from kbopt.store import Store
from kbopt.workflow.ablation import grid_points, run_ablation

REPO = Path(__file__).resolve().parent.parent
FIELDS = {"kernel", "arm", "trials", "best_pct_of_floor", "trials_to_within_5pct", "device"}


def _project(tmp_path: Path, *kernels: str) -> Path:
    shutil.copytree(REPO / "docs" / "knowledge", tmp_path / "docs" / "knowledge")
    (tmp_path / "kernels").mkdir()
    shutil.copy(REPO / "kernels" / "__init__.py", tmp_path / "kernels" / "__init__.py")
    for k in kernels:
        shutil.copytree(
            REPO / "kernels" / k,
            tmp_path / "kernels" / k,
            ignore=shutil.ignore_patterns("results", "__pycache__"),
        )
    clear_cache()
    return tmp_path


def _tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for sub in ("kernels", "docs/knowledge")
        for p in sorted((root / sub).rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


@pytest.mark.parametrize(("kernel", "start"), [("mla_decode", "triton_v2"), ("add_rmsnorm", None)])
def test_three_arms_on_the_fake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], kernel: str, start: str | None
) -> None:
    root = _project(tmp_path, kernel)
    before = _tree(root)
    out = tmp_path / "fake-ablation.json"
    argv = ["--root", str(root), "ablate", kernel, "--trials", "8", "--backend", "fake"]
    argv += ["--from", start] if start else []
    assert main([*argv, "--seed", "3"]) == 0
    err = capsys.readouterr().err
    assert "[ablate] grid" in err and "nothing written" in err
    assert not (root / "results").exists()  # fake figures never go to results/ablation
    assert main([*argv, "--seed", "3", "--out", str(out), "--json"]) == 0
    doc = json.loads(out.read_text())
    assert doc["fake"] is True and doc["device"] == "fake-gpu"
    assert len(doc["catalog_digest"]) == 16  # which catalog chose, checkable anywhere
    assert [r["arm"] for r in doc["rows"]] == ["catalog", "random", "grid"]
    for row in doc["rows"]:
        assert set(row) >= FIELDS and row["kernel"] == kernel
        assert 1 <= row["trials"] <= 8 == doc["trials_budget"]
        assert row["trials"] == len(row["trajectory"])
        assert row["command"].startswith("kbopt ") and row["date"] and row["versions"]
        if row["trials"] < 8:
            assert row["stopped"]
    grid = doc["rows"][2]["trajectory"]
    assert len({json.dumps(t["values"], sort_keys=True) for t in grid}) == len(grid)
    for row in doc["rows"][:2]:  # every catalog / random trial names the move it made
        assert all(t["move"] for t in row["trajectory"][1:])
    best = doc["best_us_any_arm"]
    reached = [r for r in doc["rows"] if r["trials_to_within_5pct"] is not None]
    assert reached and all(
        min(
            t["duration_us"]
            for t in r["trajectory"][: r["trials_to_within_5pct"]]
            if t["status"] == "ok"
        )
        <= best * 1.05
        for r in reached
    )
    assert _tree(root) == before  # no version files, no catalog changes


class FailingBackend(FakeBackend):
    """Some configurations do not compile: they must count as trials, with the error."""

    def measure(
        self,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        params: Any = None,
    ) -> Measurement:
        if params and params.get("num_warps") == 16:
            raise RuntimeError("triton.CompilationError: out of resources (fake)")
        return super().measure(spec, version, config, params)


def test_invalid_configurations_are_trials_and_the_budget_stops_every_arm(tmp_path: Path) -> None:
    root = _project(tmp_path, "mla_decode")
    spec = load_spec("mla_decode", root)
    cfg = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})
    doc = run_ablation(
        spec=spec,
        backend=FailingBackend(root),
        store=Store(root),
        start="triton_v2",
        config=cfg,
        arms=["grid"],
        trials=40,
        seed=1,
    )
    traj = doc["rows"][0]["trajectory"]
    failed = [t for t in traj if t["values"]["num_warps"] == 16]
    assert failed and all(
        t["status"] == "error" and "out of resources" in t["note"] for t in failed
    )
    assert doc["rows"][0]["failed_trials"] == len(failed) and doc["rows"][0]["trials"] == 40
    doc = run_ablation(
        spec=spec,
        backend=FakeBackend(root),
        store=Store(root),
        start="triton_v2",
        config=cfg,
        arms=["catalog", "grid"],
        trials=40,
        budget_s=1e-9,
    )
    assert all(r["trials"] == 1 and "budget" in r["stopped"] for r in doc["rows"])


def test_grid_points_are_distinct_and_exhaustive_when_the_grid_fits() -> None:
    import random

    from kbopt.kernel import Knob

    knobs = [Knob("a", "int", (1, 2, 3), "warps"), Knob("b", "bool", (False, True), "tma")]
    points = grid_points(knobs, 50, random.Random(0), {"a": 1, "b": False})
    assert len(points) == 5  # 6 points, the start left out
    assert {(p["a"], p["b"]) for p in points} == {(a, b) for a in (1, 2, 3) for b in (0, 1)} - {
        (1, False)
    }


def test_a_scaffolded_kernel_and_bad_arguments(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    assert main(["--root", str(root), "kernel", "new", "scale2x", "--dims", "n"]) == 0
    clear_cache()
    out = tmp_path / "a.json"
    argv = ["--root", str(root), "ablate", "scale2x", "--backend", "fake"]
    assert main([*argv, "--trials", "6", "--out", str(out)]) == 0
    doc = json.loads(out.read_text())
    assert doc["start_version"] == "triton_v1" and len(doc["rows"]) == 3
    capsys.readouterr()
    assert main([*argv, "--arms", "catalog,bogus"]) == 2
    assert "unknown arm" in capsys.readouterr().err
    assert main([*argv, "--trials", "1"]) == 2
    assert main([*argv, "--from", "triton_v9"]) == 2


def test_conflicting_or_unwritable_arguments_are_refused_before_any_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, "dyt")
    assert main(["--root", str(root), "kernel", "new", "scale2x", "--dims", "n"]) == 0
    clear_cache()
    capsys.readouterr()
    argv = ["--root", str(root), "ablate", "scale2x", "--backend", "fake", "--trials", "3"]
    refused = [
        (["--out", str(tmp_path)], f"--out {tmp_path}: is a folder; give the name of the file"),
        (["--arms", "catalog,catalog"], "--arms: catalog is given twice"),
        (
            ["--spec", str(root / "kernels" / "dyt" / "spec.py")],
            f"KERNEL 'scale2x' and --spec {root / 'kernels' / 'dyt' / 'spec.py'} (kernel "
            "'dyt') name different kernels",
        ),
    ]
    for extra, message in refused:
        assert main([*argv, *extra]) == 2
        err = capsys.readouterr().err
        assert message in err and "[ablate]" not in err  # no trial ran
    # the real backend on a machine without a GPU: said at once, before compile workers
    # start, and the kernel is not blamed for it
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert main([*argv[:4], "--trials", "3"]) == 2
    assert capsys.readouterr().err == (
        "kbopt: error: the real backend needs a CUDA GPU; use --backend fake on a CPU\n"
    )


def test_results_that_cannot_be_written_go_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path, "dyt")
    out = tmp_path / "a.json"

    def full(path: Path, doc: object) -> Path:
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr("kbopt.workflow.ablation.write_results", full)
    argv = ["--root", str(root), "ablate", "dyt", "--backend", "fake", "--trials", "3"]
    assert main([*argv, "--out", str(out)]) == 2
    stdout, err = capsys.readouterr()
    assert [r["arm"] for r in json.loads(stdout)["rows"]] == ["catalog", "random", "grid"]
    assert err.endswith(
        f"kbopt: error: {out}: cannot write (No space left on device); the results are on "
        "stdout instead\n"
    )
    assert main([*argv, "--out", str(out), "--json"]) == 2
    doc = json.loads(capsys.readouterr().out)  # one JSON document: the results and the error
    assert doc["rows"] and doc["written"] is None and "No space left" in doc["error"][0]


def test_site_page_shows_real_results_and_leaves_out_fake_ones(tmp_path: Path) -> None:
    from kbopt.site.ablation import render_ablation_fragment

    root = _project(tmp_path, "mla_decode")
    spec = load_spec("mla_decode", root)
    cfg = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})
    doc = run_ablation(
        spec=spec,
        backend=FakeBackend(root),
        store=Store(root),
        start="triton_v2",
        config=cfg,
        arms=["catalog", "random", "grid"],
        trials=6,
    )
    folder = root / "results" / "ablation"
    folder.mkdir(parents=True)
    (folder / "fake.json").write_text(json.dumps(doc))
    assert "No ablation results" in render_ablation_fragment(root)
    # the same document as a real device would label it
    real = {**doc, "fake": False, "device": "NVIDIA H200", "command": "kbopt ablate mla_decode"}
    (folder / "real.json").write_text(json.dumps(real))
    page = render_ablation_fragment(root)
    assert "## mla_decode (decode) from triton_v2, NVIDIA H200" in page
    assert page.count("<polyline") == 3 and "| catalog | " in page
    assert "results/ablation/real.json" in page and "fake.json" not in page


class AdjustedBackend(FakeBackend):
    """The fake's measurement, then `adjust(measurement, params)` of a subclass."""

    def measure(
        self,
        spec: KernelSpec,
        version: str,
        config: TrialConfig,
        params: Any = None,
    ) -> Measurement:
        m = super().measure(spec, version, config, params)
        self.adjust(m, params or {})
        return m

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        raise NotImplementedError


class WarpsHurtBackend(AdjustedBackend):
    """Doubling the warps to 16 is always three times slower: rolled back every time."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        if params.get("num_warps") == 16:
            m.duration_us *= 3


def _walks_on_mla_decode(tmp_path: Path, backend: type[FakeBackend], seed: int) -> dict:
    """The catalog and random arms from triton_v2 at decode, 30 trials, on `backend`."""
    root = _project(tmp_path, "mla_decode")
    cfg = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})
    return run_ablation(
        spec=load_spec("mla_decode", root),
        backend=backend(root),
        store=Store(root),
        start="triton_v2",
        config=cfg,
        arms=["catalog", "random"],
        trials=30,
        seed=seed,
    )


def test_a_rolled_back_change_is_not_retried_after_another_is_kept(tmp_path: Path) -> None:
    """Until no move is left from the best values; once a walk goes back to values it kept
    before, a change rolled back elsewhere may be measured again from there (a different
    point: no knob values are measured twice)."""
    doc = _walks_on_mla_decode(tmp_path, WarpsHurtBackend, seed=2)
    for row in doc["rows"]:
        trials = row["trajectory"][1:]
        back = next((i for i, t in enumerate(trials) if t["move"].startswith("back at")), None)
        moves = [t["move"].split(": ", 1)[1] for t in trials[:back]]
        to_16 = [m for m in moves if "num_warps 8 -> 16" in m]
        assert len(to_16) <= 1, (row["arm"], moves)
        kept = [t for t in trials if t["kept"]]
        assert all(t["values"]["num_warps"] != 16 for t in kept)
        seen = [json.dumps(t["values"], sort_keys=True) for t in row["trajectory"]]
        assert len(seen) == len(set(seen)), row["arm"]


# A ranking of two entries with moves on mla_decode's knobs: a warning about too many KV
# splits (way out: splits -> 1), then software pipelining (num_stages +1, when shared
# memory leaves room).
SPLITS_THEN_STAGES = [
    {"id": "too-many-kv-splits", "kind": "anti-pattern", "score": 0.4},
    {"id": "triton-num-stages-software-pipelining", "kind": "optimization", "score": 0.2},
]


def test_a_fired_anti_pattern_offers_its_way_out() -> None:
    from kbopt.workflow.catalog_designer import candidates

    spec = load_spec("mla_decode", REPO)
    store = Store(REPO)
    ranked = SPLITS_THEN_STAGES
    values = {**spec.knob_values("triton_v3"), "splits": 8}
    found = candidates(
        store, spec, "triton_v3", ranked, {"ctas_per_sm": 15.5, "num_splits": 8}, values=values
    )
    assert found[0].entry == "too-many-kv-splits"
    assert found[0].planned.values == {"splits": 1}
    # measured and rolled back once: not proposed again
    again = candidates(
        store,
        spec,
        "triton_v3",
        ranked,
        {"ctas_per_sm": 15.5, "num_splits": 8},
        values=values,
        rejected={found[0].planned.signature},
    )
    assert all(c.entry != "too-many-kv-splits" for c in again)


def test_moves_with_failing_preconditions_come_only_after_the_others() -> None:
    from kbopt.workflow.catalog_designer import candidates, search_candidates

    spec = load_spec("mla_decode", REPO)
    store = Store(REPO)
    ranked = SPLITS_THEN_STAGES
    values = {**spec.knob_values("triton_v3"), "splits": 1}
    # one split and a full shared memory: no move's preconditions hold
    metrics = {"ctas_per_sm": 15.5, "num_splits": 1, "shared_mem_per_block_kb": 300.0}
    assert candidates(store, spec, "triton_v3", ranked, metrics, values=values) == []
    found = search_candidates(store, spec, "triton_v3", ranked, metrics, values=values)
    assert [c.entry for c in found] == ["triton-num-stages-software-pipelining"]
    assert found[0].planned.relaxed and "shared_mem_per_block_kb" in found[0].planned.relaxed[0]
    # eight splits: the anti-pattern's way out holds, and only it is offered
    eight = {**values, "splits": 8}
    found = search_candidates(
        store, spec, "triton_v3", ranked, {**metrics, "num_splits": 8}, values=eight
    )
    assert [c.entry for c in found] == ["too-many-kv-splits"]
    assert not found[0].planned.relaxed


class FlatBackend(AdjustedBackend):
    """Every configuration measures the same: nothing is ever rolled back."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        m.duration_us = 50.0


def test_an_arm_never_measures_the_same_knob_values_twice(tmp_path: Path) -> None:
    doc = _walks_on_mla_decode(tmp_path, FlatBackend, seed=1)
    for row in doc["rows"]:
        seen = [frozenset(t["values"].items()) for t in row["trajectory"]]
        assert len(seen) == len(set(seen)), row["arm"]
        assert len(seen) > 3, row["arm"]


def test_a_trial_budget_beyond_every_arm_ends_when_the_arms_stop(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """--trials 10**12: every arm stops (grid measured, no move left) long before; the
    run ends there instead of counting up to the budget with nothing to measure."""
    root = _project(tmp_path)
    assert main(["--root", str(root), "kernel", "new", "scale2x", "--dims", "n"]) == 0
    clear_cache()
    capsys.readouterr()
    argv = ["--root", str(root), "ablate", "scale2x", "--backend", "fake", "--json"]
    assert main([*argv, "--trials", str(10**12), "--timeout", "30"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert all(row["stopped"] for row in doc["rows"]), doc["rows"]


def test_help_renders_for_the_command_and_the_top_level(capsys: pytest.CaptureFixture[str]) -> None:
    # argparse %-formats help strings: a bare % in a description once broke `kbopt --help`
    for argv in (["--help"], ["ablate", "--help"]):
        with pytest.raises(SystemExit) as stop:
            main(argv)
        assert stop.value.code == 0
    assert "percentage of the roofline floor" in capsys.readouterr().out


def _two_arms(catalog: int | None, grid: int | None, grid_trials: int = 24) -> dict[str, Any]:
    """A 24-trial run's catalog and grid rows: the trials each needed to come within 5%."""
    return {
        "trials_budget": 24,
        "rows": [
            {"arm": "catalog", "trials_to_within_5pct": catalog, "trials": 6},
            {"arm": "grid", "trials_to_within_5pct": grid, "trials": grid_trials},
        ],
    }


def test_the_target_verdict_is_computed_from_the_rows() -> None:
    from kbopt.site.ablation import verdict

    assert "**met** against the budget of 24" in verdict(_two_arms(2, None, 17))
    assert "grid never came within 5% in its 17 trials" in verdict(_two_arms(2, None, 17))
    assert "**not met** against the budget" in verdict(_two_arms(9, 12))
    assert "not met against the 12 trials the grid needed" in verdict(_two_arms(6, 12))
    assert "met against the 18 trials the grid needed" in verdict(_two_arms(6, 18))
    # a grid that needed under six trials: a third of it is under the two any arm needs
    assert "the grid needed only 2" in verdict(_two_arms(2, 2))
    assert "the grid needed only 5" in verdict(_two_arms(2, 5))
    assert "against the 5 trials" not in verdict(_two_arms(2, 5))
    assert "never came within 5%" in verdict(_two_arms(None, 15))
    assert "not judged" in verdict({"rows": [{"arm": "grid"}]})
    # a start already within 5% for every arm: nothing to find, nothing to judge
    assert "already within 5%" in verdict(_two_arms(1, 1))
    # a budget spent before the grid got past its start: nothing was compared
    assert "before the grid measured anything" in verdict(_two_arms(1, 1, 1))


def test_the_summary_holds_the_catalog_against_the_grid_s_count() -> None:
    from kbopt.site.ablation import against_grid, short_commit

    assert against_grid(_two_arms(6, 18)) == "met"
    assert against_grid(_two_arms(7, 18)) == "not met"
    assert against_grid(_two_arms(2, 5)) == "unreachable"
    assert against_grid(_two_arms(2, None)) == "met (grid never)"
    assert against_grid(_two_arms(9, None)) == "grid never"  # within the budget, not a third of it
    assert against_grid(_two_arms(None, 12)) == "not met"
    assert against_grid(_two_arms(1, 1)) == "-"  # not judged
    assert short_commit("be424573819f1329d0587c6865f166f1afc291ae") == "be42457"
    assert short_commit("d665b77+bytes-in-flight-draft") == "d665b77+bytes-in-flight-draft"
    assert short_commit(None) == "-"


def test_the_grid_s_expected_trials_come_from_its_sample_s_share_of_good_points() -> None:
    from kbopt.site.ablation import verdict
    from kbopt.workflow.ablation import TrialRow, expected_grid_trials

    def rows(*times: float | None) -> list[TrialRow]:
        return [
            TrialRow(i + 1, {}, "ok" if t else "error", duration_us=t) for i, t in enumerate(times)
        ]

    # start slow; 2 of 8 sampled points within 5% of 100 us: first good one at 9 / 3 = 3
    # points past the start on average, so 4 trials
    assert expected_grid_trials(rows(200, 101, 150, 150, 104, 150, None, 150, 150), 100) == 4.0
    assert expected_grid_trials(rows(200, 150, 150), 100) is None  # none came within 5%
    assert expected_grid_trials(rows(102, 150), 100) == 1.0  # the start already was
    assert expected_grid_trials([], 100) is None
    doc = {
        "trials_budget": 24,
        "rows": [
            {"arm": "catalog", "trials_to_within_5pct": 6, "trials": 24},
            {
                "arm": "grid",
                "trials_to_within_5pct": 2,
                "trials": 24,
                "expected_trials_to_within_5pct": 4.4,
            },
        ],
    }
    assert "a grid sample needs 4.4 on average" in verdict(doc)


def test_relaxed_moves_of_one_entry_come_nearest_miss_first(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Geglu at Gemma-2 9B (a 14336-wide row, 91 registers): neither of size-warps-to-the-
    row's moves holds; doubling the warps misses its preconditions by less than halving
    them, so it is tried first (the held-out ablation tried the halving first and lost a
    trial).  A row just over 8192 reverses the order.  That is the order where the moves'
    measured record says nothing (here: an empty record); the record's own order is tested
    in test_move_record.py."""
    from kbopt.workflow.catalog_designer import search_candidates
    from kbopt.workflow.move_record import MoveRecord

    monkeypatch.setattr("kbopt.workflow.catalog_designer.record_for", lambda root: MoveRecord())

    spec = load_spec("add_rmsnorm", REPO)
    store = Store(REPO)
    ranked = [{"id": "size-warps-to-the-row", "kind": "optimization", "score": 0.5}]
    values = {**spec.knob_values("triton_v1"), "num_warps": 16}

    def first(row_len: float, regs: float) -> Any:
        metrics = {"row_len": row_len, "registers_per_thread": regs}
        found = search_candidates(store, spec, "triton_v1", ranked, metrics, values=values)
        assert [c.entry for c in found] == ["size-warps-to-the-row"] * 2
        assert all(c.planned.relaxed for c in found)
        return found[0].planned.values["num_warps"]

    assert first(14336, 91) == 32
    assert first(9000, 70) == 8


def test_a_knob_set_to_what_it_launched_with_is_the_same_measurement() -> None:
    """Liger's cross-entropy left block_size at None and launched it as 32768; a walk that
    doubled it and then halved it back to 32768 measured its start a second time."""
    from kbopt.moves import launch_equivalents

    start = {"block_size": None, "num_warps": None}
    same = launch_equivalents(start, {"block_size": 32768, "num_warps": 32})
    assert frozenset({"block_size": 32768, "num_warps": None}.items()) in same
    assert frozenset({"block_size": 32768, "num_warps": 32}.items()) in same
    assert frozenset(start.items()) in same and len(same) == 4
    # a value it did not launch with is another measurement
    assert frozenset({"block_size": 65536, "num_warps": None}.items()) not in same
    # an explicit knob stays as written; what the launch did not record stays None
    assert launch_equivalents({"block_size": 1024, "num_warps": None}, {"block_size": 1024}) == {
        frozenset({"block_size": 1024, "num_warps": None}.items())
    }


class BlockLaunchBackend(AdjustedBackend):
    """Records that a `block` left at None launched as 256, as the real backend would."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        m.launched = {"block": 256} if params.get("block", 256) is None else {}


def test_a_walk_does_not_go_back_to_its_start_spelled_with_the_launched_value(
    tmp_path: Path,
) -> None:
    """From block=None (launched as 256), doubled to 512 and kept: halving back to 256 is the
    start again, so the only move left is to double once more."""
    from kbopt.model import Move
    from kbopt.workflow.ablation import Lab, RandomWalk, _row

    root = _project(tmp_path, "add_rmsnorm")
    spec = load_spec("add_rmsnorm", root)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    lab = Lab(BlockLaunchBackend(root), spec, "triton_v1", cfg, spec.knob_values("triton_v1"))
    values = {**spec.knob_values("triton_v1"), "block": None}
    start_m, err = lab.measure(values)
    assert start_m is not None and start_m.launched == {"block": 256}
    pool = [("wider", Move(change={"tile_n": "x2"})), ("narrower", Move(change={"tile_n": "/2"}))]
    for seed in range(6):  # whichever move the random order picks next
        walk = RandomWalk(
            lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed
        )
        walk.values = {**values, "block": 512}  # the doubling, kept
        walk.visited.add(frozenset(walk.values.items()))
        choice = walk.choose()
        assert not isinstance(choice, str)
        assert choice[1].values == {"block": 1024}, seed


def test_once_the_ranking_has_no_move_left_the_other_entries_follow() -> None:
    """The held-out softmax and cross-entropy ablations of 2026-12-03 stopped the catalog
    arm after four trials ("no ranked entry has an applicable move left") while the random
    arm, drawing on every entry with moves, went on and won.  The ranking now comes first
    and the entries it left out follow it, so both arms draw on the same moves."""
    from kbopt.workflow.ablation import pool_of_moves
    from kbopt.workflow.catalog_designer import search_candidates, with_unranked

    spec = load_spec("add_rmsnorm", REPO)
    store = Store(REPO)
    values = spec.knob_values("triton_v1")
    metrics = {"row_len": 4096.0, "registers_per_thread": 40.0, "ctas_per_sm": 8.0}
    assert search_candidates(store, spec, "triton_v1", [], metrics, values=values) == []
    rows = with_unranked([], store, "triton", "memory")
    assert {r["id"] for r in rows} == {name for name, _ in pool_of_moves(store, "triton")}
    assert all(r["unranked"] for r in rows)
    scores = [r["score"] for r in rows]
    assert scores == sorted(scores, reverse=True)
    found = search_candidates(store, spec, "triton_v1", rows, metrics, values=values)
    assert found and all(c.label == "unranked" for c in found)
    # a ranked entry with a move still comes before every unranked one
    ranked = [{"id": "size-warps-to-the-row", "kind": "optimization", "score": 0.5, "rank": 1}]
    rows = with_unranked(ranked, store, "triton", "memory")
    assert [r["id"] for r in rows].count("size-warps-to-the-row") == 1
    found = search_candidates(store, spec, "triton_v1", rows, metrics, values=values)
    assert found[0].entry == "size-warps-to-the-row" and found[0].label == "#1"
    # relaxed ranked moves come before unranked ones whose preconditions hold
    tight = {**metrics, "row_len": 14336.0, "registers_per_thread": 91.0}
    found = search_candidates(store, spec, "triton_v1", rows, tight, values=values)
    assert found[0].entry == "size-warps-to-the-row" and found[0].planned.relaxed


class EachDoublingCostsFourPercent(BlockLaunchBackend):
    """`block` None launches as 256; every doubling past it is 4% slower than the one before."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        super().adjust(m, params)
        block = params.get("block") or 256
        m.duration_us = 100.0 * 1.04 ** (block.bit_length() - (256).bit_length())


def test_small_losses_in_a_row_cannot_drift_past_the_tolerance(tmp_path: Path) -> None:
    """512 is 4% slower than the start: kept (a neutral move may enable the next). 1024 is 4%
    slower again, 8.2% slower than the best the arm measured: rolled back, though it is within
    5% of the values it replaced."""
    from kbopt.model import Move
    from kbopt.workflow.ablation import Lab, RandomWalk, _row

    root = _project(tmp_path, "add_rmsnorm")
    spec = load_spec("add_rmsnorm", root)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    backend = EachDoublingCostsFourPercent(root)
    lab = Lab(backend, spec, "triton_v1", cfg, spec.knob_values("triton_v1"))
    values = {**spec.knob_values("triton_v1"), "block": None}
    start_m, err = lab.measure(values)
    assert start_m is not None
    pool = [("wider", Move(change={"tile_n": "x2"}))]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=0)
    assert walk.step(2) and walk.step(3)
    second, third = walk.result.trials[1:]
    assert second.values["block"] == 512 and second.kept
    assert third.values["block"] == 1024 and not third.kept
    assert walk.values["block"] == 512


def test_the_start_is_measured_twice_and_a_margin_inside_that_noise_is_not_judged(
    tmp_path: Path,
) -> None:
    from kbopt.site.ablation import judge

    doc = _walks_on_mla_decode(tmp_path, WarpsHurtBackend, seed=0)
    assert doc["start_us"] and doc["start_repeat_us"] == doc["start_us"]
    assert doc["noise_pct"] == 0.0  # the fake is exact

    def verdict_of(noise: float | None) -> tuple[str, str]:
        return judge(
            {
                "trials_budget": 24,
                "best_us_any_arm": 7.6,
                "noise_pct": noise,
                "rows": [
                    {"arm": "catalog", "trials_to_within_5pct": None, "trials": 3, "best_us": 8.1},
                    {"arm": "grid", "trials_to_within_5pct": 2, "trials": 7, "best_us": 7.6},
                ],
            }
        )

    # 8.1 us against 7.6 us is 6.6% slower: outside 5%, inside the 81% between two
    # measurements of the same launch
    status, sentence = verdict_of(81.0)
    assert status == "not judged" and "less than the 81.0%" in sentence
    assert verdict_of(2.0)[0] == "not met"
    assert verdict_of(None)[0] == "not met"  # a run from before the start was repeated


class WritesItsFirstInputBackend(AdjustedBackend):
    """Every version writes into its first input, as an in-place kernel does."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        m.inputs_written = (0,)


def test_the_record_says_when_the_start_was_timed_on_restored_inputs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kbopt.cli.ablate_cmds import print_summary

    doc = _walks_on_mla_decode(tmp_path, WritesItsFirstInputBackend, seed=0)
    assert doc["start_inputs_written"] == [0]
    print_summary(doc)
    assert (
        "writes its input(s) 0; each call was timed on restored copies" in capsys.readouterr().out
    )
    assert (
        _walks_on_mla_decode(tmp_path / "plain", WarpsHurtBackend, seed=0)["start_inputs_written"]
        == []
    )


class PlateauBackend(AdjustedBackend):
    """add_rmsnorm's `block` and `num_warps` (256 and 4 in triton_v1): a wider block is
    faster, fewer warps next to it are about as fast (kept, within the tolerance), and from
    there every move is slower or measured (twice the warps is where the walk came from);
    the way on is twice the warps of the fastest values."""

    TIMES: ClassVar[dict[tuple[int, int], float]] = {
        (256, 4): 100.0,
        (512, 4): 97.0,
        (512, 2): 99.0,
        (1024, 2): 150.0,
        (512, 1): 140.0,
        (512, 8): 80.0,
    }

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        key = (params.get("block", 256), params.get("num_warps", 4))
        m.duration_us = self.TIMES.get(key, 300.0)


def test_a_walk_stuck_on_a_plateau_goes_on_from_the_fastest_values(tmp_path: Path) -> None:
    from kbopt.model import Move
    from kbopt.workflow.ablation import Lab, RandomWalk, _row

    root = _project(tmp_path, "add_rmsnorm")
    spec = load_spec("add_rmsnorm", root)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    lab = Lab(PlateauBackend(root), spec, "triton_v1", cfg, spec.knob_values("triton_v1"))
    values = spec.knob_values("triton_v1")
    start_m, err = lab.measure(values)
    assert start_m is not None
    pool = [
        ("wider", Move(change={"tile_n": "x2"})),
        ("fewer warps", Move(change={"warps": "/2"})),
        ("more warps", Move(change={"warps": "x2"})),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=0)
    # Force the plateau: the wider block (best), then fewer warps (kept, 2% slower).
    for planned_values in ({"block": 512}, {"num_warps": 2}):
        new = {**walk.values, **planned_values}
        walk.visited.add(frozenset(new.items()))
        m, _ = lab.measure(new)
        assert m is not None
        walk.values, walk.current = new, m
        if m.duration_us < walk.best_us:
            walk.best_values, walk.best_m = dict(new), m
    n = 2
    while walk.step(n):
        n += 1
    measured = {(t.values["block"], t.values["num_warps"]): t for t in walk.result.trials[1:]}
    assert (512, 8) in measured, list(measured)
    assert "from the best so far" in measured[(512, 8)].move
    assert walk.best_us == 80.0


class SlowerPlateauBackend(AdjustedBackend):
    """add_rmsnorm's `block` and `num_warps` (256 and 4 in triton_v1): a wider block is 3%
    slower (kept, within the tolerance) and nothing from there is faster; half the warps of
    the starting block is the win."""

    TIMES: ClassVar[dict[tuple[int, int], float]] = {
        (256, 4): 100.0,
        (512, 4): 103.0,
        (1024, 4): 104.0,
        (512, 2): 120.0,
        (256, 2): 80.0,
    }

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        key = (params.get("block", 256), params.get("num_warps", 4))
        m.duration_us = self.TIMES.get(key, 300.0)


def _plateau_walk(tmp_path: Path, pool: list, seed: int) -> Any:
    from kbopt.workflow.ablation import RandomWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, SlowerPlateauBackend, warps=4)
    return RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)


def test_a_move_kept_below_the_best_sends_the_next_move_from_the_best(tmp_path: Path) -> None:
    """The wider block, 3% slower, is kept, but the next move starts from the starting
    values (the best), where half the warps wins; the wider block stays a kept state the
    walk may come back to."""
    from kbopt.model import Move

    pool = [("wider", Move(change={"tile_n": "x2"})), ("fewer warps", Move(change={"warps": "/2"}))]
    for seed in range(20):
        walk = _plateau_walk(tmp_path / str(seed), pool, seed)
        assert walk.step(2)
        if walk.result.trials[1].move.startswith("wider"):
            break
    else:
        pytest.fail("no seed tried the wider block first")
    second = walk.result.trials[1]
    assert second.kept and second.duration_us == 103.0
    assert walk.values == walk.best_values  # back at the start, the best so far
    assert (2, second.values) in [(n, v) for n, v, _ in walk.kept]
    assert walk.step(3)
    third = walk.result.trials[2]
    assert third.move.startswith("from the best so far, fewer warps")
    assert (third.values["block"], third.values["num_warps"]) == (256, 2)
    assert walk.best_us == 80.0


def test_a_move_kept_below_the_best_goes_on_from_there_when_the_best_has_no_move(
    tmp_path: Path,
) -> None:
    """With only the wider block to try, nothing is open from the best after it: the walk
    goes on from the slower values it kept."""
    from kbopt.model import Move

    walk = _plateau_walk(tmp_path, [("wider", Move(change={"tile_n": "x2"}))], seed=0)
    assert walk.step(2) and walk.step(3)
    second, third = walk.result.trials[1:]
    assert second.kept and second.values["block"] == 512
    assert third.values["block"] == 1024 and not third.move.startswith("from the best")


def _rmsnorm_lab(tmp_path: Path, backend: type, warps: int) -> tuple[Any, Any, dict, Any, str]:
    """add_rmsnorm's triton_v1 at its large trial on `backend`, measured from two stages
    and `warps` warps: (spec, lab, starting values, their measurement, its error)."""
    from kbopt.workflow.ablation import Lab

    root = _project(tmp_path, "add_rmsnorm")
    spec = load_spec("add_rmsnorm", root)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    lab = Lab(backend(root), spec, "triton_v1", cfg, spec.knob_values("triton_v1"))
    values = {**spec.knob_values("triton_v1"), "num_stages": 2, "num_warps": warps}
    start_m, err = lab.measure(values)
    assert start_m is not None
    return spec, lab, values, start_m, err


class FlatButSixteenWarps(AdjustedBackend):
    """Every configuration takes 100 us, except sixteen warps: 80 us."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        m.duration_us = 80.0 if params.get("num_warps") == 16 else 100.0


@pytest.mark.parametrize("seed", range(6))
def test_a_direction_that_found_nothing_waits_behind_the_other_moves(
    tmp_path: Path, seed: int
) -> None:
    """One more pipeline stage, kept (as fast) but not faster: the next move is not one
    more stage again while another move is open; once something is faster, every direction
    is open again."""
    from kbopt.model import Move
    from kbopt.workflow.ablation import RandomWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, FlatButSixteenWarps, warps=4)
    pool = [
        ("deeper", Move(change={"pipeline_stages": "+1"})),
        ("more warps", Move(change={"warps": "x2"})),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    assert walk.step(2)
    second = walk.result.trials[1]
    assert second.kept and second.duration_us == 100.0  # as fast: kept, found nothing
    raised = {k for k in second.values if second.values[k] != values[k]}
    assert walk.momentum.flat == {(k, 1) for k in raised}  # both moves raise their knob
    assert walk.step(3)
    assert second.move.split(":")[0] != walk.result.trials[2].move.split(":")[0]
    for n in range(4, 10):
        if walk.best_us == 80.0:
            break
        assert walk.step(n)
    assert walk.best_us == 80.0 and walk.values["num_warps"] == 16
    assert not walk.momentum.flat  # found faster: every direction open again


class FewerWarpsWinTwice(AdjustedBackend):
    """Half the warps is clearly faster twice (8 -> 4 -> 2), then much slower (1); nothing
    else changes the time."""

    TIMES: ClassVar[dict[int, float]] = {8: 100.0, 4: 95.0, 2: 80.0, 1: 120.0}

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        # triton_v1's file sets 4 warps: params name a knob only where it differs
        m.duration_us = self.TIMES.get(params.get("num_warps", 4), 100.0)


@pytest.mark.parametrize("fewer_when", [[], ["pct_of_floor > 1000"]], ids=["holds", "fails"])
@pytest.mark.parametrize("seed", range(6))
def test_a_clear_win_is_pushed_once_more_and_its_undoing_waits(
    tmp_path: Path, seed: int, fewer_when: list[str]
) -> None:
    """After half the warps won clearly, half again is the next move whatever the arm's
    order, even where the move's measured precondition fails (then it is otherwise tried
    only once no other move is left); once half again lost, twice the warps (undoing a
    win) waits behind the moves that were still open."""
    from kbopt.model import Move
    from kbopt.workflow.ablation import RandomWalk, _row
    from kbopt.workflow.search_momentum import directions

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, FewerWarpsWinTwice, warps=8)
    pool = [
        ("deeper", Move(change={"pipeline_stages": "+1"})),
        ("wider", Move(change={"tile_n": "x2"})),
        ("fewer warps", Move(change={"warps": "/2"}, when=fewer_when)),
        ("more warps", Move(change={"warps": "x2"})),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    for n in range(2, 30):  # until one warp (half of two, which won) has been measured
        assert walk.step(n)
        if walk.result.trials[-1].values["num_warps"] == 1:
            break
    rows = walk.result.trials[1:]
    labels = [r.move.split(":")[0].removeprefix("from the best so far, ") for r in rows]
    # The first clear win: 8 -> 4 warps (a seed may wander to 16 and back to 8 first).
    first = next(
        i for i, r in enumerate(rows) if labels[i] == "fewer warps" and r.values["num_warps"] == 4
    )
    assert labels[first + 1 :] == ["fewer warps", "fewer warps"]
    assert [r.values["num_warps"] for r in rows[first + 1 :]] == [2, 1]
    assert rows[-1].kept is False  # one warp: much slower, back to two
    assert walk.best_us == 80.0
    # Twice the warps undoes the wins: it waits behind every other open move that is not
    # itself a direction that found nothing (those go last of all).
    options = walk._options()
    order = [] if isinstance(options, str) else [label for label, _ in options]
    if "more warps" in order:
        stale = {label for label, planned in options if directions(planned) <= walk.momentum.flat}
        others = [o for o in order if o not in stale | {"more warps"}]
        assert all(order.index(o) < order.index("more warps") for o in others), order


@pytest.mark.parametrize("seed", range(4))
def test_a_push_passes_over_a_precondition_that_fails(tmp_path: Path, seed: int) -> None:
    """Half the warps, a move whose measured precondition fails, won clearly: the next
    move is half the warps again although moves whose preconditions hold are open."""
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.ablation import RandomWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, FewerWarpsWinTwice, warps=8)
    fewer = Move(change={"warps": "/2"}, when=["pct_of_floor > 1000"])
    pool = [
        ("deeper", Move(change={"pipeline_stages": "+1"})),
        ("shallower", Move(change={"pipeline_stages": "-1"})),
        ("wider", Move(change={"tile_n": "x2"})),
        ("narrower", Move(change={"tile_n": "/2"})),
        ("fewer warps", fewer),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    knobs = spec.knobs_for("triton_v1")
    planned = plan_move(fewer, knobs, values, {}, start_m.launched, relax=True)
    walk._open = [("fewer warps", planned)]  # as if the walk had drawn it
    assert walk.step(2) and walk.values["num_warps"] == 4  # 100 -> 95 us: a clear win
    assert walk.step(3)
    third = walk.result.trials[-1]
    assert third.move.startswith("fewer warps") and third.values["num_warps"] == 2
    assert "preconditions not met" in third.move


class WiderNeedsMoreWarps(AdjustedBackend):
    """Twice the block alone is slower (each thread does twice the work); twice the block
    with twice the warps is the fastest; nothing else changes the time."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        wider = params.get("block") == 512
        more = params.get("num_warps") == 8
        m.duration_us = 70.0 if wider and more else 120.0 if wider else 100.0


@pytest.mark.parametrize("seed", range(3))
def test_a_resize_that_lost_is_tried_once_more_with_the_warps_scaled_alike(
    tmp_path: Path, seed: int
) -> None:
    from kbopt.model import Move
    from kbopt.moves import PlannedMove, plan_move
    from kbopt.workflow.ablation import RandomWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, WiderNeedsMoreWarps, warps=4)
    wider = Move(change={"tile_n": "x2"})
    pool = [
        ("deeper", Move(change={"pipeline_stages": "+1"})),
        ("wider", wider),
        ("more rows", Move(change={"rows_per_program": "x2"})),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    planned = plan_move(wider, spec.knobs_for("triton_v1"), values, {}, start_m.launched)
    assert isinstance(planned, PlannedMove)
    walk._open = [("wider", planned)]  # as if the walk had drawn it
    assert walk.step(2) and walk.result.trials[-1].kept is False  # 120 us: back
    assert walk.step(3)
    third = walk.result.trials[-1]
    assert third.move.startswith("wider, warps alongside")
    assert (third.values["block"], third.values["num_warps"]) == (512, 8)
    assert third.kept and walk.best_us == 70.0
    # Once: a pair that lost is not paired again, and a move that was not a resize is not.
    assert walk.paired is None


def test_only_a_resize_in_one_direction_gets_the_warps_alongside() -> None:
    from kbopt.kernel import load_spec
    from kbopt.model import Move
    from kbopt.moves import PlannedMove, plan_move
    from kbopt.workflow.search_pairing import warps_alongside

    spec = load_spec("add_rmsnorm", REPO)
    knobs, values = spec.knobs_for("triton_v1"), spec.knob_values("triton_v1")

    def planned(change: dict[str, str]) -> PlannedMove:
        p = plan_move(Move(change=change), knobs, values, {})
        assert isinstance(p, PlannedMove)
        return p

    narrower = warps_alongside(planned({"tile_n": "/2"}), knobs, values, {})
    assert narrower is not None and narrower.values == {"block": 128, "num_warps": 2}
    assert warps_alongside(planned({"pipeline_stages": "+1"}), knobs, values, {}) is None
    assert warps_alongside(planned({"warps": "x2"}), knobs, values, {}) is None
    two_resizes = planned({"tile_n": "x2", "rows_per_program": "x2"})
    assert warps_alongside(two_resizes, knobs, values, {}) is not None  # both up
    mixed = planned({"tile_n": "x2", "vector_width": "/2"})
    assert warps_alongside(mixed, knobs, values, {}) is None  # not only resize roles


def test_the_catalog_arm_ranks_a_profile_that_knows_the_kernel(tmp_path: Path) -> None:
    """The walks rank a timing-only profile written with the spec, as `kbopt profile`
    writes it: the kernel's contexts (a norm, not attention) and the arithmetic intensity
    from its minimal bytes.  Without them the H200 batch-norm ablation of 2026-12-04 ranked
    split-KV decode and attention partitioning above the spilling kernel's way out."""
    from kbopt.strategy import CONTEXT_NOTE
    from kbopt.workflow.ablation import CatalogWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, WiderNeedsMoreWarps, warps=4)
    walk = CatalogWalk(
        lab, _row(1, values, start_m, err), start_m, store=Store(REPO), language="triton", spec=spec
    )
    profile = walk.profile()
    assert profile.notes[CONTEXT_NOTE] == ", ".join(spec.contexts)
    assert "normalization" in profile.notes[CONTEXT_NOTE]
    assert "arithmetic_intensity" in walk.metrics(profile)


class NarrowerWins(AdjustedBackend):
    """Twice the block is much slower whatever the warps; half the block is faster;
    nothing else changes the time."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        block = params.get("block")
        m.duration_us = 130.0 if block == 512 else 80.0 if block == 128 else 100.0


@pytest.mark.parametrize("seed", range(4))
def test_after_a_clear_loss_the_other_way_comes_first(tmp_path: Path, seed: int) -> None:
    """Twice the block lost clearly, alone and with twice the warps: the next move is half
    the block, although its measured precondition fails and other moves are open; a move
    only a little slower does not point the other way."""
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.ablation import RandomWalk, _row
    from kbopt.workflow.search_momentum import Momentum

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, NarrowerWins, warps=4)
    wider = Move(change={"tile_n": "x2"})
    pool = [
        ("deeper", Move(change={"pipeline_stages": "+1"})),
        ("wider", wider),
        ("narrower", Move(change={"tile_n": "/2"}, when=["pct_of_floor > 1000"])),
        ("more rows", Move(change={"rows_per_program": "x2"})),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    planned = plan_move(wider, spec.knobs_for("triton_v1"), values, {}, start_m.launched)
    walk._open = [("wider", planned)]  # as if the walk had drawn it
    assert walk.step(2) and walk.result.trials[-1].kept is False  # 130 us
    assert walk.step(3) and walk.result.trials[-1].move.startswith("wider, warps alongside")
    assert walk.step(4)
    fourth = walk.result.trials[-1]
    assert fourth.move.startswith("narrower") and fourth.values["block"] == 128
    assert "preconditions not met" in fourth.move
    assert fourth.kept and walk.best_us == 80.0
    assert not walk.momentum.reverse  # kept: the search moved on
    # each trial records the rule that placed its move, for scripts/move_outcomes.py
    assert [t.momentum for t in walk.result.trials[1:]] == ["", "", "the other way"]
    # Noise-sized losses keep the order: 5% slower is not a clear loss.
    near = Momentum()
    near.measured({("block", 1)}, False, -5.0)
    assert not near.reverse


class MoreWarpsRunTwiceAsSlow(AdjustedBackend):
    """Past four warps, twice as slow from any values; half the block is a little faster,
    twice the block a little slower, one more stage the same."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        block = {128: 95.0, 256: 100.0, 512: 105.0}.get(params.get("block", 256), 110.0)
        m.duration_us = block * (2.0 if params.get("num_warps", 4) > 4 else 1.0)


@pytest.mark.parametrize("seed", range(4))
def test_a_direction_that_lost_badly_goes_last_even_after_going_back(
    tmp_path: Path, seed: int
) -> None:
    """Twice the warps ran twice as slow: from then on, from any values (going back to
    earlier ones included), a move that only doubles the warps again comes after every
    other open move; a clear win in that direction would clear the mark."""
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.ablation import RandomWalk, _row
    from kbopt.workflow.search_momentum import BAD_LOSS_PCT, LOST_BADLY, Momentum, directions

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, MoreWarpsRunTwiceAsSlow, warps=4)
    more_warps = Move(change={"warps": "x2"})
    pool = [
        ("more warps", more_warps),
        ("narrower", Move(change={"tile_n": "/2"})),
        ("wider", Move(change={"tile_n": "x2"})),
        ("deeper", Move(change={"pipeline_stages": "+1"})),
    ]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    planned = plan_move(more_warps, spec.knobs_for("triton_v1"), values, {}, start_m.launched)
    walk._open = [("more warps", planned)]  # as if the walk had drawn it first
    assert walk.step(2) and walk.result.trials[-1].kept is False  # 200 us against 100
    assert ("num_warps", 1) in walk.momentum.lost_badly
    n = 3
    while walk.step(n) and n < 24:
        n += 1
    # Each later move that only doubles the warps was placed last by the rule (a wider
    # block repeated with twice the warps is another move: the pairing's).
    again = [
        t
        for t in walk.result.trials[2:]
        if t.values.get("num_warps", 4) > 4 and "warps alongside" not in t.move
    ]
    assert again and all(t.momentum == LOST_BADLY for t in again), [t.move for t in again]
    # Going back to earlier values keeps the mark, and forgets the rest.
    walk.momentum.reverse.add(("block", 1))
    walk._search_afresh_from(values, start_m)
    assert ("num_warps", 1) in walk.momentum.lost_badly and not walk.momentum.reverse
    # The order: after flat directions; a clear win in the direction clears the mark.
    m = Momentum()
    m.measured({("num_warps", 1)}, False, -(BAD_LOSS_PCT + 1))
    m.measured({("num_stages", 1)}, True, 0.0)  # kept, not faster: flat
    warps_up = plan_move(more_warps, spec.knobs_for("triton_v1"), values, {}, start_m.launched)
    deeper = plan_move(
        Move(change={"pipeline_stages": "+1"}),
        spec.knobs_for("triton_v1"),
        values,
        {},
        start_m.launched,
    )
    assert directions(warps_up) == {("num_warps", 1)}
    assert m.order([warps_up, deeper], lambda p: p) == [deeper, warps_up]
    m.measured({("num_warps", 1)}, True, 5.0)
    assert not m.lost_badly
    # A loss short of the mark points the other way, but does not mark the direction.
    near = Momentum()
    near.measured({("num_warps", 1)}, False, -(BAD_LOSS_PCT - 1))
    assert near.reverse and not near.lost_badly


class TwoBasins(AdjustedBackend):
    """Twice the block wins first (90 us), and every move from there loses; the best region
    is the other way: half the warps (97 us, slower than 90) and then half again (60 us)."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        times = {(256, 4): 100.0, (512, 4): 90.0, (256, 2): 97.0, (256, 1): 60.0}
        key = (params.get("block", 256), params.get("num_warps", 4))  # the start: no params
        m.duration_us = times.get(key, 120.0)


@pytest.mark.parametrize("seed", range(4))
def test_with_no_move_left_from_its_best_a_walk_goes_back_to_earlier_values(
    tmp_path: Path, seed: int
) -> None:
    """The first win led into a dead end: the walk goes back to its start, keeps a move
    that is slower than its best but faster than the start (judged on the branch), and
    finds the best region the first win led away from."""
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.ablation import RandomWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, TwoBasins, warps=4)
    wider = Move(change={"tile_n": "x2"})
    pool = [("wider", wider), ("fewer warps", Move(change={"warps": "/2"}))]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    planned = plan_move(wider, spec.knobs_for("triton_v1"), values, {}, start_m.launched)
    walk._open = [("wider", planned)]  # as if the walk had drawn the first win first
    n = 2
    while walk.step(n):
        n += 1
    assert walk.best_us == 60.0
    moves = [t.move for t in walk.result.trials[1:]]
    back = [i for i, move in enumerate(moves) if move.startswith("back at trial 1's values")]
    assert back, moves
    branch = walk.result.trials[1 + back[0]]
    assert branch.values["num_warps"] == 2 and branch.kept  # 97 us: kept against the start
    assert walk.result.stopped  # every kept state searched: it stops, no trial repeated
    seen = [frozenset(t.values.items()) for t in walk.result.trials]
    assert len(seen) == len(set(seen))


def test_head_to_head_counts_verdicts_and_comparisons_per_selection_of_runs() -> None:
    from kbopt.site.ablation import head_to_head, render_head_to_head

    def run(kernel: str, catalog: int | None, random_: int | None, grid: int | None) -> dict:
        doc = _two_arms(catalog, grid)
        doc["rows"].append({"arm": "random", "trials_to_within_5pct": random_, "trials": 24})
        return {**doc, "kernel": kernel, "config": {"name": "large"}}

    docs = [
        run("a", None, 3, 12),  # first run of a: not met, more trials than both
        run("b", 1, 1, 1),  # start already best: not judged, left out of the comparisons
        run("a", 2, 3, None),  # latest run of a: met, fewer than both (the grid never)
        run("c", None, None, 9),  # never against never: the same
    ]
    first, latest, every = head_to_head(docs)
    assert first["count"] == 3 and first["not met"] == 2 and first["not judged"] == 1
    assert first["random more"] == 1 and first["random same"] == 1 and "random fewer" not in first
    assert first["grid more"] == 2
    assert latest["met"] == 1 and latest["random fewer"] == 1 and latest["grid fewer"] == 1
    assert every["count"] == 4 and every["met"] == 1 and every["not met"] == 2
    table = "\n".join(render_head_to_head(docs))
    row = (
        "| first run of each kernel and configuration | 3 | 0 | 2 | 1 | 0 | 0 / 1 / 1 | 0 / 0 / 2 |"
    )
    assert row in table
    assert latest["met against the grid"] == 1  # met, and the grid never came within 5%


class LargerTileNeedsMoreWarps(AdjustedBackend):
    """Twice the block alone loses (130 us), twice the warps alone wins a little (98 us);
    both together win most (80 us): the fp8 GEMM's 256-row tile wanted 8 warps."""

    def adjust(self, m: Measurement, params: dict[str, Any]) -> None:
        times = {(256, 4): 100.0, (512, 4): 130.0, (256, 8): 98.0, (512, 8): 80.0}
        key = (params.get("block", 256), params.get("num_warps", 4))
        m.duration_us = times.get(key, 120.0)


@pytest.mark.parametrize("seed", range(3))
def test_with_nothing_left_a_walk_tries_its_rolled_back_changes_again_from_its_best(
    tmp_path: Path, seed: int
) -> None:
    """The larger tile, rolled back from the start, is never proposed again while other
    moves are open; once none is, it is measured again from the best values (8 warps),
    where it wins, instead of the walk stopping with its budget unspent."""
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.ablation import RandomWalk, _row

    spec, lab, values, start_m, err = _rmsnorm_lab(tmp_path, LargerTileNeedsMoreWarps, warps=4)
    wider = Move(change={"tile_n": "x2"})
    pool = [("wider", wider), ("more warps", Move(change={"warps": "x2"}))]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=seed)
    planned = plan_move(wider, spec.knobs_for("triton_v1"), values, {}, start_m.launched)
    walk._open = [("wider", planned)]  # the larger tile first, as the fp8 GEMM's arm did
    walk._pair = lambda *_: None  # no resize repeated with the warps alongside (its record)
    n = 2
    while walk.step(n) and n < 20:
        n += 1
    moves = [t.move for t in walk.result.trials[1:]]
    again = [i for i, m in enumerate(moves) if m.startswith("rolled back before, tried again")]
    assert again, moves
    assert walk.best_us == 80.0
    assert walk.best_values["block"] == 512 and walk.best_values["num_warps"] == 8
    assert walk.result.stopped  # and then it stops: nothing is open, nothing measured twice
    seen = [frozenset(t.values.items()) for t in walk.result.trials]
    assert len(seen) == len(set(seen))


def test_held_out_runs_are_the_first_runs_of_the_blind_sets_plans(tmp_path: Path) -> None:
    from kbopt.site.ablation import head_to_head, held_out_plans, held_out_set

    bench = tmp_path / "benchmarks"
    bench.mkdir()
    (bench / "ablation-blind9.txt").write_text(
        "# a comment\nadd_rmsnorm --config large --budget-s 60\n", encoding="utf-8"
    )
    (bench / "ablation-blind30.txt").write_text(
        "benchmarks/foreign/k/spec.py --config m=1,n=2 --budget-s 90  # the big one\n",
        encoding="utf-8",
    )
    (bench / "ablation-next.txt").write_text("other --config x\n", encoding="utf-8")
    plans = held_out_plans(tmp_path)
    assert plans == {
        ("add_rmsnorm", "large"): 9,
        ("benchmarks/foreign/k/spec.py", "m=1,n=2"): 30,
    }

    def run(kernel: str, spec: str, config: str, catalog: int | None, random_: int) -> dict:
        doc = _two_arms(catalog, 12)
        doc["rows"].append({"arm": "random", "trials_to_within_5pct": random_, "trials": 24})
        command = f"kbopt ablate {spec or kernel} --config {config} --budget-s 90 --trials 24"
        return {
            **doc,
            "kernel": kernel,
            "spec": spec,
            "config": {"name": config},
            "command": command,
        }

    older = run("add_rmsnorm", "", "large", 2, 3)
    foreign = run("k", "benchmarks/foreign/k/spec.py", "m=1,n=2", 5, 3)
    rerun = run("k", "benchmarks/foreign/k/spec.py", "m=1,n=2", 2, 3)  # not held out
    other = run("k", "benchmarks/foreign/k/spec.py", "m=4,n=2", 2, 3)  # not in a plan
    assert held_out_set(older, plans) == 9 and held_out_set(foreign, plans) == 30
    assert held_out_set(other, plans) is None
    rows = {r["runs"]: r for r in head_to_head([older, foreign, rerun, other], plans)}
    every = rows["held-out runs of the blind sets (9 to 30)"]
    assert every["count"] == 2 and every["random fewer"] == 1 and every["random more"] == 1
    recent = rows["held-out runs since the moves were ordered by their record (sets 25 to 30)"]
    assert recent["count"] == 1 and recent["random more"] == 1  # the first run, not the rerun
    assert not any(r.startswith("held-out") for r in (x["runs"] for x in head_to_head([older])))


def test_a_walking_trial_records_what_the_conditions_read_where_it_moved_from(
    tmp_path: Path,
) -> None:
    from kbopt.workflow.ablation import condition_metrics

    root = _project(tmp_path, "mla_decode")
    spec = load_spec("mla_decode", root)
    cfg = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})
    store = Store(root)
    doc = run_ablation(
        spec=spec,
        backend=FakeBackend(root),
        store=store,
        start="triton_v2",
        config=cfg,
        arms=["catalog", "random", "grid"],
        trials=4,
    )
    wanted = condition_metrics(store)
    assert "registers_per_thread" in wanted and "dram_throughput_pct" in wanted
    for row in doc["rows"]:
        moves = [t for t in row["trajectory"] if t["n"] > 1]
        assert moves, row["arm"]
        for t in moves:
            if row["arm"] == "grid":  # a grid point moves from nowhere
                assert t["from_metrics"] == {}
                continue
            assert t["from_metrics"] and set(t["from_metrics"]) <= wanted
            assert all(isinstance(v, float) for v in t["from_metrics"].values())
    first = next(r for r in doc["rows"] if r["arm"] == "catalog")["trajectory"][1]
    assert "pct_of_floor" in first["from_metrics"]  # the start's, not the trial's own
    start_pct = doc["rows"][0]["trajectory"][0]["pct_of_floor"]
    assert first["from_metrics"]["pct_of_floor"] == pytest.approx(start_pct, rel=1e-3)


def _start_profile(root: Path, spec: KernelSpec, cfg: TrialConfig, **counters: float) -> Any:
    """add_rmsnorm triton_v1's timing-only profile at `cfg` on the fake, with `counters`
    added as a profile with hardware counters would carry them."""
    from kbopt.workflow.profiler import build_profile

    m = FakeBackend(root).measure(spec, "triton_v1", cfg, None)
    profile, _ = build_profile(m, None, "", spec)
    return profile.model_copy(update={"measured": {**profile.measured, **counters}})


def test_the_walks_rank_the_start_from_its_profile_with_counters(tmp_path: Path) -> None:
    """At the starting values the walks read the profile given with --start-profile (what
    only counters show: here a spill), elsewhere their timing-only profiles.  On the H100,
    Liger's SwiGLU gate/up GEMM re-read its operands 69 times (dram_bytes_ratio, a counter)
    and the timing-only walk tried the L2-grouping entry only at its sixth trial."""
    root = _project(tmp_path, "add_rmsnorm")
    spec = load_spec("add_rmsnorm", root)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    store = Store(root)

    def run(start_profile: Any) -> dict[str, Any]:
        return run_ablation(
            spec=spec,
            backend=FakeBackend(root),
            store=store,
            start="triton_v1",
            config=cfg,
            arms=["catalog", "random"],
            trials=3,
            start_profile=start_profile,
            start_profile_source="start.md",
        )

    plain = run(None)
    spilled = run(_start_profile(root, spec, cfg, spill_bytes_per_thread=512.0))
    spill_entry = "register-spills-from-oversized-per-thread-state"
    assert "start_profile" not in plain
    assert spilled["start_profile"]["source"] == "start.md"
    for doc, spills in ((plain, False), (spilled, True)):
        catalog = next(r for r in doc["rows"] if r["arm"] == "catalog")["trajectory"]
        assert (spill_entry in catalog[1]["move"]) is spills, catalog[1]["move"]
        # what the move was chosen under, for both walks: the start's counters
        for row in doc["rows"]:
            moved = row["trajectory"][1]["from_metrics"]
            assert (moved.get("spill_bytes_per_thread", 0.0) == 512.0) is spills


def test_a_start_profile_of_other_values_is_refused_before_any_trial(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from kbopt.errors import KbError
    from kbopt.workflow.ablation import start_profile_for

    root = _project(tmp_path, "add_rmsnorm")
    spec = load_spec("add_rmsnorm", root)
    cfg = TrialConfig.from_dict({"name": "large", "dims": {"rows": 8192, "hidden": 4096}})
    other = TrialConfig.from_dict({"name": "small", "dims": {"rows": 64, "hidden": 4096}})
    profile = _start_profile(root, spec, other)
    with pytest.raises(KbError, match="was measured at rows=64, hidden=4096; the ablation"):
        start_profile_for(profile, spec, "triton_v1", cfg)
    with pytest.raises(KbError, match="is of version triton_v1; the ablation starts from"):
        start_profile_for(_start_profile(root, spec, cfg), spec, "triton_v2", cfg)
    # through the command: the Markdown, and `kbopt profile --json` output
    md = tmp_path / "start.md"
    md.write_text(profile.render(), encoding="utf-8")
    js = tmp_path / "start.json"
    js.write_text(json.dumps([{"profile": profile.render()}]), encoding="utf-8")
    for path in (md, js):
        argv = ["--root", str(root), "ablate", "add_rmsnorm", "--backend", "fake"]
        argv += ["--config", "large", "--trials", "3", "--start-profile", str(path)]
        assert main(argv) == 2  # an error the user can fix
        err = capsys.readouterr().err
        assert "was measured at rows=64" in err and "was measured at rows=64" in err
        assert "[ablate] catalog" not in err and "Traceback" not in err
    good = tmp_path / "good.md"
    good.write_text(_start_profile(root, spec, cfg).render(), encoding="utf-8")
    out = tmp_path / "out.json"
    argv = ["--root", str(root), "ablate", "add_rmsnorm", "--backend", "fake", "--config"]
    argv += ["large", "--trials", "3", "--start-profile", str(good), "--out", str(out)]
    assert main(argv) == 0
    assert json.loads(out.read_text())["start_profile"]["source"] == str(good)


class SharedMemoryBound(FakeBackend):
    """64-row KV tiles fit in shared memory only at one pipeline stage: at two or more the
    launch fails as Triton's does when a kernel needs more than an SM has."""

    def measure(
        self, spec: KernelSpec, version: str, config: TrialConfig, params: Any = None
    ) -> Measurement:
        p = params or {}
        if p.get("block_n") == 64 and p.get("num_stages", 1) >= 2:
            raise RuntimeError(
                "OutOfResources: out of resource: shared memory, Required: 294944, "
                "Hardware limit: 232448"
            )
        return super().measure(spec, version, config, params)


def test_a_grown_tile_out_of_shared_memory_is_tried_next_with_one_stage_fewer(
    tmp_path: Path,
) -> None:
    from kbopt.model import Move
    from kbopt.workflow.ablation import Lab, RandomWalk, _row

    root = _project(tmp_path, "mla_decode")
    spec = load_spec("mla_decode", root)
    cfg = TrialConfig.from_dict({"name": "decode", "dims": {"b": 32, "s": 1, "t": 4096}})
    values = {**spec.knob_values("triton_v2"), "num_stages": 2}
    lab = Lab(SharedMemoryBound(root), spec, "triton_v2", cfg, spec.knob_values("triton_v2"))
    start_m, err = lab.measure(values)
    assert start_m is not None
    pool = [("grow", Move(change={"kv_tile": "x2"}))]
    walk = RandomWalk(lab, _row(1, values, start_m, err), start_m, pool=pool, spec=spec, seed=0)
    assert walk.step(2) and walk.step(3)
    failed, refit = walk.result.trials[1:]
    assert failed.status == "error" and "shared memory" in failed.note
    assert failed.values["block_n"] == 64 and failed.values["num_stages"] == 2
    assert refit.status == "ok" and "one stage fewer" in refit.move
    assert (refit.values["block_n"], refit.values["num_stages"]) == (64, 1)
    # once: a second failure of the pair is not paired again, and a shrink never is
    assert not walk.step(4) or "one stage fewer" not in walk.result.trials[-1].move


def test_only_a_grown_tile_gets_a_stage_fewer_and_only_where_stages_can_fall() -> None:
    from kbopt.kernel import Knob
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.search_pairing import out_of_shared_memory, stages_alongside

    knobs = (
        Knob("block_n", "int", (32, 64, 128), "kv_tile"),
        Knob("num_stages", "int", (1, 2, 3), "pipeline_stages"),
    )
    values = {"block_n": 64, "num_stages": 2}

    def planned(change: str) -> Any:
        return plan_move(Move(change={"kv_tile": change}), knobs, values, {}, None)

    refit = stages_alongside(planned("x2"), knobs, values, {}, None, set(), set())
    assert refit is not None and refit.values == {"block_n": 128, "num_stages": 1}
    assert stages_alongside(planned("/2"), knobs, values, {}, None, set(), set()) is None
    at_one = {"block_n": 32, "num_stages": 1}
    grown = plan_move(Move(change={"kv_tile": "x2"}), knobs, at_one, {}, None)
    assert stages_alongside(grown, knobs, at_one, {}, None, set(), set()) is None
    assert out_of_shared_memory("VersionFailed: ... OutOfResources: out of resource: shared memory")
    assert not out_of_shared_memory("OutOfResources: out of resource: registers")


def test_a_deeper_k_step_or_a_tile_grown_with_its_warps_also_gets_a_stage_fewer() -> None:
    from kbopt.kernel import Knob
    from kbopt.model import Move
    from kbopt.moves import plan_move
    from kbopt.workflow.search_pairing import stages_alongside

    knobs = (
        Knob("block_m", "int", (32, 64, 128), "tile_m"),
        Knob("block_k", "int", (32, 64, 128), "tile_k"),
        Knob("num_warps", "int", (2, 4, 8), "warps"),
        Knob("num_stages", "int", (1, 2, 3), "pipeline_stages"),
    )
    values = {"block_m": 64, "block_k": 64, "num_warps": 4, "num_stages": 2}

    def refit(change: dict[str, str]) -> Any:
        planned = plan_move(Move(change=change), knobs, values, {}, None)
        return stages_alongside(planned, knobs, values, {}, None, set(), set())

    deeper = refit({"tile_k": "x2"})
    assert deeper is not None and deeper.values == {"block_k": 128, "num_stages": 1}
    paired = refit({"tile_m": "x2", "warps": "x2"})
    assert paired is not None
    assert paired.values == {"block_m": 128, "num_warps": 8, "num_stages": 1}
    # one tile grown and another shrunk, or the stages already moved: not a refit
    assert refit({"tile_m": "x2", "tile_k": "/2"}) is None
    assert refit({"tile_k": "x2", "pipeline_stages": "+1"}) is None
    assert refit({"warps": "x2"}) is None
