"""`kbopt cycle --designer catalog`: the catalog's moves applied to a kernel's knobs, with
no person and no LLM; what it does when nothing applies; what LEARN learns from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from workflow_fixtures import StandInBackend

from kbopt.bench.trials import default_matrix
from kbopt.cli import main
from kbopt.contracts.profile import Profile
from kbopt.errors import VersionFailed
from kbopt.kernel import clear_cache, load_spec
from kbopt.store import Store
from kbopt.strategy import recommend
from kbopt.workflow import cycle
from kbopt.workflow.catalog_designer import (
    NO_MOVE,
    UNPLANNED,
    CatalogDesigner,
    candidates,
    left_to_the_kernel,
    unplanned,
)
from kbopt.workflow.record import AttemptStatus

REPO = Path(__file__).resolve().parent.parent


def _project(tmp_path: Path, *kernels: str) -> Path:
    """A project with this repository's catalog and copies of some kernels (no results)."""
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


def _cycle(root: Path, kernel: str, start: str, run_id: str, *extra: str) -> int:
    return main(
        [
            "--root",
            str(root),
            "cycle",
            kernel,
            "--designer",
            "catalog",
            "--backend",
            "fake",
            "--from",
            start,
            "--target",
            "pct_of_floor>=99",
            "--counters",
            "off",
            "--run-id",
            run_id,
            *extra,
        ]
    )


def _record(root: Path, run_id: str) -> dict:
    return json.loads((root / "runs" / run_id / "record.json").read_text())


def _knowledge(root: Path) -> dict[str, str]:
    base = root / "docs" / "knowledge"
    return {p.relative_to(base).as_posix(): p.read_text() for p in sorted(base.rglob("*.md"))}


def test_catalog_designer_cycles_mla_decode_on_the_fake(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, "mla_decode")
    before = _knowledge(root)
    code = _cycle(root, "mla_decode", "triton_v2", "c1", "--max-iterations", "3")
    out, err = capsys.readouterr()
    assert code == 0, err
    assert out.startswith("## Optimization Summary")
    record = _record(root, "c1")
    assert len(record["attempts"]) == 3 and not record["designer_blocked"]
    moves = json.loads((root / "runs" / "c1" / "catalog-moves.json").read_text())
    store = Store(root)
    spec = load_spec("mla_decode", root)
    for attempt in record["attempts"]:
        chosen = moves[str(attempt["iteration"])]
        assert chosen["entry"] == attempt["optimization"]
        assert store.get(chosen["entry"]).moves, "only entries with moves are applied"
        assert attempt["strategy_rank"] == chosen["rank"]
        assert chosen["from_version"] == attempt["from_version"]
        if attempt["status"] == AttemptStatus.APPLIED:
            # the kept version is the parent's file with exactly the planned knob values
            got = spec.knob_values(attempt["new_version"])
            assert {k: got.get(k) for k in chosen["values"]} == chosen["values"]
        elif not any(
            a["new_version"] == attempt["new_version"] and a["status"] == AttemptStatus.APPLIED
            for a in record["attempts"]
        ):  # rolled back: its file is gone, unless a later attempt reused the name and kept it
            assert not spec.version_path(attempt["new_version"]).exists()
    # no attempt measures knob values the run already measured (the start's included)
    designed = [
        frozenset(moves[str(a["iteration"])]["all_values"].items()) for a in record["attempts"]
    ]
    start = frozenset(spec.knob_values("triton_v2").items())
    assert len(set(designed)) == len(designed) and start not in designed
    # LEARN said what it would have written and wrote nothing: the figures are fake
    assert _knowledge(root) == before
    assert all(item["action"] == "skipped" for item in record["learned"])


def test_moves_on_knobs_left_to_the_kernel_name_those_knobs() -> None:
    # add_rmsnorm's triton_v3 leaves num_warps to the kernel: without a launch that recorded
    # the warps it ran with, the warps moves cannot be planned, and the stop line says so
    # instead of sending the user to write code (here no launch was followed at all)
    spec, store = load_spec("add_rmsnorm", REPO), Store(REPO)
    ranked = [{"id": "size-warps-to-the-row", "kind": "optimization", "rank": 1}]
    why_not: list[str] = []
    found = candidates(store, spec, "triton_v3", ranked, {}, why_not=why_not, relax=True)
    assert found == [] and left_to_the_kernel(why_not) == ["num_warps"]
    stop = unplanned("triton_v3", ["num_warps"], "fake")
    assert stop.startswith(UNPLANNED) and "leaves num_warps to the kernel" in stop
    assert "fake backend" in stop and "--backend real" in stop
    assert "fake backend" not in unplanned("triton_v3", ["num_warps"], "real")
    # once a launch recorded the warps, the same moves are planned from that value
    launched = {"num_warps": 8}
    found = candidates(store, spec, "triton_v3", ranked, {}, relax=True, launched=launched)
    assert {c.planned.values["num_warps"] for c in found} == {4, 16}
    assert left_to_the_kernel(["#1 x (tile_n x2): block: 256 is already the largest"]) == []


def test_no_applicable_move_stops_with_one_line_and_exit_4(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, "mla_decode")
    code = _cycle(root, "mla_decode", "triton_v1", "c2")  # the naive version: no knobs set
    out, err = capsys.readouterr()
    assert code == 4
    assert f"kbopt cycle: stopped: {NO_MOVE}" in err
    assert out == ""  # nothing was attempted: no summary on stdout
    record = _record(root, "c2")
    assert record["attempts"] == [] and record["state"] == "DONE"
    assert record["designer_blocked"].startswith(NO_MOVE)
    assert (root / "runs" / "c2" / "summary.md").is_file()


def test_agent_designer_without_a_key_stops_instead_of_failing_every_attempt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    root = _project(tmp_path, "mla_decode")
    code = main(
        [
            "--root",
            str(root),
            "cycle",
            "mla_decode",
            "--designer",
            "agent",
            "--backend",
            "fake",
            "--from",
            "triton_v2",
            "--target",
            "pct_of_floor>=99",
            "--counters",
            "off",
            "--run-id",
            "a1",
        ]
    )
    err = capsys.readouterr().err
    assert code == 4
    assert "ANTHROPIC_API_KEY is not set" in err
    record = _record(root, "a1")
    assert record["attempts"] == []
    assert "ANTHROPIC_API_KEY" in record["designer_blocked"]


