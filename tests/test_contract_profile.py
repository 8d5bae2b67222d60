"""The profiler -> orchestrator contract: parse, render, metrics, errors."""

from __future__ import annotations

import pytest

from kbopt.contracts.profile import (
    Opportunity,
    Profile,
    Stage,
    parse_duration_us,
)
from kbopt.errors import ProblemList
from kbopt.vocab import METRICS, Bottleneck

SEED_SHAPED = """\
## Profile: mla_decode triton_v3 | b=32, s=1, t=4096
### Stages
| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |
|-------|----------|-----|-------|------|------------|-----------|
| qk_pv | 300 us | 20% | 40% | 12% | Memory | KV tile re-read by 8 head groups |
| combine | 0.1 ms | 0% | 60% | 50% | Latency | extra launch |
### Bottleneck: Memory-bound
Root cause: Each head group re-reads the latent KV cache. The grid has fewer CTAs than SMs.
### Top 3 Opportunities (ranked by estimated impact)
1. [Split-KV decoding](docs/knowledge/optimizations/split-kv-decode.md) -- est. 30% gain -- trigger: ctas_per_sm=0.24
2. More heads per program -- est. 20-40% gain -- trigger: heads_per_program=16

### vs Baseline (if applicable)
| Metric | Previous | Current | Change |
|--------|----------|---------|--------|
| Duration | 520 us | 400 us | -23% |
"""


def test_parses_every_section_of_the_seed_shape() -> None:
    p = Profile.parse(SEED_SHAPED)
    assert (p.kernel, p.version) == ("mla_decode", "triton_v3")
    assert p.config == {"b": 32, "s": 1, "t": 4096}
    assert [s.name for s in p.stages] == ["qk_pv", "combine"]
    assert p.stages[1].duration_us == pytest.approx(100.0)
    assert p.stages[0].key_issue == "KV tile re-read by 8 head groups"
    assert p.bottleneck is Bottleneck.MEMORY
    assert p.root_cause.startswith("Each head group re-reads")
    assert p.opportunities[0].link == "docs/knowledge/optimizations/split-kv-decode.md"
    assert p.opportunities[0].name == "Split-KV decoding"
    assert p.opportunities[0].trigger_metric == "ctas_per_sm"
    assert p.opportunities[0].trigger_value == pytest.approx(0.24)
    assert (p.opportunities[1].gain_pct, p.opportunities[1].gain_pct_max) == (20, 40)
    assert p.baseline[0].change == "-23%"


def test_metrics_are_canonical_and_duration_weighted() -> None:
    m = Profile.parse(SEED_SHAPED).metrics
    assert set(m) <= set(METRICS)
    assert m["duration_us"] == pytest.approx(400.0)
    # (40*300 + 60*100) / 400
    assert m["dram_throughput_pct"] == pytest.approx(45.0)
    assert m["achieved_occupancy_pct"] == pytest.approx((12 * 300 + 50 * 100) / 400)
    # a configuration key is a catalog metric only when it is named like one: the profiler
    # writes what a kernel's dims stand for (kv_len...) into the Metrics section
    assert "kv_len" not in m and "b" not in m
    other = Profile.parse("## Profile: add_rmsnorm triton_v1 | rows=8192, kv_len=4096\n")
    assert other.metrics == {"rows": 8192, "kv_len": 4096}
    assert other.render().startswith("## Profile: add_rmsnorm triton_v1 | rows=8192, kv_len=4096")


def test_a_total_stage_stands_for_the_kernel_and_metrics_section_overrides() -> None:
    p = Profile(
        kernel="k",
        version="v1",
        stages=[
            Stage(name="a", duration_us=10, dram_pct=10),
            Stage(name="Total", duration_us=50, dram_pct=70, occ_pct=25),
        ],
        measured={"registers_per_thread": 255, "achieved_occupancy_pct": 30},
    )
    m = p.metrics
    assert m["duration_us"] == 50
    assert m["dram_throughput_pct"] == 70
    assert m["achieved_occupancy_pct"] == 30  # the explicit Metrics section wins
    assert m["registers_per_thread"] == 255


