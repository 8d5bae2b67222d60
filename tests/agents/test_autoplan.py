"""Autopilot plans: recommendations matched to ranked catalog entries, routed to a specialist,
one task each, ordered by impact, risk and dependencies."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest

from kbopt.agents.autoplan import plan, render_plan
from kbopt.agents.routing import check_delegation
from kbopt.cli import main
from kbopt.contracts.analysis import Analysis
from kbopt.store import Store

SEEDS = Path("/work/shared/seeds/orchestrator-coordination.fr.txt")
# The French source's own example analysis, as the orchestrator receives it.
SOURCE_EXAMPLE = """\
Primary bottleneck: memory-bound
Evidence: Memory bandwidth at 89% of peak, compute at 35%
Recommendations:
1. [High] Enable FlashAttention for self-attention layers
2. [Medium] Apply memory pooling for attention buffers
3. [Low] Consider gradient checkpointing for memory reduction
"""


def test_the_source_example_is_planned(kb_copy: Path) -> None:
    if SEEDS.is_file():  # the example above is the source's, word for word
        assert SOURCE_EXAMPLE.strip() in SEEDS.read_text(encoding="utf-8")
    analysis = Analysis.parse(SOURCE_EXAMPLE)
    steps = plan(analysis, Store(kb_copy), sm=90)
    assert [s.recommendation.level.value for s in steps] == ["high", "medium", "low"]
    flash = steps[0]
    assert flash.entry == "flash-attention-online-softmax-tiling"
    assert flash.specialists == ["kernel-triton-specialist"]  # no preference, SM90
    # a recommendation the catalog has nothing for is said to be unmatched, not forced
    assert steps[2].entry is None
    text = render_plan(analysis, steps)
    assert len(re.findall(r'Delegate to kernel-\w+-specialist: "', text)) == 3  # one task each
    assert "Catalog: no catalog entry matches" in text
    # each task goes to a specialist the delegation check accepts for that very task (a
    # recommendation matched to a CuTe DSL entry is not sent to the Triton specialist)
    for s in steps:
        assert check_delegation(s.specialists[0], s.task(), sm=90) is not None, s.task()
        if s.entry and s.entry.startswith("cute-dsl-"):
            assert s.specialists == ["kernel-cute-specialist"]


def test_order_is_impact_then_risk_then_dependencies(kb_copy: Path) -> None:
    analysis = Analysis.parse(
        "Primary bottleneck: memory-bound\n"
        "Evidence: Memory bandwidth at 85% of peak, compute at 20%\n"
        "Recommendations:\n"
        "1. [High] Pack all query heads that share one latent KV into the same CTA (MLA decode)\n"
        "2. [High] Split-KV decoding with a combine stage\n"
        "3. [Low] Capture the decode step in a CUDA graph\n"
    )
    steps = plan(analysis, Store(kb_copy), sm=90)
    ids = [s.entry for s in steps]
    # mla-pack-query-heads-per-cta requires split-kv-decode: listed first, it comes second
    assert ids.index("split-kv-decode") < ids.index("mla-pack-query-heads-per-cta")
    pack = steps[ids.index("mla-pack-query-heads-per-cta")]
    assert pack.depends_on == [ids.index("split-kv-decode") + 1]
    assert ids[-1] == "cuda-graph-capture-decode-step"  # Low comes last
    assert steps[-1].specialists == ["perf-torch-cuda-graph-specialist"]
    text = render_plan(analysis, steps)
    assert f"Depends on: step {pack.depends_on[0]}" in text
    # the evidence names no shape or kernel: an entry the catalog does not rank for it is
    # planned because the analysis names it, and the plan says which
    if not pack.ranked:
        assert "not ranked for this evidence (the analysis names it)" in text


def test_dry_run_prints_the_plan(
    kb_copy: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = tmp_path / "analysis.md"
    src.write_text(SOURCE_EXAMPLE)
    assert (
        main(["--root", str(kb_copy), "agent", "autopilot", str(src), "--dry-run", "--sm", "90"])
        == 0
    )
    out = capsys.readouterr().out
    assert "## Autopilot Plan" in out
    assert "flash-attention-online-softmax-tiling.md" in out
    assert out.index("[High]", out.index("## Autopilot Plan")) < out.index(
        "[Low]", out.index("## Autopilot Plan")
    )


def test_without_an_sm_the_plan_says_it_could_not_route(kb_copy: Path) -> None:
    steps = plan(Analysis.parse(SOURCE_EXAMPLE), Store(kb_copy))
    assert steps[0].specialists == [] and steps[0].routing_reason.startswith("not routed: ")
    assert "Specialist: none yet (not routed: " in render_plan(
        Analysis.parse(SOURCE_EXAMPLE), steps
    )


def test_a_move_the_evidence_does_not_rank_is_still_found_and_said_so(
    kb_copy: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import kbopt.strategy as strategy

    real = strategy.recommend

    def nothing_ranked(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)  # type: ignore[arg-type]
        return dataclasses.replace(result, opportunities=[])

    monkeypatch.setattr(strategy, "recommend", nothing_ranked)
    analysis = Analysis.parse(
        "Primary bottleneck: compute-bound\n"
        "Evidence: compute at 85%\n"
        "Recommendations:\n"
        "1. [High] Overlap the softmax with asynchronous MMA\n"
        "2. [Low] Consider gradient checkpointing for memory reduction\n"
    )
    steps = plan(analysis, Store(kb_copy), sm=90)
    assert steps[0].entry == "overlap-softmax-with-async-mma"
    assert not steps[0].ranked and steps[0].trigger == ""
    assert steps[0].link.endswith("overlap-softmax-with-async-mma.md")
    assert steps[1].entry is None  # nothing in the catalog: still unmatched, not forced
    text = render_plan(analysis, steps)
    assert "not ranked for this evidence (the analysis names it)" in text
