"""A call whose wide launch sits beside a launch of one or a few CTAs (a second pass that adds
up partials) is measured as `narrow_launch_pct`, and the catalog's entry for merging partials
in the last CTA fires on it: FlagGems' two-kernel L2 norm, profiled on an H100 (there it
ranks fourth, behind the two launch-overhead entries and more bytes in flight).  Profiles
recorded before the metric existed are given it from their recorded launches."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kbopt.bench.backend import Measurement
from kbopt.bench.ncu import KernelCounters, NcuOutcome
from kbopt.bench.trials import TrialConfig
from kbopt.metric_sources import produced_by
from kbopt.store import Store
from kbopt.strategy import recommend
from kbopt.workflow.profiler import derived_metrics, narrow_launch_pct

REPO = Path(__file__).resolve().parent.parent
ENTRY = "last-cta-merges-split-partials"
STEM = "flaggems_vector_norm--triton_v1--rows_1024_cols_4096"
PROFILE = REPO / "benchmarks/real_profiles_blind27" / f"{STEM}.md"
RECORD = REPO / "results/profiles/h100-blind27" / f"{STEM}.json"


def test_the_narrow_launch_s_share_of_the_gpu_time() -> None:
    launches = [("partials", 6.0), ("merge", 2.0), ("cast", 2.0)]
    grids = {"partials": 2048.0, "merge": 1.0, "cast": 4096.0}
    assert narrow_launch_pct(launches, grids, 132) == pytest.approx(20.0)
    # no launch fills the GPU: a small grid alone is not a merge beside a wide pass
    assert narrow_launch_pct([("a", 1.0), ("b", 1.0)], {"a": 8.0, "b": 1.0}, 132) == 0.0
    # a grid a quarter of the SMs or wider is not narrow
    assert narrow_launch_pct([("a", 1.0), ("b", 1.0)], {"a": 264.0, "b": 33.0}, 132) == 0.0
    # nothing known: not measured, rather than 0
    assert narrow_launch_pct([("a", 1.0)], {}, 132) is None
    assert narrow_launch_pct([("a", 1.0)], {"a": 1.0}, None) is None


def test_the_profiler_derives_it_from_the_counters() -> None:
    counters = NcuOutcome(
        [
            KernelCounters(1, "l2_norm_kernel_1", {"duration_us": 5.5, "grid_size": 2048.0}),
            KernelCounters(2, "l2_norm_kernel_2", {"duration_us": 2.9, "grid_size": 1.0}),
        ],
        [],
        launches=[("l2_norm_kernel_1", 5.6), ("l2_norm_kernel_2", 2.9)],
    )
    m = Measurement(
        kernel="k",
        version="v1",
        config=TrialConfig.of("x", {"rows": 8}),
        duration_us=11.3,
        correct=True,
        sm_count=132,
    )
    out = derived_metrics(None, m, counters, {})
    assert out["narrow_launch_pct"] == pytest.approx(100 * 2.9 / 8.5)
    assert "launch__grid_size" in produced_by()["narrow_launch_pct"]


def _script():
    """scripts/derive_profile_metrics.py as a module."""
    import importlib.util

    path = REPO / "scripts/derive_profile_metrics.py"
    spec = importlib.util.spec_from_file_location("derive_profile_metrics", path)
    assert spec is not None and spec.loader is not None
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    return script


def _measured_share() -> float:
    """The metric from the recorded profile (its launches and their grids), as the profiler
    computes it now; the profile itself was written before the metric existed."""
    (doc,) = json.loads(RECORD.read_text())
    share = _script().DERIVED["narrow_launch_pct"](doc)
    assert share is not None
    return share


def test_the_two_kernel_norm_fires_the_merge_in_the_last_cta() -> None:
    share = _measured_share()
    assert 30 < share < 40  # the one-program merge: 2.9 of 8.6 us of GPU time
    text = PROFILE.read_text()
    # the labelled profile carries it, derived afterwards from the same record
    assert f"| narrow_launch_pct | {share:.3f} |" in text
    without = "".join(ln for ln in text.splitlines(keepends=True) if "narrow_launch_pct" not in ln)
    store = Store(REPO)
    ranked = recommend(text, language="triton", store=store).opportunities
    mine = next(o for o in ranked if o.id == ENTRY)
    assert "narrow_launch_pct >= 10" in mine.fired
    # without the measurement nothing in the profile says a launch merges partials: the
    # entry is then offered on its words at most, lower, and with no trigger fired
    before = recommend(without, language="triton", store=store).opportunities
    ids = [o.id for o in before]
    assert ENTRY not in ids or ids.index(ENTRY) > [o.id for o in ranked].index(ENTRY)
    assert all(not o.fired for o in before if o.id == ENTRY)


def test_recorded_profiles_are_given_the_metric_once(tmp_path: Path) -> None:
    script = _script()
    text = PROFILE.read_text()
    without = "".join(ln for ln in text.splitlines(keepends=True) if "narrow_launch_pct" not in ln)
    (tmp_path / PROFILE.name).write_text(without)
    records = tmp_path / "records"
    records.mkdir()
    (records / RECORD.name).write_text(RECORD.read_text())
    assert script.main([str(tmp_path), "--records", str(records)]) == 0
    assert (tmp_path / PROFILE.name).read_text() == text
    assert script.main([str(tmp_path), "--records", str(records)]) == 0  # nothing to add
    assert (tmp_path / PROFILE.name).read_text() == text
    assert script.main([str(tmp_path / "missing"), "--records", str(records)]) == 2