def test_catalog_designer_on_add_rmsnorm_and_a_scaffolded_kernel(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, "add_rmsnorm")
    code = _cycle(root, "add_rmsnorm", "triton_v3", "n1", "--max-iterations", "2")
    assert code in (0, 4), capsys.readouterr().err
    record = _record(root, "n1")
    assert record["attempts"] or record["designer_blocked"].startswith(NO_MOVE)
    for attempt in record["attempts"]:
        assert Store(root).get(attempt["optimization"]).moves
    # a kernel made by `kbopt kernel new`: its block_size knob has the vector_width role
    assert main(["--root", str(root), "kernel", "new", "scale2x", "--dims", "n"]) == 0
    clear_cache()
    capsys.readouterr()
    code = _cycle(root, "scale2x", "triton_v1", "s1", "--max-iterations", "2")
    err = capsys.readouterr().err
    record = _record(root, "s1")
    if code == 4:  # nothing ranked for this profile has a move on its knobs
        assert record["designer_blocked"].startswith(NO_MOVE), err
        assert any("catalog designer:" in e["message"] for e in record["events"])
    else:
        assert code == 0, err
        moves = json.loads((root / "runs" / "s1" / "catalog-moves.json").read_text())
        assert set(moves["1"]["values"]) <= {"block_size", "num_warps"}
    # its knobs are reachable by moves: wider accesses when DRAM is far from busy
    spec = load_spec("scale2x", root)
    ranked = [{"id": "coalesced-vectorized-global-access", "kind": "optimization"}]
    found = candidates(Store(root), spec, "triton_v1", ranked, {"dram_throughput_pct": 40.0})
    assert [c.planned.values for c in found] == [{"block_size": 2048}]
    assert candidates(Store(root), spec, "triton_v1", ranked, {"dram_throughput_pct": 80.0}) == []


# ---------------------------------------------------------------------- learning

ENTRY = """\
---
name: {name}
kind: optimization
applies_to: [any-kernel]
bottlenecks: [memory]
impact: medium
expected_gain_pct: 30
risk: low
status: validated
created: 2026-12-01
updated: 2026-12-01
moves:
  - change: {{{role}: "x2"}}
---

# {title}

## When to Apply
- Any memory-bound kernel.
- `dram_throughput_pct < 60`: far from the bandwidth.

## Mechanism
It changes one knob.

## Affected Metrics
- `dram_throughput_pct`: rises

## Implementation
```python
pass
```

## Performance Evidence
Source type: external report
Source: a test
| Config | Before | After | Change |
|--------|--------|-------|--------|
| x | 1 us | 1 us | 0% |

## Generalization
None.

## Pitfalls
- None.

## Interactions
"""

SPEC = """\
from kbopt.kernel import Dim, KernelSpec, Knob, Trial


def _none(*args, **kwargs):
    raise RuntimeError("measure with the fake backend")


SPEC = KernelSpec(
    name="knobby",
    description="a kernel whose fake figures follow its knobs",
    dims=(Dim("n", "elements"),),
    trials=(Trial("one", {"n": 1024}, "the only point"),),
    backoff_dim="n",
    make_inputs=_none,
    reference=_none,
    flops=lambda d: 0,
    bytes_moved=lambda d: 4 * d["n"],
    tolerances={"bfloat16": 1e-2},
    entry_point="knobby",
    families=("triton",),
    knobs={
        "triton": (
            Knob("num_warps", "int", (1, 2, 4, 8, 16), "warps"),
            Knob("vectors", "int", (1, 2, 4, 8), "vector_width"),
        )
    },
)
"""

