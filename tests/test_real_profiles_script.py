"""scripts/real_profiles.py: a profile measured with a wrongly shortened kernel name still
becomes a labelled-set profile that parses, its stage names re-derived from the JSON."""

from __future__ import annotations

import json
from pathlib import Path

from script_module import load_script

from kbopt.contracts.profile import Profile

REPO = Path(__file__).resolve().parent.parent


def _script():  # type: ignore[no-untyped-def]
    return load_script("real_profiles")


SORT = "void ns::SortKernel<ns::policy<float>, 1, unnamed>::offset_t, ns::decomposer_t>(float *)"
TEXT = """## Profile: k v1 | rows=8
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| decomposer_t<policy> | 300.5 us | 0% | 49% | 35% | Latency | long scoreboard stalls |
| decomposer_t<policy> | 200.25 us | 0% | 50% | 35% | Latency | long scoreboard stalls |
| other 2 launches | 10 us | - | - | - |  | timed only |
| total | 520 us | 0% | 50% | 35% | Latency | long scoreboard stalls |
### Metrics
| Metric | Value |
|--------|-------|
| duration_us | 520 |
### Bottleneck: Latency-bound
Root cause: stalls.
"""


def test_duplicate_stage_names_are_renamed_from_the_recorded_kernels(tmp_path: Path) -> None:
    mod = _script()
    kernels = [
        {"name": SORT, "metrics": {"duration_us": 200.25}},
        {"name": SORT, "metrics": {"duration_us": 300.5}},
    ]
    text, changed = mod.stage_names_from_kernels(TEXT, kernels)
    assert changed == 2
    names = [s.name for s in Profile.parse(text).stages]
    assert names == ["SortKernel<policy>", "SortKernel<policy> #2", "other 2 launches", "total"]

    src = tmp_path / "in" / "k--v1--rows_8.json"
    src.parent.mkdir()
    measurement = {"date": "d", "device": "dev", "command": "c"}
    doc = {"profile": TEXT, "kernels": kernels, "measurement": measurement}
    src.write_text(json.dumps(doc))
    out = mod.convert(src, tmp_path, tmp_path / "json")
    assert out is not None and "re-derived" in out.read_text()
    assert (tmp_path / "json" / src.name).exists()
    # today's output: a list of one run per configuration
    listed = src.with_name("k--v1--rows_9.json")
    listed.write_text(json.dumps([doc]))
    assert mod.convert(listed, tmp_path, tmp_path / "json") == tmp_path / "k--v1--rows_9.md"
    several = src.with_name("k--v1--two.json")
    several.write_text(json.dumps([doc, doc]))
    assert mod.convert(several, tmp_path, tmp_path / "json") is None  # one file, one profile


def test_a_profile_with_right_names_is_left_as_it_is() -> None:
    mod = _script()
    good = TEXT.replace("decomposer_t<policy> | 200", "other_kernel | 200")
    kernels = [{"name": "void other_kernel(float *)", "metrics": {"duration_us": 200.25}}]
    text, changed = mod.stage_names_from_kernels(good, kernels)
    assert changed == 0 and text == good
