"""The plans that GPU sessions run line by line (`scripts/gpu_profiles.sh`'s PLAN files and
`scripts/gpu_proof.sh`'s ABLATE_PLAN files) name specs, versions and configurations that
exist: a typo found on the GPU costs minutes of a limited device budget.  A line over a
third-party kernel that is not fetched here is skipped (CI has no `third_party/`)."""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from kbopt.bench.trials import parse_config
from kbopt.errors import ProblemList
from kbopt.kernel import KernelSpec, load_spec

REPO = Path(__file__).resolve().parent.parent


def _lines(pattern: str) -> list[tuple[str, str]]:
    out = []
    for path in sorted(REPO.glob(pattern)):
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if line.strip() and not line.lstrip().startswith("#"):
                out.append((f"{path.relative_to(REPO)}:{n}", line.strip()))
    return out


PROFILE_LINES = _lines("benchmarks/real_profiles*/plan.txt")
ABLATION_LINES = _lines("benchmarks/ablation-*.txt")


def _spec(ref: str) -> KernelSpec:
    try:
        return load_spec(ref, REPO)
    except ProblemList as exc:
        if "third-party kernel" in str(exc) and "is missing" in str(exc):
            pytest.skip(f"{ref}: its third-party source is not fetched here")
        raise


def test_the_plans_are_found() -> None:
    assert len(PROFILE_LINES) > 100 and len(ABLATION_LINES) > 50


@pytest.mark.parametrize(("where", "line"), PROFILE_LINES, ids=[w for w, _ in PROFILE_LINES])
def test_a_profile_plan_line_names_a_spec_version_and_config(where: str, line: str) -> None:
    parts = line.split()
    assert len(parts) == 3, f"{where}: not SPEC VERSION CONFIG: {line!r}"
    ref, version, config = parts
    spec = _spec(ref)
    assert version in spec.version_files() or version in spec.load_baselines(), (
        f"{where}: {spec.name} has no version {version}"
    )
    parse_config(config, spec)  # raises a KbError naming unknown or missing dims


@pytest.mark.parametrize(("where", "line"), ABLATION_LINES, ids=[w for w, _ in ABLATION_LINES])
def test_an_ablation_plan_line_names_a_spec_and_config(where: str, line: str) -> None:
    args = shlex.split(line)
    spec = _spec(args[0])
    if "--config" in args:
        parse_config(args[args.index("--config") + 1], spec)
    if "--budget-s" in args:
        assert float(args[args.index("--budget-s") + 1]) > 0, where