VERSION = """\
NUM_WARPS = 4
VECTORS = 2
# more warps are slower, wider vectors faster: the stand-in figures follow the knobs
FAKE_DURATION_US = 20 * NUM_WARPS + 400 / VECTORS
FAKE_FLOOR_US = 100
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def _learning_project(root: Path) -> Path:
    base = root / "docs" / "knowledge" / "optimizations"
    base.mkdir(parents=True)
    # Same text, triggers and prior gain: only the name (the tie-break) and the move differ.
    (base / "knob-alpha.md").write_text(
        ENTRY.format(name="knob-alpha", role="warps", title="Knob alpha")
    )
    (base / "knob-beta.md").write_text(
        ENTRY.format(name="knob-beta", role="vector_width", title="Knob beta")
    )
    kdir = root / "kernels" / "knobby"
    kdir.mkdir(parents=True)
    (root / "kernels" / "__init__.py").write_text("")
    (kdir / "__init__.py").write_text("")
    (kdir / "spec.py").write_text(SPEC)
    (kdir / "triton_v1.py").write_text(VERSION)
    clear_cache()
    return root


def _run_once(
    root: Path,
    run_id: str,
    backend: type[StandInBackend] = StandInBackend,
    max_iterations: int = 1,
) -> cycle.Cycle:
    store = Store(root)
    spec = load_spec("knobby", root)
    run = cycle.start(
        root,
        kernel=spec,
        target="pct_of_floor>=99",
        start_version="triton_v1",
        backend=backend(root),
        designer=CatalogDesigner(root),
        designer_spec="catalog",
        configs=default_matrix(spec),
        store=store,
        max_iterations=max_iterations,
        counters="off",
        run_id=run_id,
    )
    run.run()
    return run


def test_learned_gain_changes_the_next_runs_ranking(tmp_path: Path) -> None:
    root = _learning_project(tmp_path)
    first = _run_once(root, "r1")
    a1 = first.record.attempts[0]
    # equal scores: the tie goes to knob-alpha, whose move (more warps) is slower here
    assert a1.optimization == "knob-alpha" and a1.status is AttemptStatus.ROLLED_BACK
    store = Store(root)
    alpha = store.get("knob-alpha")
    block = alpha.evidence[-1]
    # the evidence names the run, the version pair and the exact knob change
    assert "attempt 1" in block.source and "triton_v1 -> triton_v2" in block.source
    assert "num_warps 4 -> 8 (warps x2)" in block.source
    assert block.device == "test-gpu"
    # gain: running mean of the prior (30) and the measured -28.6% -> 0.7
    assert alpha.expected_gain_pct == pytest.approx((30 - 28.57) / 2, abs=0.1)
    assert store.get("knob-beta").evidence[-1].source == "a test"  # only the applied entry
    ranked = recommend(Profile.parse(first.record.baseline_profile), store=store)
    assert [o.id for o in ranked.opportunities][:2] == ["knob-beta", "knob-alpha"]
    second = _run_once(root, "r2")
    a2 = second.record.attempts[0]
    assert a2.optimization == "knob-beta" and a2.status is AttemptStatus.APPLIED
    assert "refined" not in a2.reason
    beta = Store(root).get("knob-beta")
    assert beta.expected_gain_pct == pytest.approx((30 + 35.71) / 2, abs=0.1)


def test_repeated_slowdowns_refute_the_entry(tmp_path: Path) -> None:
    root = _learning_project(tmp_path)
    store = Store(root)
    # a version where wider vectors cost more, and whose warps are at the largest value
    # (knob-alpha's move does not apply): knob-beta's move is tried, and slower, each run
    # each run starts from other knob values: a change an earlier run rolled back from the
    # same values is not tried again
    version = root / "kernels" / "knobby" / "triton_v1.py"
    text = VERSION.replace("400 / VECTORS", "100 * VECTORS").replace("WARPS = 4", "WARPS = 16")
    for i in range(3):
        version.write_text(text.replace("VECTORS = 2", f"VECTORS = {2**i}"))
        clear_cache()
        assert store.get("knob-beta").status.value == "validated"
        run = _run_once(root, f"f{i}")
        assert run.record.attempts[0].optimization == "knob-beta"
        assert run.record.attempts[0].status is AttemptStatus.ROLLED_BACK
    beta = Store(root).get("knob-beta")
    assert beta.status.value == "refuted" and beta.expected_gain_pct == 0
    # a refuted entry is never proposed: the next run has nothing to apply
    run = _run_once(root, "f3")
    assert run.record.attempts == [] and run.record.designer_blocked.startswith(NO_MOVE)


def test_a_change_an_earlier_run_rolled_back_is_not_paid_for_again(tmp_path: Path) -> None:
    root = _learning_project(tmp_path)
    first = _run_once(root, "m1")
    assert first.record.attempts[0].optimization == "knob-alpha"  # more warps: slower
    assert first.record.attempts[0].status is AttemptStatus.ROLLED_BACK
    # put knob-alpha back on top of the ranking: only the run's memory keeps it away now
    store = Store(root)
    alpha = store.get("knob-alpha").model_copy(deep=True)
    alpha.expected_gain_pct = 90
    store.update(alpha)
    second = _run_once(root, "m2")
    assert second.record.attempts[0].optimization == "knob-beta"
    # from other knob values the same entry's move is a new question
    version = root / "kernels" / "knobby" / "triton_v1.py"
    version.write_text(VERSION.replace("WARPS = 4", "WARPS = 2"))
    clear_cache()
    third = _run_once(root, "m3")
    assert third.record.attempts[0].optimization == "knob-alpha"


def test_record_evidence_refuses_a_missing_results_file_and_fake_figures(tmp_path: Path) -> None:
    from kbopt.agents import roles
    from kbopt.agents.remote import LocalExecutor
    from kbopt.agents.tools import ToolContext, call_tool

    root = _project(tmp_path)
    ctx = ToolContext(
        root=root, store=Store(root), executor=LocalExecutor(root), role=roles.ORCHESTRATOR
    )
    row = {"config": "b=1", "before": "10 us", "after": "8 us", "change": "-20%"}
    block = {
        "name": "split-kv-decode",
        "source_type": "local experiment",
        "source": "kernels/mla_decode/results/20990101T000000Z-NVIDIA-H200.json (rows v1, v2)",
        "device": "NVIDIA H200",
        "command": "kbopt bench mla_decode",
        "rows": [row],
    }
    before = len(Store(root).get("split-kv-decode").evidence)
    out = call_tool(ctx, "record_evidence", block)
    assert out.is_error and "does not exist" in out.content
    out = call_tool(ctx, "record_evidence", {**block, "source": "a run", "device": "fake-gpu"})
    assert out.is_error and "fake" in out.content
    results = root / "kernels/mla_decode/results/20990101T000000Z-NVIDIA-H200.json"
    results.parent.mkdir(parents=True)
    results.write_text("[]\n")
    out = call_tool(ctx, "record_evidence", block)
    assert not out.is_error, out.content
    assert len(Store(root).get("split-kv-decode").evidence) == before + 1


def test_only_a_runs_first_step_of_an_entry_refines_its_gain(tmp_path: Path) -> None:
    from kbopt.model import EvidenceBlock
    from kbopt.workflow.learn import first_step_per_run, refine_gain

    def block(run: str, attempt: int, change: str) -> EvidenceBlock:
        return EvidenceBlock.model_validate(
            {
                "source_type": "local experiment",
                "source": f"kbopt cycle run {run}, attempt {attempt} (knobby, backend real, "
                "catalog move): triton_v1 -> triton_v2, knob-alpha: num_warps 4 -> 8",
                "device": "NVIDIA H200",
                "versions": "triton 3.6.0",
                "date": "2026-12-03",
                "command": "kbopt profile knobby triton_v1 && kbopt profile knobby triton_v2",
                "rows": [{"config": "one", "before": "100 us", "after": "x", "change": change}],
            }
        )

    steps = [block("a", 1, "-20%"), block("a", 3, "+150%"), block("b", 1, "-10%")]
    assert first_step_per_run(steps) == [steps[0], steps[2]]
    root = _learning_project(tmp_path)
    store = Store(root)
    before = store.get("knob-alpha").expected_gain_pct
    store.append_evidence("knob-alpha", steps[0])
    assert "this one +20.0%" in refine_gain(store, "knob-alpha")
    first = Store(root).get("knob-alpha").expected_gain_pct
    assert first == pytest.approx(before + (20 - before) / 2, abs=0.05)
    # the same run walks the knob further and overshoots: recorded, but the gain stays
    store.append_evidence("knob-alpha", steps[1])
    assert refine_gain(store, "knob-alpha") == ""
    assert Store(root).get("knob-alpha").expected_gain_pct == first


def test_a_refined_gain_carries_its_impact_label(tmp_path: Path) -> None:
    """The label follows the refined gain (high from 20%, medium from 5%, low below), and the
    run record says when it changed; the bundled catalog keeps every refined label true."""
    from kbopt.model import EvidenceBlock
    from kbopt.store import Store as Catalog
    from kbopt.vocab import Kind, Level, impact_for_gain
    from kbopt.workflow.learn import CATALOG_MOVE, FULL_MOVE, refine_gain

    assert [impact_for_gain(g) for g in (0.4, 4.99, 5, 19.9, 20, 90)] == [
        Level.LOW, Level.LOW, Level.MEDIUM, Level.MEDIUM, Level.HIGH, Level.HIGH,
    ]  # fmt: skip
    root = _learning_project(tmp_path)
    store = Store(root)
    entry = store.get("knob-alpha")
    store.update(entry.model_copy(update={"impact": Level.HIGH, "expected_gain_pct": 30.0}))
    store.append_evidence(
        "knob-alpha",
        EvidenceBlock.model_validate(
            {
                "source_type": "local experiment",
                "source": "kbopt cycle run a, attempt 1 (knobby, backend real, catalog move): "
                "triton_v1 -> triton_v2, knob-alpha: num_warps 4 -> 8",
                "device": "NVIDIA H200",
                "versions": "triton 3.6.0",
                "date": "2026-12-03",
                "command": "kbopt profile knobby triton_v1 && kbopt profile knobby triton_v2",
                "rows": [{"config": "one", "before": "100 us", "after": "x", "change": "+5%"}],
            }
        ),
    )
    said = refine_gain(store, "knob-alpha")
    refined = Store(root).get("knob-alpha")
    assert refined.expected_gain_pct == pytest.approx(12.5, abs=0.05)  # (30 + -5) / 2
    assert refined.impact == Level.MEDIUM and "impact high -> medium" in said
    for e in Catalog(REPO).entries():
        moved = any(CATALOG_MOVE in b.source or FULL_MOVE in b.source for b in e.evidence)
        if e.kind == Kind.OPTIMIZATION and moved:
            assert e.impact == impact_for_gain(e.expected_gain_pct), e.name


def test_fired_anti_patterns_come_first_then_the_order_the_ranking_shows() -> None:
    from types import SimpleNamespace

    from kbopt.workflow.catalog_designer import ranked_moves_order

    def row(name: str, score: float) -> SimpleNamespace:
        return SimpleNamespace(to_dict=lambda: {"id": name, "score": score})

    # B outscores A by less than a tie, and the ranking shows A first (lower risk)
    strategy = SimpleNamespace(
        opportunities=[row("a", 0.490), row("b", 0.495), row("c", 0.300)],
        warnings=[row("w-low", 0.100), row("w-high", 0.400)],
    )
    order = [r["id"] for r in ranked_moves_order(strategy)]
    # every warning first, the higher score first, whatever the opportunities score
    assert order == ["w-high", "w-low", "a", "b", "c"]
    ranks = {
        r["id"]: r.get("rank") or f"warning {r['warning']}" for r in ranked_moves_order(strategy)
    }
    assert ranks == {"a": 1, "b": 2, "c": 3, "w-low": "warning 1", "w-high": "warning 2"}


def test_a_step_that_pushes_another_entrys_kept_change_further_does_not_refine(
    tmp_path: Path,
) -> None:
    from types import SimpleNamespace

    from kbopt.model import EvidenceBlock
    from kbopt.workflow.learn import CONTINUES, continued_change, first_step_per_run

    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    moves = {
        "1": {"before": {"block_h": 16}, "values": {"block_h": 32}},
        "2": {"before": {"num_warps": 4}, "values": {"num_warps": 8}},
        "3": {"before": {"block_h": 32}, "values": {"block_h": 64}},
        "4": {"before": {"block_h": 32}, "values": {"block_h": 16}},
    }
    (run / "catalog-moves.json").write_text(json.dumps(moves))

    def attempt(n: int, name: str, status: AttemptStatus) -> SimpleNamespace:
        return SimpleNamespace(iteration=n, optimization=name, status=status)

    attempts = [
        attempt(1, "entry-a", AttemptStatus.APPLIED),
        attempt(2, "entry-b", AttemptStatus.ROLLED_BACK),
        attempt(3, "entry-c", AttemptStatus.ROLLED_BACK),
        attempt(4, "entry-d", AttemptStatus.ROLLED_BACK),
    ]
    record = SimpleNamespace(run_id="r1", attempts=attempts)
    # entry-c doubles block_h again after entry-a's kept 16 -> 32: it continues that change
    note = continued_change(record, attempts[2], tmp_path)  # type: ignore[arg-type]
    assert note.startswith(f"{CONTINUES} 1 (block_h 16 -> 32, by entry-a)")
    # the first move, a different knob, and the opposite direction are the entries' own
    assert continued_change(record, attempts[0], tmp_path) == ""  # type: ignore[arg-type]
    assert continued_change(record, attempts[1], tmp_path) == ""  # type: ignore[arg-type]
    assert continued_change(record, attempts[3], tmp_path) == ""  # type: ignore[arg-type]
    # a block marked so is not one of the measurements that refine the entry's gain
    block = EvidenceBlock.model_validate(
        {
            "source_type": "local experiment",
            "source": f"kbopt cycle run r1, attempt 3 (k, backend real, catalog move): "
            f"triton_v2 -> triton_v3, entry-c: block_h 32 -> 64; {note}",
            "device": "NVIDIA H200",
            "versions": "triton 3.6.0",
            "date": "2026-12-03",
            "command": "kbopt profile k triton_v2 && kbopt profile k triton_v3",
            "rows": [{"config": "one", "before": "100 us", "after": "x", "change": "+150%"}],
        }
    )
    assert first_step_per_run([block]) == []


def test_a_launched_value_counts_only_where_every_configuration_agrees() -> None:
    """A knob left at None that launched as 16 warps at one shape and 32 at another is not
    the same version as num_warps=16: only launches equal at every configuration count."""
    from kbopt.workflow.catalog_designer import _launched

    got = _launched(
        {
            "decode": {"launched": {"num_warps": 16, "block_size": 4096}},
            "large": {"launched": {"num_warps": 32, "block_size": 4096}},
        }
    )
    assert got == {"block_size": 4096}
    assert _launched({}) == {}
    assert _launched({"decode": {"launched": {"num_warps": 8}}}) == {"num_warps": 8}


class RaisingNewVersionBackend(StandInBackend):
    """The starting version runs; every version the designer writes raises when called,
    as a tile that no longer fits shared memory does on the real backend."""

    def measure(self, spec, version, config, params=None):  # type: ignore[no-untyped-def]
        if version != "triton_v1":
            raise VersionFailed(f"{spec.name} {version}: the version raised OutOfResources")
        return super().measure(spec, version, config, params)


def test_a_designed_version_that_raises_is_a_failed_change_not_an_error(tmp_path: Path) -> None:
    root = _learning_project(tmp_path)
    spec = load_spec("knobby", root)
    run = _run_once(root, "raises", RaisingNewVersionBackend)
    (attempt,) = run.record.attempts
    assert attempt.status is AttemptStatus.ROLLED_BACK
    assert "does not run" in attempt.reason and "OutOfResources" in attempt.reason
    assert not spec.version_path(attempt.new_version).exists()


class FaultOnceBackend(StandInBackend):
    """The first version the designer writes faults as an illegal memory access does on a
    GPU: every later measurement in the same process fails the same way (CUDA's context is
    gone), while a fresh process measures normally. A file marks that the fault happened,
    since each measuring process starts with its own state."""

    def __init__(self, root: str) -> None:
        super().__init__(root)
        self.broken = False
        self.marker = Path(root) / "faulted-once"

    def measure(self, spec, version, config, params=None):  # type: ignore[no-untyped-def]
        if version != "triton_v1" and not self.marker.exists():
            self.marker.write_text(version)
            self.broken = True
        if self.broken:
            raise RuntimeError("CUDA error: an illegal memory access was encountered")
        return super().measure(spec, version, config, params)

    def device_usable(self) -> bool:
        return not self.broken


def test_a_designed_version_that_faults_fails_alone_when_measured_in_a_child(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`kbopt cycle` on a GPU measures in a child process (as ablate and tune do): the
    attempts after a faulting version are measured, not failed with its error."""
    from kbopt.bench import isolated

    here = _learning_project(tmp_path / "here")
    first, after = _run_once(here, "in-process", FaultOnceBackend, max_iterations=2).record.attempts
    assert "illegal memory access" in first.reason and "illegal memory access" in after.reason

    children: list[isolated.IsolatedBackend] = []

    class FaultOnceInAChild(isolated.IsolatedBackend):
        def __init__(self, root: Path | str) -> None:
            super().__init__(root, make=FaultOnceBackend)
            children.append(self)

    monkeypatch.setattr(isolated, "IsolatedBackend", FaultOnceInAChild)
    root = _learning_project(tmp_path / "apart")
    args = ["--root", str(root), "cycle", "knobby", "--designer", "catalog", "--backend", "real"]
    args += ["--from", "triton_v1", "--target", "pct_of_floor>=99", "--counters", "off"]
    assert main([*args, "--run-id", "apart", "--max-iterations", "2"]) == 0
    first, after = _record(root, "apart")["attempts"]
    assert first["status"] == AttemptStatus.ROLLED_BACK and isolated.LOST in first["reason"]
    assert after["status"] == AttemptStatus.APPLIED, after["reason"]
    (backend,) = children
    assert backend.restarts == 1 and backend._conn is None  # closed when the run ended
    events = [e["message"] for e in _record(root, "apart")["events"]]
    assert any("measuring process was replaced 1 time" in e for e in events)


