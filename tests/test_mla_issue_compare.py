"""scripts/mla_issue_compare.py reads the recorded ncu sources (FlashMLA's profile, the CuTe
sessions' CSVs and launch sidecars) and relates each kernel's issue time to FlashMLA's."""

from __future__ import annotations

from script_module import load_script


def _script():  # type: ignore[no-untyped-def]
    return load_script("mla_issue_compare")


def test_issue_time_is_duration_times_issue_share() -> None:
    r = _script().row("v", "decode", 100.0, 25.0, "src")
    assert r["issue_time_us"] == 25.0 and r["source"] == "src"


def test_the_recorded_sessions_give_a_row_per_version_and_configuration() -> None:
    mod = _script()
    rows = [mod.flashmla_row(c, f) for c, f in mod.FLASHMLA.items()]
    for s in mod.SESSIONS:
        rows += mod.session_rows(s)
    keys = {(r["version"], r["config"]) for r in rows}
    assert {("flashmla", "speculative"), ("cute_v7", "speculative"), ("cute_v13", "decode")} <= keys
    assert all(r["duration_us"] > 0 and 0 < r["issue_slot_util_pct"] < 100 for r in rows)
