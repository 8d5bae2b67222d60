"""Catalog moves: parsing and validation in entries, and applying them to a spec's knobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.errors import ProblemList
from kbopt.kernel import Knob
from kbopt.model import Move
from kbopt.moves import NotApplicable, PlannedMove, plan_move
from kbopt.store import Store
from kbopt.template import parse_entry, render_entry

ROOT = Path(__file__).resolve().parents[1]
SPLIT_KV = ROOT / "docs/knowledge/optimizations/split-kv-decode.md"

MLA_KNOBS = (
    Knob("block_m", "int", (16, 32, 64, 128), "rows_per_program"),
    Knob("block_n", "int", (16, 32, 64, 128), "kv_tile"),
    Knob("num_warps", "int", (4, 8, 16), "warps"),
    Knob("num_stages", "int", (1, 2, 3, 4), "pipeline_stages"),
    Knob("splits", "int", (None, 1, 2, 4, 8, 16, 32, 64), "splits"),
    Knob("use_tma", "bool", (False, True), "tma"),
)


def _with_moves(block: str) -> str:
    text = SPLIT_KV.read_text(encoding="utf-8")
    start = text.index("moves:")
    end = text.index("---", start)
    return text[:start] + block + text[end:]


def test_every_entry_with_moves_renders_to_itself() -> None:
    store = Store(ROOT)
    with_moves = 0
    for path in store.entry_files():
        entry = store.read_file(path)
        if entry.moves:
            with_moves += 1
            assert render_entry(entry) == path.read_text(encoding="utf-8"), path
    assert with_moves >= 10


@pytest.mark.parametrize(
    ("block", "message"),
    [
        ('moves:\n  - change: {kv_tiles: "x2"}\n', "unknown knob role 'kv_tiles'"),
        ("moves:\n  - change: {kv_tile: 2}\n", 'write "=2" to set the value'),
        ("moves:\n  - change: {kv_tile: +1}\n", "ambiguous"),
        ('moves:\n  - change: {tma: "x2"}\n', "tma is a flag role"),
        ('moves:\n  - change: {kv_tile: "sideways"}\n', "unknown operation 'sideways'"),
        ('moves:\n  - change: {warps: "one_wave"}\n', "one_wave applies to the splits role only"),
        (
            'moves:\n  - change: {splits: "one_wave"}\n    when: ["ctas_per_sm <> 1"]\n',
            "is not `metric op number`",
        ),
        (
            'moves:\n  - change: {splits: "one_wave"}\n    when: ["ctas_per_sn < 1"]\n',
            "unknown metric 'ctas_per_sn'",
        ),
        ("moves:\n  - change: {}\n", "moves.0.change"),
        ('moves:\n  - change: {splits: "up"}\n    because: x\n', "moves.0.because"),
    ],
)
def test_bad_moves_are_refused_with_the_line(block: str, message: str) -> None:
    text = _with_moves(block)
    line = text.splitlines().index("moves:") + 1
    with pytest.raises(ProblemList) as err:
        parse_entry(text, name="split-kv-decode", path="x.md")
    shown = str(err.value)
    assert message in shown
    assert f"x.md:{line}:" in shown


def _plan(change: dict, values: dict, metrics: dict | None = None, when: list | None = None):
    return plan_move(Move(change=change, when=when or []), MLA_KNOBS, values, metrics or {})


V2 = {"block_m": 64, "block_n": 32, "num_warps": 8, "num_stages": 1, "splits": 1}


def test_wider_tile_over_deeper_pipeline_changes_both_knobs() -> None:
    planned = _plan({"kv_tile": "x2", "pipeline_stages": "-1"}, {**V2, "num_stages": 3})
    assert isinstance(planned, PlannedMove)
    assert planned.values == {"block_n": 64, "num_stages": 2}
    assert "block_n 32 -> 64" in planned.text()


def test_a_move_that_changes_only_part_is_not_applicable() -> None:
    # num_stages is already the smallest: the trade the entry describes cannot happen.
    out = _plan({"kv_tile": "x2", "pipeline_stages": "-1"}, V2)
    assert isinstance(out, NotApplicable) and "smallest" in out.reason


def test_a_role_shared_by_two_launches_moves_the_knob_that_can_move() -> None:
    # SGLang's solve_tril: a one-warp serial launch and a four-warp merge, both `warps`.
    knobs = [
        Knob("diag_warps", "int", (None, 1, 2, 4), "warps"),
        Knob("merge_warps", "int", (None, 1, 2, 4, 8), "warps"),
    ]
    values = {"diag_warps": 1, "merge_warps": 4}
    fewer = plan_move(Move.model_validate({"change": {"warps": "/2"}}), knobs, values, {})
    assert isinstance(fewer, PlannedMove) and fewer.values == {"merge_warps": 2}
    more = plan_move(Move.model_validate({"change": {"warps": "x2"}}), knobs, values, {})
    assert isinstance(more, PlannedMove)
    assert more.values == {"diag_warps": 2, "merge_warps": 8}
    floor = {"diag_warps": 1, "merge_warps": 1}
    none = plan_move(Move.model_validate({"change": {"warps": "/2"}}), knobs, floor, {})
    assert isinstance(none, NotApplicable) and "diag_warps" in none.reason


def test_values_are_clamped_to_the_allowed_ones() -> None:
    assert _plan({"kv_tile": "x4"}, {**V2, "block_n": 64}).values == {"block_n": 128}
    assert isinstance(_plan({"kv_tile": "x2"}, {**V2, "block_n": 128}), NotApplicable)
    assert _plan({"pipeline_stages": "+1"}, V2).values == {"num_stages": 2}
    assert _plan({"warps": "up"}, V2).values == {"num_warps": 16}


def test_one_wave_uses_ctas_per_sm_or_lets_the_kernel_choose() -> None:
    # 64 CTAs on 132 SMs: 0.48 per SM -> at least 2.06x more -> 4 splits (allowed values)
    assert _plan({"splits": "one_wave"}, V2, {"ctas_per_sm": 0.485}).values == {"splits": 4}
    assert _plan({"splits": "one_wave"}, V2).values == {"splits": None}
    out = _plan({"splits": "one_wave"}, {**V2, "splits": None})
    assert isinstance(out, NotApplicable)
    assert isinstance(_plan({"splits": "one_wave"}, V2, {"ctas_per_sm": 1.5}), NotApplicable)


def test_one_wave_comes_down_when_the_grid_already_fills_more() -> None:
    # 16 splits giving 4 CTAs per SM: 4 splits still fill one wave
    assert _plan({"splits": "one_wave"}, {**V2, "splits": 16}, {"ctas_per_sm": 4.0}).values == {
        "splits": 4
    }
    # 8 splits over a grid of 15.5 CTAs per SM: the (batch, head group) grid alone fills it
    assert _plan({"splits": "one_wave"}, {**V2, "splits": 8}, {"ctas_per_sm": 15.5}).values == {
        "splits": 1
    }
    # 2 splits at 1.5 per SM: one split would leave SMs idle
    out = _plan({"splits": "one_wave"}, {**V2, "splits": 2}, {"ctas_per_sm": 1.5})
    assert isinstance(out, NotApplicable) and "fewest" in out.reason


def test_preconditions_block_only_when_measured_and_false() -> None:
    when = ["shared_mem_per_block_kb < 100"]
    out = _plan({"pipeline_stages": "+1"}, V2, {"shared_mem_per_block_kb": 180.0}, when)
    assert isinstance(out, NotApplicable) and "precondition" in out.reason
    planned = _plan({"pipeline_stages": "+1"}, V2, {}, when)
    assert isinstance(planned, PlannedMove) and planned.unchecked == when


def test_a_relaxed_plan_passes_over_failing_preconditions_and_says_which() -> None:
    when = ["shared_mem_per_block_kb < 100"]
    metrics = {"shared_mem_per_block_kb": 180.0}
    move = Move(change={"pipeline_stages": "+1"}, when=when)
    planned = plan_move(move, MLA_KNOBS, V2, metrics, relax=True)
    assert isinstance(planned, PlannedMove) and planned.values == {"num_stages": 2}
    assert planned.relaxed == ["shared_mem_per_block_kb < 100 (shared_mem_per_block_kb=180)"]
    assert "preconditions not met" in planned.text()
    # a precondition on a dimension the kernel lacks: tried only when relaxed, and after
    # every measured miss (a scan whose only knob is its warps has no other move)
    row_move = Move(change={"warps": "x2"}, when=["row_len >= 16384"])
    assert isinstance(plan_move(row_move, MLA_KNOBS, V2, {}), NotApplicable)
    out = plan_move(row_move, MLA_KNOBS, V2, {}, relax=True)
    assert isinstance(out, PlannedMove)
    assert out.relaxed == ["row_len >= 16384 (the kernel has no row_len)"]
    assert out.miss > planned.miss


def test_flags_and_unknown_values() -> None:
    assert _plan({"tma": True}, V2).values == {"use_tma": True}  # not set: default unknown
    assert isinstance(_plan({"tma": True}, {**V2, "use_tma": True}), NotApplicable)
    # arithmetic on a value the version leaves to the kernel (None) or does not set
    assert isinstance(_plan({"splits": "x2"}, {**V2, "splits": None}), NotApplicable)
    assert isinstance(_plan({"warps": "x2"}, {"block_m": 64}), NotApplicable)
    assert isinstance(_plan({"heads_per_program": "x2"}, V2), NotApplicable)  # no such knob


def test_a_precondition_on_a_dimension_the_kernel_lacks_does_not_hold() -> None:
    # row_len is a kernel dimension: an attention kernel has none, the move is for rows
    out = _plan({"warps": "x2"}, V2, {}, when=["row_len >= 16384"])
    assert isinstance(out, NotApplicable) and "no row_len" in out.reason
    # a measured metric the profile lacks (no counters) stays an unchecked precondition
    planned = _plan({"warps": "x2"}, V2, {}, when=["stall_barrier_pct >= 10"])
    assert isinstance(planned, PlannedMove) and planned.unchecked == ["stall_barrier_pct >= 10"]


def test_the_same_change_has_the_same_signature_from_anywhere() -> None:
    a = _plan({"warps": "x2"}, V2)
    b = _plan({"warps": "x2"}, {**V2, "block_n": 64, "splits": 4})
    c = _plan({"warps": "x2"}, {**V2, "num_warps": 4})
    assert isinstance(a, PlannedMove) and isinstance(b, PlannedMove) and isinstance(c, PlannedMove)
    assert a.signature == b.signature == frozenset({("num_warps", "8", "16")})
    assert c.signature != a.signature
    # a move recorded in a run's state (before / after values) reads back the same
    from kbopt.moves import change_signature

    assert change_signature({"num_warps": 8}, {"num_warps": 16}) == a.signature


def test_a_knob_left_to_the_kernel_is_scaled_from_what_it_launched_with() -> None:
    left = {**V2, "splits": None}
    assert isinstance(_plan({"splits": "x2"}, left), NotApplicable)  # nothing to scale
    planned = plan_move(Move(change={"splits": "x2"}), MLA_KNOBS, left, {}, {"splits": 4})
    assert isinstance(planned, PlannedMove) and planned.values == {"splits": 8}
    assert "splits None (launched as 4) -> 8" in planned.text()
    # a recorded value is only used for a knob the version leaves at None
    planned = plan_move(Move(change={"warps": "x2"}), MLA_KNOBS, V2, {}, {"num_warps": 2})
    assert isinstance(planned, PlannedMove) and planned.values == {"num_warps": 16}
    # non-numbers recorded by a launch are not scaled
    out = plan_move(Move(change={"splits": "x2"}), MLA_KNOBS, left, {}, {"splits": "auto"})
    assert isinstance(out, NotApplicable)


def test_measurements_keep_what_the_launch_recorded() -> None:
    from kbopt.bench.backend import Measurement
    from kbopt.bench.trials import TrialConfig

    m = Measurement(
        "k", "v", TrialConfig.from_dict({"name": "c", "dims": {"n": 1}}), 1.0, True,
        launched={"num_warps": 8, "block_size": 4096},
    )  # fmt: skip
    assert Measurement.from_dict(m.as_dict()).launched == {"num_warps": 8, "block_size": 4096}
    old = m.as_dict()
    del old["launched"]  # results written before the field existed
    assert Measurement.from_dict(old).launched == {}


def test_a_row_tile_is_not_widened_past_the_row() -> None:
    # The tile already spans the row: a wider one only adds masked lanes.
    knobs = [Knob("BLOCK_SIZE", "int", (None, 1024, 2048, 4096, 8192, 16384, 32768), "tile_n")]
    move = Move(change={"tile_n": "x2"})
    covered = plan_move(move, knobs, {"BLOCK_SIZE": 8192}, {"row_len": 8192.0})
    assert isinstance(covered, NotApplicable) and "already covers row_len" in covered.reason
    launched = plan_move(
        move, knobs, {"BLOCK_SIZE": None}, {"row_len": 8000.0}, {"BLOCK_SIZE": 8192}
    )
    assert isinstance(launched, NotApplicable)
    shorter = plan_move(move, knobs, {"BLOCK_SIZE": 4096}, {"row_len": 8192.0})
    assert not isinstance(shorter, NotApplicable)
    assert shorter.values == {"BLOCK_SIZE": 8192}
    # narrowing is never refused for it, and kernels without rows are not concerned
    narrow = plan_move(
        Move(change={"tile_n": "/2"}), knobs, {"BLOCK_SIZE": 8192}, {"row_len": 8192.0}
    )
    assert not isinstance(narrow, NotApplicable)
    assert not isinstance(plan_move(move, knobs, {"BLOCK_SIZE": 8192}, {}), NotApplicable)


def test_an_output_tile_is_not_made_taller_than_the_rows() -> None:
    # The tutorial matmul at 64 rows: a 128-row tile already covers them, 256 adds masked rows.
    knobs = [Knob("BLOCK_SIZE_M", "int", (32, 64, 128, 256), "tile_m")]
    move = Move(change={"tile_m": "x2"})
    taller = plan_move(move, knobs, {"BLOCK_SIZE_M": 128}, {"rows": 64.0})
    assert isinstance(taller, NotApplicable) and "already covers rows" in taller.reason
    fits = plan_move(move, knobs, {"BLOCK_SIZE_M": 32}, {"rows": 64.0})
    assert not isinstance(fits, NotApplicable) and fits.values == {"BLOCK_SIZE_M": 64}


def test_grouped_tile_order_doubles_the_group_only_when_operands_are_re_read() -> None:
    # The L2-grouping entry acts on a spec's `grouping` knob (the tutorial matmul's
    # GROUP_SIZE_M), and only while DRAM reads are well above one pass over the operands.
    entry = Store(ROOT).get("group-output-tiles-for-l2-reuse")
    (move,) = entry.moves
    knobs = [
        Knob("block_size_m", "int", (64, 128), "tile_m"),
        Knob("group_size_m", "int", (1, 2, 4, 8, 16, 32), "grouping"),
    ]
    values = {"block_size_m": 128, "group_size_m": 8}
    planned = plan_move(move, knobs, values, {"dram_bytes_ratio": 2.1})
    assert isinstance(planned, PlannedMove) and planned.values == {"group_size_m": 16}
    held = plan_move(move, knobs, values, {"dram_bytes_ratio": 1.05})
    assert isinstance(held, NotApplicable) and "dram_bytes_ratio" in held.reason


def test_a_persistent_grid_of_one_program_per_sm_gets_twice_the_programs() -> None:
    """FlagGems' masked_select launches one 16-warp program per SM (both knobs left to the
    kernel, the launch records them): the entry's first move doubles the programs and
    halves the warps, scaled from what was launched; a grid that does not fill the SMs
    (a decode step's 64 programs) is not its case."""
    entry = Store(ROOT).get("several-programs-per-sm-not-one")
    knobs = (
        Knob("block_size", "int", (None, 512, 1024, 2048, 4096, 8192, 16384), "tile_n"),
        Knob("num_warps", "int", (None, 2, 4, 8, 16, 32), "warps"),
        Knob("programs", "int", (None, 33, 66, 132, 264, 528, 1056), "occupancy"),
    )
    values = {"block_size": None, "num_warps": None, "programs": None}
    launched = {"block_size": 4096, "num_warps": 16, "programs": 132}
    first, second = entry.moves
    planned = plan_move(first, knobs, values, {"ctas_per_sm": 1.0}, launched)
    assert isinstance(planned, PlannedMove)
    assert {c.knob: c.after for c in planned.changes} == {"num_warps": 8, "programs": 264}
    # registers allow one program per SM: only the move that halves the warps applies
    metrics = {"ctas_per_sm": 1.0, "occupancy_limit_registers": 1.0}
    assert isinstance(plan_move(second, knobs, values, metrics, launched), NotApplicable)
    small = plan_move(first, knobs, values, {"ctas_per_sm": 0.48}, launched)
    assert isinstance(small, NotApplicable)
    # a GEMM tile loop at 200 registers a thread: half the warps would double that
    gemm = plan_move(
        first, knobs, values, {"ctas_per_sm": 1.0, "registers_per_thread": 200}, launched
    )
    assert isinstance(gemm, NotApplicable)
    lean = plan_move(
        first, knobs, values, {"ctas_per_sm": 1.0, "registers_per_thread": 40}, launched
    )
    assert isinstance(lean, PlannedMove)
    defining = {t.expression for t in entry.triggers if t.defining}
    assert defining == {"ctas_per_sm >= 0.9", "ctas_per_sm <= 1.5"}


def test_twice_the_warps_for_the_register_budget_needs_a_start_that_spills() -> None:
    """Measured in the committed ablations (scripts/move_outcomes.py): the move beat the
    search's best on 10 of 18 trials from starts spilling 512 bytes a thread or more, on 1
    of 31 from starts spilling less and on 23 of 336 from ones that did not; so 255
    registers without spills (an attention tile loop), or a few spilled values, is not its
    case."""
    (move,) = Store(ROOT).get("triton-register-budget-num-warps-maxnreg").moves
    knobs = (Knob("num_warps", "int", (None, 2, 4, 8, 16), "warps"),)
    values, launched = {"num_warps": None}, {"num_warps": 8}
    held = {"registers_per_thread": 255.0, "spill_bytes_per_thread": 0.0}
    assert isinstance(plan_move(move, knobs, values, held, launched), NotApplicable)
    few = {"registers_per_thread": 255.0, "spill_bytes_per_thread": 104.0}
    assert isinstance(plan_move(move, knobs, values, few, launched), NotApplicable)
    spilling = {"registers_per_thread": 255.0, "spill_bytes_per_thread": 648.0}
    planned = plan_move(move, knobs, values, spilling, launched)
    assert isinstance(planned, PlannedMove) and planned.values == {"num_warps": 16}


def test_a_value_recorded_under_the_role_s_name_is_the_knob_s_when_it_is_the_only_one() -> None:
    from kbopt.moves import launched_by_knob

    knobs = [
        Knob("num_kv_splits", "int", (None, 2, 4, 8, 16), "splits"),
        Knob("block_n", "int", (None, 32, 64), "kv_tile"),
        Knob("stage1_warps", "int", (None, 1, 2, 4), "warps"),
        Knob("merge_warps", "int", (None, 1, 2, 4), "warps"),
        Knob("stages", "int", (None, 1, 2, 3), "pipeline_stages"),
    ]
    recorded = {"splits": 8, "block_n": 32, "num_warps": 1, "num_stages": 2}
    got = launched_by_knob(knobs, recorded)
    # a wrapper's split count recorded as `splits`, Triton's stages as `num_stages`
    assert got["num_kv_splits"] == 8 and got["stages"] == 2
    # two knobs of the warps role: the recorded warps belong to one launch, not known which
    assert "stage1_warps" not in got and "merge_warps" not in got
    assert {k: got[k] for k in recorded} == recorded  # what was recorded stays as it was
    # a move on the split knob is then planned from the value the kernel launched with
    move = Move(change={"splits": "x2"})
    planned = plan_move(move, knobs, {"num_kv_splits": None}, {}, got)
    assert isinstance(planned, PlannedMove) and planned.values == {"num_kv_splits": 16}
    refused = plan_move(move, knobs, {"num_kv_splits": None}, {}, recorded)
    assert isinstance(refused, NotApplicable)