def _knob_entries(base: Path, *moves: tuple[str, str, str]) -> None:
    """Catalog entries (name, knob role, change) that score alike: tried in name order."""
    for name, role, op in moves:
        text = ENTRY.format(name=name, role=role, title=name.replace("-", " ").capitalize())
        (base / f"{name}.md").write_text(text.replace('"x2"', f'"{op}"'))


PLATEAU_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
# wider vectors are faster (130 -> 100 us), twice again slower (115); half the warps next to
# them about as fast (102, kept within the limit); from there every move is slower or
# measured, and twice the warps of the fastest version is the best (81)
FAKE_DURATION_US = 44 - 6 * NUM_WARPS - 40 / NUM_WARPS + 10 * VECTORS + 200 / VECTORS
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def test_a_cycle_with_no_move_left_goes_on_from_its_fastest_version(tmp_path: Path) -> None:
    root = _learning_project(tmp_path)
    base = root / "docs" / "knowledge" / "optimizations"
    # equal scores, tried in name order: wider vectors, fewer warps, more warps
    _knob_entries(
        base,
        ("knob-alpha", "vector_width", "x2"),
        ("knob-beta", "warps", "/2"),
        ("knob-gamma", "warps", "x2"),
    )
    kdir = root / "kernels" / "knobby"
    (kdir / "spec.py").write_text(
        SPEC.replace("(1, 2, 4, 8, 16)", "(2, 4, 8)").replace("(1, 2, 4, 8)", "(2, 4, 8)")
    )
    (kdir / "triton_v1.py").write_text(PLATEAU_VERSION)
    clear_cache()
    spec = load_spec("knobby", root)
    run = _run_once(root, "plateau", max_iterations=8)
    record = run.record
    steps = [
        (a.optimization, a.status, spec.knob_values(a.from_version), a.changes_pct)
        for a in record.attempts
    ]
    assert [(name, status) for name, status, _, _ in steps] == [
        ("knob-alpha", AttemptStatus.APPLIED),  # wider vectors: 130 -> 100 us
        ("knob-alpha", AttemptStatus.ROLLED_BACK),  # wider again: 115 us
        ("knob-beta", AttemptStatus.APPLIED),  # half the warps: 102 us, within the limit
        ("knob-gamma", AttemptStatus.APPLIED),  # from the fastest: twice the warps, 81 us
        # nothing else open: wider again, rolled back from four warps, tried from eight
        ("knob-alpha", AttemptStatus.ROLLED_BACK),
        # nothing open from the fastest: back to the start, whose twice the warps was never
        # measured (111 us, more than the limit slower than the fastest)
        ("knob-gamma", AttemptStatus.ROLLED_BACK),
        # and on from there while a kept version has a move
        ("knob-beta", AttemptStatus.ROLLED_BACK),
    ], steps
    assert steps[4][2] == {"num_warps": 8, "vectors": 4}
    assert steps[5][2] == steps[6][2] == {"num_warps": 4, "vectors": 2}
    assert any(e.message.startswith("no catalog move left from") for e in record.events)
    # the fourth step was made from the fastest version (four warps), not the two-warp one,
    # and its change is measured against that version
    _, _, made_from, change = steps[3]
    assert made_from == {"num_warps": 4, "vectors": 4}
    assert change["one"] == pytest.approx((81 - 100) / 100 * 100, abs=0.1)
    assert any("going on from" in e.message for e in record.events)
    assert record.designer_blocked.startswith(NO_MOVE)  # then nothing was left anywhere


