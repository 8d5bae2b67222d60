"""dyt: the spec is valid and both versions match the reference (CPU, Triton interpreter,
where both compute tanh as 2 sigmoid(2x) - 1: the GPU run checks libdevice's and the
hardware instruction's tanh)."""

from __future__ import annotations

import os

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported: run on the CPU

from pathlib import Path

import pytest
import torch

from kbopt.kernel import check_spec, load_spec

ROOT = Path(__file__).resolve().parents[2]


def test_spec_is_valid() -> None:
    spec = load_spec("dyt", ROOT)
    assert check_spec(spec, spec.spec_file) == []
    assert {"triton_v1", "triton_v2"} <= set(spec.version_files())


@pytest.mark.parametrize("version", ["triton_v1", "triton_v2"])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float16])
def test_versions_match_the_reference(version: str, dtype: torch.dtype) -> None:
    spec = load_spec("dyt", ROOT)
    dims = {"rows": 3, "hidden": 300}  # a partial column block: the mask is exercised
    inputs = spec.make_inputs(dims, dtype=dtype, device="cpu", seed=0)
    out = spec.load_version(version).fn(*inputs)
    expect = spec.reference(*inputs)
    err = float((out.double() - expect.double()).norm() / expect.double().norm())
    assert err <= spec.tolerance(str(dtype).removeprefix("torch."))


def test_bad_inputs_are_refused_with_a_reason() -> None:
    from kernels.dyt.triton_common import Config, launch

    spec = load_spec("dyt", ROOT)
    x, alpha, gamma, beta = spec.make_inputs(
        {"rows": 2, "hidden": 8}, dtype=torch.float32, device="cpu", seed=0
    )
    with pytest.raises(ValueError, match="gamma, beta 8"):
        launch(Config(), x, alpha, gamma[:4], beta)
    with pytest.raises(ValueError, match="tanh must be one of"):
        launch(Config(tanh="fast"), x, alpha, gamma, beta)
