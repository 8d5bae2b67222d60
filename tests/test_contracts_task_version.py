"""Round trips of the orchestrator -> designer task and the designer's new-version summary."""

from __future__ import annotations

import pytest

from kbopt.contracts.new_version import NewVersion, TrialCheck
from kbopt.contracts.task import Constraints, OptimizationTask, TaskOptimization
from kbopt.errors import ProblemList
from kbopt.vocab import Bottleneck, Language

TASK = """\
## Optimization Task: mla_decode triton_v2 -> triton_v3
### Current Bottleneck: Latency-bound -- Neither DRAM (21%) nor compute (9%) reaches 60% of peak. The grid gives 0.48 CTAs per SM.
### Optimizations to Apply:
1. [Split-KV decoding with a combine stage](docs/knowledge/optimizations/split-kv-decode.md) -- the grid leaves half the SMs idle
2. larger KV tiles -- fewer loop iterations per program

### Constraints
- Register budget: 168 registers/thread
- Target occupancy: 25%
- Control level: tile-level (Triton is enough)
- Language: triton
- Language constraint: tl.dot needs tiles of at least 16 rows
- Keep the registry signature unchanged
"""

NEW_VERSION = """\
## New Version: mla_decode triton_v3
### Changes Applied:
- split the KV length into 8 slices, one program each
- log-sum-exp combine kernel
### Files: Created kernels/mla_decode/triton_v3.py; Modified kernels/mla_decode/registry.py, docs/kernels/mla_decode.md
### Correctness: PASS -- rel. error 0.0021 (tolerance 0.01)

### Trial Configurations Checked
1. b=32, s=1, t=4096 -- plain decode: the default point
2. b=32, s=16, t=4096 -- speculative: 16 query rows share each KV row

### Devlog Entry Written: docs/kernels/mla_decode.md
"""


def test_task_round_trip_is_a_fixed_point() -> None:
    task = OptimizationTask.parse(TASK)
    assert task.kernel == "mla_decode"
    assert (task.current_version, task.new_version) == ("triton_v2", "triton_v3")
    assert task.bottleneck is Bottleneck.LATENCY
    assert task.bottleneck_detail.startswith("Neither DRAM")
    assert task.optimizations[0].link == "docs/knowledge/optimizations/split-kv-decode.md"
    assert task.optimizations[1].link is None
    assert task.optimizations[1].name == "larger KV tiles"
    c = task.constraints
    assert (c.register_budget, c.target_occupancy_pct, c.language) == (168, 25.0, Language.TRITON)
    assert c.language_constraints == ["tl.dot needs tiles of at least 16 rows"]
    assert c.other == ["Keep the registry signature unchanged"]
    assert task.render() == TASK
    assert OptimizationTask.parse(task.render()) == task


def test_task_built_in_code_renders_the_seed_headings() -> None:
    task = OptimizationTask(
        kernel="k",
        current_version="v1",
        new_version="v2",
        bottleneck=Bottleneck.MEMORY,
        optimizations=[TaskOptimization(name="x", rationale="because")],
        constraints=Constraints(language=Language.CUTE_DSL),
    )
    text = task.render()
    assert text.splitlines()[:3] == [
        "## Optimization Task: k v1 -> v2",
        "### Current Bottleneck: Memory-bound",
        "### Optimizations to Apply:",
    ]
    assert "Language: cute-dsl." in task.designer_prompt()
    assert OptimizationTask.parse(text) == task


def test_task_errors_name_their_lines() -> None:
    bad = TASK.replace(
        "2. larger KV tiles -- fewer", "2. larger KV tiles without rationale"
    ).replace("Latency-bound", "Sideways-bound")
    with pytest.raises(ProblemList) as err:
        OptimizationTask.parse(bad, path="task.md")
    text = str(err.value)
    assert "task.md:2:" in text and "Sideways" in text
    assert "task.md:5:" in text


def test_new_version_round_trip() -> None:
    nv = NewVersion.parse(NEW_VERSION)
    assert nv.correct and nv.correctness_detail.startswith("rel. error")
    assert nv.created == ["kernels/mla_decode/triton_v3.py"]
    assert nv.modified == ["kernels/mla_decode/registry.py", "docs/kernels/mla_decode.md"]
    assert nv.trials[1] == TrialCheck(dims={"b": 32, "s": 16, "t": 4096}, why=nv.trials[1].why)
    assert nv.render() == NEW_VERSION
    assert NewVersion.parse(nv.render()) == nv


def test_new_version_trials_take_any_kernels_dims() -> None:
    text = NEW_VERSION.replace(
        "1. b=32, s=1, t=4096 -- plain decode: the default point\n"
        "2. b=32, s=16, t=4096 -- speculative: 16 query rows share each KV row\n",
        "1. rows=8192, hidden=4096 -- a prefill chunk\n",
    )
    nv = NewVersion.parse(text)
    assert nv.trials == [TrialCheck(dims={"rows": 8192, "hidden": 4096}, why="a prefill chunk")]
    assert NewVersion.parse(nv.render()) == nv
    with pytest.raises(ProblemList, match="at least 1"):
        NewVersion.parse(text.replace("rows=8192", "rows=0"))
    with pytest.raises(ProblemList, match="a trial reads"):
        NewVersion.parse(text.replace("rows=8192, hidden=4096", "8192x4096"))


def test_new_version_inline_changes_and_fail() -> None:
    text = NEW_VERSION.replace(
        "### Changes Applied:\n- split the KV length into 8 slices, one program each\n- log-sum-exp combine kernel\n",
        "### Changes Applied: BLOCK_N 32 -> 64; num_stages 1 -> 2\n",
    ).replace("PASS -- rel", "FAIL -- rel")
    nv = NewVersion.parse(text)
    assert nv.changes == ["BLOCK_N 32 -> 64", "num_stages 1 -> 2"]
    assert not nv.correct


def test_new_version_missing_sections_are_reported() -> None:
    with pytest.raises(ProblemList) as err:
        NewVersion.parse("## New Version: k v2\n### Correctness: MAYBE\n", path="nv.md")
    text = str(err.value)
    assert "Changes Applied" in text and "Files" in text and "MAYBE" in text