def _wider_or_fewer_project(tmp_path: Path, version: str) -> tuple[Path, Any]:
    """The knobby project with two entries of equal score (wider vectors, then half the
    warps) and `version` as its triton_v1: (root, spec)."""
    root = _learning_project(tmp_path)
    base = root / "docs" / "knowledge" / "optimizations"
    _knob_entries(base, ("knob-alpha", "vector_width", "x2"), ("knob-beta", "warps", "/2"))
    (root / "kernels" / "knobby" / "triton_v1.py").write_text(version)
    clear_cache()
    return root, load_spec("knobby", root)


BELOW_THE_BEST_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
# wider vectors are 3% slower (103 us, kept within the limit); half the warps of the
# starting vectors is the win (80 us), half the warps of the wider ones is not (123 us)
FAKE_DURATION_US = 10 * NUM_WARPS + 1.5 * VECTORS + 57 + 10 * (4 - NUM_WARPS) * (VECTORS - 2)
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def test_a_cycle_goes_on_from_its_fastest_version_after_keeping_a_slower_one(
    tmp_path: Path,
) -> None:
    """Wider vectors, 3% slower, are kept; the next design starts from the fastest version
    (the start), where half the warps wins, not from the slower one, which still had moves."""
    root, spec = _wider_or_fewer_project(tmp_path, BELOW_THE_BEST_VERSION)
    record = _run_once(root, "below", max_iterations=2).record
    first, second = record.attempts
    assert (first.optimization, first.status) == ("knob-alpha", AttemptStatus.APPLIED)
    assert first.changes_pct["one"] == pytest.approx(3.0, abs=0.1)
    assert second.from_version == "triton_v1"
    assert (second.optimization, second.status) == ("knob-beta", AttemptStatus.APPLIED)
    assert spec.knob_values(second.new_version) == {"num_warps": 2, "vectors": 2}
    assert any(
        e.message.startswith("going on from triton_v1") and first.new_version in e.message
        for e in record.events
    )