def test_round_trip_is_a_fixed_point() -> None:
    p = Profile.parse(SEED_SHAPED)
    text = p.render()
    assert Profile.parse(text) == p
    assert Profile.parse(text).render() == text
    assert "### Top 3 Opportunities (ranked by how strongly the profile calls for each)" in text
    assert "## Profile: mla_decode triton_v3 | b=32, s=1, t=4096" in text


def test_fresh_profile_without_optional_sections() -> None:
    p = Profile(
        kernel="rmsnorm",
        version="v0",
        config={"b": 32, "s": 1, "t": 4096},
        stages=[Stage(name="main", duration_us=12.5, dram_pct=88.123, occ_pct=None)],
        measured={"local_memory_bytes": 1_048_576, "sectors_per_request": 16},
        bottleneck=Bottleneck.MEMORY,
    )
    text = p.render()
    assert "Top 3" not in text and "vs Baseline" not in text
    assert "| main | 12.5 us | - | 88.123% | - |" in text
    assert "| local_memory_bytes | 1048576 |" in text
    assert Profile.parse(text) == p
    # Only the title is required.
    bare = Profile.parse("## Profile: k v1\n")
    assert bare.metrics == {} and bare.opportunities == []


def test_with_opportunities_keeps_three() -> None:
    p = Profile(kernel="k", version="v1")
    opps = [Opportunity(name=f"o{i}", gain_pct=10 * i, trigger="x=1") for i in range(5)]
    assert [o.name for o in p.with_opportunities(opps).opportunities] == ["o0", "o1", "o2"]
    assert p.opportunities == []


def test_ncu_metric_names_map_to_canonical() -> None:
    text = (
        "## Profile: k v1\n### Metrics\n| Metric | Value |\n|---|---|\n"
        "| launch__registers_per_thread | 168 |\n| ctas_per_sm | 0.25 |\n"
    )
    assert Profile.parse(text).measured == {"registers_per_thread": 168, "ctas_per_sm": 0.25}


@pytest.mark.parametrize(
    ("text", "line", "fragment"),
    [
        ("# not a profile\n", 1, "starts with `## Profile:"),
        ("## Profile: k v1 | b=x\n", 1, "not `dim=number`"),
        (
            "## Profile: k v1\n### Stages\n| Stage | Time |\n|---|---|\n| a | 1 |\n",
            3,
            "Stages columns must be",
        ),
        (
            "## Profile: k v1\n### Stages\n| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
            "|---|---|---|---|---|---|---|\n| a | fast | 1 | 2 | 3 | Memory | x |\n",
            5,
            "duration 'fast'",
        ),
        (
            "## Profile: k v1\n### Metrics\n| Metric | Value |\n|---|---|\n| regs | 3 |\n",
            5,
            "unknown metric 'regs'",
        ),
        ("## Profile: k v1\n### Bottleneck: Disk-bound\n", 2, "not Memory-, Compute- or Latency"),
        (
            "## Profile: k v1\n### Top 3 Opportunities\n1. just do it\n",
            3,
            "an opportunity reads",
        ),
    ],
)
def test_errors_name_the_line(text: str, line: int, fragment: str) -> None:
    with pytest.raises(ProblemList) as info:
        Profile.parse(text, path="p.md")
    msg = str(info.value)
    assert f"p.md:{line}:" in msg
    assert fragment in msg


def test_unknown_sections_are_kept_as_notes() -> None:
    text = "## Profile: k v1\n### Bottleneck: Latency-bound\nRoot cause: x.\n### Comments\nsee devlog\n"
    p = Profile.parse(text)
    assert p.notes == {"Comments": "see devlog"}
    assert p.bottleneck is Bottleneck.LATENCY
    assert Profile.parse(p.render()) == p


@pytest.mark.parametrize(
    ("cell", "us"),
    [("412 us", 412), ("0.5 ms", 500), ("900ns", 0.9), ("3µs", 3), ("7", 7), ("-", None)],
)
def test_duration_units(cell: str, us: float | None) -> None:
    assert parse_duration_us(cell) == (pytest.approx(us) if us is not None else None)


