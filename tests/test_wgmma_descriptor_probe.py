"""scripts/wgmma_descriptor_probe.py: hand-written wgmma loops assembled by Triton's bundled
ptxas on the CPU, and where the descriptors end up in the SASS."""

from __future__ import annotations

import json

import pytest
from script_module import load_script


def _script():  # type: ignore[no-untyped-def]
    return load_script("wgmma_descriptor_probe")


def test_kernel_places_the_descriptors_before_the_first_wgmma_or_beside_each() -> None:
    mod = _script()
    for up_front in (True, False):
        lines = mod.kernel_ptx(3, up_front).split("\n")
        mmas = [i for i, ln in enumerate(lines) if "wgmma.mma_async" in ln]
        pairs = [i for i, ln in enumerate(lines) if ln.startswith("\tmov.b64 %da")]
        assert len(mmas) == len(pairs) == 3
        if up_front:
            assert max(pairs) < min(mmas)
        else:
            assert all(p < m for p, m in zip(pairs, mmas, strict=True))
            assert all(m < p for m, p in zip(mmas, pairs[1:], strict=False))


@pytest.mark.slow
def test_many_descriptors_computed_up_front_are_copied_into_uniform_registers(tmp_path) -> None:
    """With 36 steps computed up front, ptxas copies descriptor words from ordinary into
    uniform registers before the wgmmas; computed step by step, it forms them in uniform
    registers (uniform adds, no copy). With 4 steps both placements assemble alike."""
    rows = {
        (r["steps"], r["descriptors"]): r
        for r in _script().probe(_script().triton_tool("ptxas"), [4, 36])
    }
    assert rows[(36, "up_front")]["HGMMA"] == rows[(36, "per_step")]["HGMMA"] == 36
    assert rows[(36, "up_front")]["R2UR"] >= 36
    assert rows[(36, "per_step")]["R2UR"] == 0
    assert rows[(36, "per_step")]["UIADD3"] >= 36
    assert rows[(4, "up_front")]["R2UR"] == rows[(4, "per_step")]["R2UR"] == 0


def test_bad_steps_are_refused_with_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert _script().main(["--steps", "4,x", "--no-write"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --steps") and "Traceback" not in err
    assert _script().main(["--steps", "0", "--no-write"]) == 2


def test_the_committed_results_show_the_threshold() -> None:
    """The results files the probe wrote: no copies at few steps, copies at 36 up front."""
    from pathlib import Path

    files = sorted(
        Path(__file__).resolve().parent.parent.glob("results/ptx/wgmma-descriptor-probe-*.json")
    )
    assert files
    for f in files:
        doc = json.loads(f.read_text())
        assert doc["command"].startswith("python scripts/wgmma_descriptor_probe.py")
        rows = {(r["steps"], r["descriptors"]): r for r in doc["rows"]}
        assert rows[(36, "up_front")]["R2UR"] > 0 and rows[(36, "per_step")]["R2UR"] == 0
        assert rows[(4, "up_front")]["R2UR"] == 0