BACK_TO_THE_SLOWER_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
# wider vectors are 3% slower (103 us, kept); half the warps is 20% slower (rolled back);
# wider vectors again, from the slower version, are the win (70 us)
FAKE_DURATION_US = 100 + 10 * (4 - NUM_WARPS) - 1.625 * VECTORS * VECTORS + 11.25 * VECTORS - 16
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def test_a_cycle_goes_back_to_a_slower_kept_version_once_the_fastest_has_no_move(
    tmp_path: Path,
) -> None:
    """After the slower version was left for the fastest, and the fastest's last move was
    rolled back, the run goes back to the slower version, whose move still wins."""
    root, spec = _wider_or_fewer_project(tmp_path, BACK_TO_THE_SLOWER_VERSION)
    record = _run_once(root, "back", max_iterations=3).record
    steps = [(a.optimization, a.status, a.from_version) for a in record.attempts]
    slower = record.attempts[0].new_version
    assert steps == [
        ("knob-alpha", AttemptStatus.APPLIED, "triton_v1"),  # wider vectors: 103 us
        ("knob-beta", AttemptStatus.ROLLED_BACK, "triton_v1"),  # from the fastest: 120 us
        ("knob-alpha", AttemptStatus.APPLIED, slower),  # back there: wider again, 70 us
    ], steps
    assert spec.knob_values(record.attempts[2].new_version) == {"num_warps": 4, "vectors": 8}
    assert any(
        e.message.startswith(f"no catalog move left from triton_v1; going back to {slower}")
        for e in record.events
    )