# ---------------------------------------------------------------- autopilot analysis

FRENCH_SEED = """\
Primary bottleneck: memory-bound
Evidence: Memory bandwidth at 89% of peak, compute at 35%
Recommendations:
1. [High] Enable FlashAttention for self-attention layers
2. [Medium] Apply memory pooling for attention buffers
3. [Low] Consider gradient checkpointing for memory reduction
"""


def test_analysis_parses_the_seed_and_round_trips() -> None:
    from kbopt.contracts.analysis import Analysis
    from kbopt.vocab import Level

    a = Analysis.parse(FRENCH_SEED)
    assert a.primary_bottleneck == "memory-bound"
    assert [r.level for r in a.recommendations] == [Level.HIGH, Level.MEDIUM, Level.LOW]
    assert a.render() == FRENCH_SEED
    assert a.evidence_metrics() == {"dram_throughput_pct": 89, "sm_throughput_pct": 35}
    p = a.to_profile()
    assert p.bottleneck is Bottleneck.MEMORY and p.metrics["dram_throughput_pct"] == 89


def test_analysis_from_profile_rates_by_gain() -> None:
    from kbopt.contracts.analysis import Analysis

    a = Analysis.from_profile(Profile.parse(SEED_SHAPED))
    assert a.primary_bottleneck == "memory-bound"
    assert a.evidence.startswith("Memory bandwidth at 45% of peak")
    assert [r.level.value for r in a.recommendations] == ["high", "high"]
    assert "trigger: ctas_per_sm=0.24" in a.recommendations[0].text


def test_analysis_errors_name_the_line() -> None:
    from kbopt.contracts.analysis import Analysis

    with pytest.raises(ProblemList, match=r"a.txt:3: a recommendation reads"):
        Analysis.parse("Primary bottleneck: memory-bound\nRecommendations:\n1. do it\n", "a.txt")
    with pytest.raises(ProblemList, match="missing `Primary bottleneck"):
        Analysis.parse("Evidence: x\n", "a.txt")


def test_analysis_refuses_a_bottleneck_that_names_no_class() -> None:
    from kbopt.contracts.analysis import Analysis

    with pytest.raises(ProblemList, match=r"a.txt:1: unknown bottleneck 'fast-bound'"):
        Analysis.parse("Primary bottleneck: fast-bound\nEvidence: stuff\n", "a.txt")
    # "unknown" is what `from_profile` writes for a profile without a class: it reads back.
    unknown = Analysis.from_profile(Profile(kernel="k"))
    assert Analysis.parse(unknown.render()).to_profile().bottleneck is None


def test_lenient_on_what_chatty_profilers_write() -> None:
    text = (
        "## Profile: [k] [v2] | b=1, s=1, t=128\n"
        "### Stages\n| Stage | Duration | TC % | DRAM % | Occ % | Bottleneck | **Key issue** |\n"
        "|---|---|---|---|---|---|---|\n| main | 5 us | 0 | 20 | 50 | Memory | strided |\n"
        "### Bottleneck: **Memory**-bound\n"
        "**Root cause:** Strided loads. Half the sectors are wasted.\n"
        "### Top 3 Opportunities\n"
        "1. Coalesce -- est. ~25% gain -- trigger: `sectors_per_request=16`\n"
        "2. Vectorize -- estimated 10%-20% gain\n"
    )
    p = Profile.parse(text)
    assert p.bottleneck is Bottleneck.MEMORY
    assert p.metrics["dram_throughput_pct"] == 20
    assert p.root_cause == "Strided loads. Half the sectors are wasted."
    assert (p.opportunities[0].gain_pct, p.opportunities[0].trigger) == (
        25,
        "sectors_per_request=16",
    )
    assert (p.opportunities[1].gain_pct, p.opportunities[1].gain_pct_max) == (10, 20)


def test_a_provenance_comment_may_come_before_the_title() -> None:
    text = (
        "<!-- measured on NVIDIA H200; command: kbopt profile k v1 -->\n"
        + Profile.parse(SEED_SHAPED).render()
    )
    assert Profile.parse(text) == Profile.parse(SEED_SHAPED)
