"""scripts/instruction_mix.py reads the executed-instruction mix that ncu measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from script_module import load_script

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "kernels" / "mla_decode" / "results"
NAMED = RESULTS / "instruction-mix-20261205T0416Z-NVIDIA-H200.csv"
UNNAMED = RESULTS / "instruction-mix-20261205T0242Z-NVIDIA-H200.csv"


mix = load_script("instruction_mix")


def test_launches_are_named_by_the_sidecar_and_the_combine_pass_is_skipped():
    launches = mix.read_mix(NAMED)
    names = [lau["name"] for lau in launches]
    assert names[0] == "flashmla"
    assert "combine" in names[1]  # FlashMLA's second kernel keeps ncu's name
    assert names[2:] == ["cute_v15", "cute_v16", "cute_v17"]
    for lau in launches:
        # the per-opcode split adds up to about the executed total ncu gave beside it
        assert abs(sum(lau["counts"].values()) - lau["total"]) <= 0.01 * lau["total"]


def test_the_same_matrix_products_and_the_gap_sorted_first(capsys):
    result = mix.table(mix.read_mix(NAMED), "flashmla", 5)
    assert result["launches"] == ["flashmla", "cute_v15", "cute_v16", "cute_v17"]
    hgmma = mix.table(mix.read_mix(NAMED), None, 100)["opcodes"]
    row = next(r for r in hgmma if r["opcode"] == "HGMMA")
    assert len({row[n] for n in result["launches"]}) == 1  # every version issues the same wgmmas
    gaps = [max(abs(r[n] - r["flashmla"]) for n in result["launches"]) for r in result["opcodes"]]
    assert gaps == sorted(gaps, reverse=True)
    assert mix.main([str(NAMED), "--base", "flashmla", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["base"] == "flashmla"


def test_values_without_opcode_names_are_refused_with_the_flag_to_use(capsys):
    assert mix.main([str(UNNAMED)]) == 2
    err = capsys.readouterr().err
    assert "--print-metric-instances details" in err and UNNAMED.name in err


@pytest.mark.parametrize("text", ["not a csv\n", '"ID","Kernel Name"\n"0","k"\n'])
def test_other_files_are_one_line_errors(tmp_path, capsys, text):
    path = tmp_path / "x.csv"
    path.write_text(text)
    assert mix.main([str(path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_an_unknown_base_names_the_launches(capsys):
    assert mix.main([str(NAMED), "--base", "cute_v99"]) == 2
    assert "cute_v15" in capsys.readouterr().err
