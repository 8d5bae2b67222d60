"""The repeat probe's command line, on a machine without a GPU (its measurements need one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kernels.mla_decode import repeat_probe


def test_an_unknown_shape_is_named_before_anything_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc = repeat_probe.main(
        ["--versions", "cute_v28", "--shapes", "b3-s1-t2000,b9", "--out", str(tmp_path)]
    )
    assert rc == 2
    assert "unknown shape(s) b9" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


def test_without_a_gpu_it_says_so_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("a GPU is present")
    assert repeat_probe.main(["--versions", "cute_v28", "--out", str(tmp_path)]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("bad", [["--versions", ","], ["--versions", "cute_v28", "--calls", "0"]])
def test_no_version_or_no_call_is_refused_before_anything_runs(
    bad: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert repeat_probe.main([*bad, "--out", str(tmp_path)]) == 2
    assert "at least one version and --calls >= 1" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