PUSH_VERSION = """\
NUM_WARPS = 8
VECTORS = 2
# wider vectors change nothing (kept, found nothing); half the warps wins clearly twice
# (88 -> 56 -> 52 us), then loses (one warp: 74 us)
FAKE_DURATION_US = 10 * NUM_WARPS + 64 / NUM_WARPS + 0 * VECTORS
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def test_the_catalog_designer_pushes_a_clear_win_once_more(tmp_path: Path) -> None:
    """After half the warps won clearly, the next design halves them again although the
    ranking (name order at equal scores) puts wider vectors first; wider vectors, kept
    without a gain, are not tried again while another move is open."""
    root, spec = _wider_or_fewer_project(tmp_path, PUSH_VERSION)
    run = _run_once(root, "push", max_iterations=4)
    steps = [
        (a.optimization, a.status, spec.knob_values(a.from_version)["num_warps"])
        for a in run.record.attempts
    ]
    assert steps == [
        ("knob-alpha", AttemptStatus.APPLIED, 8),  # wider vectors: as fast, kept
        ("knob-beta", AttemptStatus.APPLIED, 8),  # half the warps: 88 -> 56 us
        ("knob-beta", AttemptStatus.APPLIED, 4),  # pushed on: 56 -> 52 us
        ("knob-beta", AttemptStatus.ROLLED_BACK, 2),  # once more: one warp, slower
    ], steps
    moves = json.loads((root / "runs" / "push" / "catalog-moves.json").read_text())
    assert moves["2"]["directions"] == [["num_warps", -1]]
    # each attempt keeps the rule that placed its move, and the rationale says it
    assert [moves[k]["momentum"] for k in ("1", "2", "3", "4")] == ["", "", "push on", "push on"]
    pushed = run.record.attempts[2].task
    assert "search rule 'push on': the last kept move was a clear win" in pushed, pushed
    assert "search rule" not in run.record.attempts[1].task


PAIRING_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
BLOCK = 256
# twice the block alone is slower (170 us), twice the block with twice the warps faster
# (90 us); at this block 100 us whatever the warps and vectors
FAKE_DURATION_US = 100 + (BLOCK / 256 - 1) * (150 - 20 * NUM_WARPS) + 0 * VECTORS
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def _pairing_project(tmp_path: Path) -> Path:
    root = _learning_project(tmp_path)
    base = root / "docs" / "knowledge" / "optimizations"
    _knob_entries(base, ("knob-alpha", "tile_n", "x2"), ("knob-beta", "vector_width", "x2"))
    kdir = root / "kernels" / "knobby"
    (kdir / "spec.py").write_text(
        SPEC.replace(
            '            Knob("vectors", "int", (1, 2, 4, 8), "vector_width"),\n',
            '            Knob("vectors", "int", (1, 2, 4, 8), "vector_width"),\n'
            '            Knob("block", "int", (128, 256, 512, 1024), "tile_n"),\n',
        )
    )
    (kdir / "triton_v1.py").write_text(PAIRING_VERSION)
    clear_cache()
    return root


def test_a_resize_rolled_back_is_designed_again_with_the_warps_alongside(tmp_path: Path) -> None:
    root = _pairing_project(tmp_path)
    spec = load_spec("knobby", root)
    assert [k.name for k in spec.knobs_for("triton_v1")] == ["num_warps", "vectors", "block"]
    run = _run_once(root, "pairing", max_iterations=2)
    steps = [(a.optimization, a.status) for a in run.record.attempts]
    assert steps == [
        ("knob-alpha", AttemptStatus.ROLLED_BACK),  # twice the block: 170 us
        ("knob-alpha", AttemptStatus.APPLIED),  # with twice the warps: 90 us
    ], steps
    best = spec.knob_values(run.record.attempts[-1].new_version)
    assert (best["block"], best["num_warps"]) == (512, 8)
    moves = json.loads((root / "runs" / "pairing" / "catalog-moves.json").read_text())
    assert moves["1"]["paired"] is False and moves["2"]["paired"] is True
    assert "warps scaled alike" in run.record.attempts[-1].task


REOPEN_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
# wider vectors alone are slower (130 us), twice the warps a little faster (98); both
# together the fastest (80); every other setting slower than 100 (x: vectors, y: warps)
FAKE_DURATION_US = (
    100 + 30 * (VECTORS / 2 - 1) - 2 * (NUM_WARPS / 4 - 1)
    - 48 * (VECTORS / 2 - 1) * (NUM_WARPS / 4 - 1)
    + 5 * (NUM_WARPS / 4 - 1) * (NUM_WARPS / 4 - 2)
    + 20 * (VECTORS / 2 - 1) * (NUM_WARPS / 4 - 1) * (NUM_WARPS / 4 - 2)
    + 40 * (VECTORS / 2 - 1) * (VECTORS / 2 - 2)
)
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def test_with_no_other_move_open_a_change_rolled_back_elsewhere_is_tried_again(
    tmp_path: Path,
) -> None:
    """Wider vectors lose from the start and win once the warps are doubled: when nothing
    else is open from the fastest version, the designer measures them again from there
    instead of stopping."""
    root = _learning_project(tmp_path)
    base = root / "docs" / "knowledge" / "optimizations"
    _knob_entries(base, ("knob-alpha", "vector_width", "x2"), ("knob-beta", "warps", "x2"))
    (root / "kernels" / "knobby" / "triton_v1.py").write_text(REOPEN_VERSION)
    clear_cache()
    spec = load_spec("knobby", root)
    run = _run_once(root, "reopen", max_iterations=5)
    steps = [
        (a.optimization, a.status, tuple(spec.knob_values(a.from_version).values()))
        for a in run.record.attempts
    ]
    assert steps[0] == ("knob-alpha", AttemptStatus.ROLLED_BACK, (4, 2)), steps
    assert steps[1] == ("knob-beta", AttemptStatus.APPLIED, (4, 2)), steps
    again = [s for s in steps[2:] if s[0] == "knob-alpha"]
    assert again and again[0][1] is AttemptStatus.APPLIED and again[0][2] == (8, 2), steps
    reopened = next(a for a in run.record.attempts[2:] if a.optimization == "knob-alpha")
    assert "measured slower from other knob values in this run" in reopened.task
    best = spec.knob_values(reopened.new_version)
    assert (best["num_warps"], best["vectors"]) == (8, 4)


def _recorded_run(*moves: tuple[str, bool]) -> dict[str, Any]:
    """A real-device ablation results file whose catalog arm made `moves` (text, whether
    it beat the best so far) in that order."""
    trajectory = [{"n": 1, "status": "ok", "duration_us": 100.0, "move": ""}]
    best = 100.0
    for n, (move, advanced) in enumerate(moves, start=2):
        best = best - 2.0 if advanced else best
        us = best if advanced else 200.0
        trajectory.append({"n": n, "status": "ok", "duration_us": us, "move": move})
    return {
        "kind": "kbopt-ablation",
        "fake": False,
        "kernel": "another",
        "config": {"name": "c"},
        "rows": [{"arm": "catalog", "trajectory": trajectory}],
    }


def test_the_warps_alongside_wait_behind_moves_with_a_better_record(tmp_path: Path) -> None:
    """The project's ablations say the pairing rarely paid and knob-beta's move often did:
    after the resize is rolled back, knob-beta's move comes before the pair."""
    root = _pairing_project(tmp_path)
    alpha = "#1 knob-alpha: block 256 -> 512 (tile_n x2)"
    beta = "#2 knob-beta: vectors 2 -> 4 (vector_width x2)"
    pair = (
        "#1 knob-alpha, warps alongside: block 256 -> 512 (tile_n x2), num_warps 4 -> 8 (warps x2)"
    )
    doc = _recorded_run(
        *[(alpha, True)] * 6, *[(beta, True)] * 3, (beta, False), *[(pair, False)] * 6
    )
    (root / "results" / "ablation").mkdir(parents=True)
    (root / "results" / "ablation" / "run.json").write_text(json.dumps(doc))
    run = _run_once(root, "pairing-recorded", max_iterations=2)
    steps = [a.optimization for a in run.record.attempts]
    assert steps == ["knob-alpha", "knob-beta"], steps
    moves = json.loads((root / "runs" / "pairing-recorded" / "catalog-moves.json").read_text())
    assert moves["2"]["paired"] is False


