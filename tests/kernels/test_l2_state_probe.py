"""The L2-state probe refuses bad arguments and a machine without a GPU with one clear line."""

import pytest

torch = pytest.importorskip("torch")

from kernels.mla_decode import l2_state_probe  # noqa: E402


def test_unknown_config_is_refused_before_anything_runs(tmp_path, capsys):
    rc = l2_state_probe.main(
        ["--versions", "cute_v22", "--configs", "prefill", "--out", str(tmp_path)]
    )
    assert rc == 2
    err = capsys.readouterr().err
    assert "decode, speculative" in err and "prefill" in err
    assert not list(tmp_path.iterdir())


def test_zero_calls_is_refused(tmp_path, capsys):
    rc = l2_state_probe.main(["--versions", "cute_v22", "--calls", "0", "--out", str(tmp_path)])
    assert rc == 2
    assert "--calls" in capsys.readouterr().err


@pytest.mark.skipif(
    torch.cuda.is_available(), reason="checks the message on a machine without a GPU"
)
def test_no_gpu_says_so(tmp_path, capsys):
    rc = l2_state_probe.main(["--versions", "cute_v22", "--out", str(tmp_path)])
    assert rc == 2
    assert "no CUDA device" in capsys.readouterr().err
    assert not list(tmp_path.iterdir())