REVERSE_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
# twice the warps is much slower (140 us), half the warps faster (80 us); the vectors
# change nothing
FAKE_DURATION_US = 60 + 10 * NUM_WARPS + 0 * VECTORS
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


def test_after_a_clear_loss_the_catalog_designer_goes_the_other_way(tmp_path: Path) -> None:
    """Twice the warps, ranked first, was rolled back 40% slower: the next design halves
    the warps although the ranking (name order at equal scores) puts wider vectors next."""
    root = _learning_project(tmp_path)
    base = root / "docs" / "knowledge" / "optimizations"
    _knob_entries(
        base,
        ("knob-alpha", "warps", "x2"),
        ("knob-beta", "vector_width", "x2"),
        ("knob-gamma", "warps", "/2"),
    )
    (root / "kernels" / "knobby" / "triton_v1.py").write_text(REVERSE_VERSION)
    clear_cache()
    spec = load_spec("knobby", root)
    run = _run_once(root, "reverse", max_iterations=2)
    steps = [(a.optimization, a.status) for a in run.record.attempts]
    assert steps == [
        ("knob-alpha", AttemptStatus.ROLLED_BACK),  # twice the warps: 140 us
        ("knob-gamma", AttemptStatus.APPLIED),  # the other way: 80 us
    ], steps
    assert spec.knob_values(run.record.attempts[-1].new_version)["num_warps"] == 2


def test_the_designer_says_what_the_chosen_move_found_in_earlier_ablations(
    tmp_path: Path,
) -> None:
    root = _project(tmp_path, "mla_decode")
    assert _cycle(root, "mla_decode", "triton_v2", "c1", "--max-iterations", "1") == 0
    chosen = json.loads((root / "runs" / "c1" / "catalog-moves.json").read_text())["1"]
    assert "measured ablations this move" not in json.dumps(_record(root, "c1"))
    # a real ablation run in which that very move beat its arm's best so far
    move = f"#1 {chosen['entry']}: {', '.join(chosen['changes'])}"
    trajectory = [
        {"n": 1, "status": "ok", "duration_us": 100.0, "move": ""},
        {"n": 2, "status": "ok", "duration_us": 80.0, "move": move},
    ]
    doc = {
        "kind": "kbopt-ablation",
        "fake": False,
        "kernel": "another_kernel",
        "config": {"name": "large"},
        "rows": [{"arm": "catalog", "trajectory": trajectory}],
    }
    (root / "results" / "ablation").mkdir(parents=True)
    (root / "results" / "ablation" / "run.json").write_text(json.dumps(doc))
    assert _cycle(root, "mla_decode", "triton_v2", "c2", "--max-iterations", "1") == 0
    again = json.loads((root / "runs" / "c2" / "catalog-moves.json").read_text())["1"]
    assert again["entry"] == chosen["entry"]
    said = "in this project's measured ablations this move beat the search's best so far in 1 of 1"
    assert said in json.dumps(_record(root, "c2"))


REFIT_VERSION = """\
NUM_WARPS = 4
VECTORS = 2
BLOCK = 256
STAGES = 2
# twice the block is faster (70 us) but needs one stage fewer to fit (SharedMemoryBound)
FAKE_DURATION_US = 100 - (BLOCK / 256 - 1) * 30 + 0 * (NUM_WARPS + VECTORS + STAGES)
FAKE_FLOOR_US = 10
FAKE_TIMING_METRICS = {"dram_throughput_pct": 40.0}


def knobby(x):
    return x
"""


class SharedMemoryBound(StandInBackend):
    """A 512-wide block fits in shared memory only at one pipeline stage: at two the launch
    fails as Triton's does when a kernel needs more than an SM has."""

    def measure(self, spec, version, config, params=None):  # type: ignore[no-untyped-def]
        values = spec.knob_values(version)
        if values.get("block") == 512 and values.get("stages", 1) >= 2:
            raise RuntimeError(
                "OutOfResources: out of resource: shared memory, Required: 294944, "
                "Hardware limit: 232448"
            )
        return super().measure(spec, version, config, params)


def test_a_grown_tile_out_of_shared_memory_is_designed_again_with_one_stage_fewer(
    tmp_path: Path,
) -> None:
    root = _pairing_project(tmp_path)
    kdir = root / "kernels" / "knobby"
    spec_text = (kdir / "spec.py").read_text()
    (kdir / "spec.py").write_text(
        spec_text.replace(
            '            Knob("block", "int", (128, 256, 512, 1024), "tile_n"),\n',
            '            Knob("block", "int", (128, 256, 512, 1024), "tile_n"),\n'
            '            Knob("stages", "int", (1, 2, 3), "pipeline_stages"),\n',
        )
    )
    (kdir / "triton_v1.py").write_text(REFIT_VERSION)
    clear_cache()
    spec = load_spec("knobby", root)
    assert "stages" in [k.name for k in spec.knobs_for("triton_v1")]
    run = _run_once(root, "refit", backend=SharedMemoryBound, max_iterations=2)
    steps = [(a.optimization, a.status) for a in run.record.attempts]
    assert steps == [
        ("knob-alpha", AttemptStatus.ROLLED_BACK),  # 512 wide at two stages: no fit
        ("knob-alpha", AttemptStatus.APPLIED),  # 512 wide at one stage: 70 us
    ], steps
    assert "shared memory" in run.record.attempts[0].reason
    best = spec.knob_values(run.record.attempts[-1].new_version)
    assert (best["block"], best["stages"]) == (512, 1)
    moves = json.loads((root / "runs" / "refit" / "catalog-moves.json").read_text())
    assert moves["1"]["refit"] is False and moves["2"]["refit"] is True
    assert "one pipeline stage fewer" in run.record.attempts[-1].task
