"""The devlog as a typed document: lossless round trip, tool blocks, entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.contracts.profile import Profile, Stage
from kbopt.devlog import PERF, Devlog, marker, skeleton
from kbopt.errors import KbError
from kbopt.vocab import Bottleneck

HUMAN = """\
# MLA decode

Intro paragraph written by the kernel engineer.

## Overview

DeepSeek MLA decode: 128 heads share one latent KV head.

## Current Best Results

See results/.

## Performance

Hand-written notes the tools must keep.

## Design notes

### Why BLOCK_M = 64
Hopper's wgmma tile height.

## Devlog

### triton_v1 -- naive
One program per row.
"""


def _profile(s: int, us: float) -> Profile:
    return Profile(
        kernel="mla_decode",
        version="triton_v2",
        config={"b": 32, "s": s, "t": 4096},
        stages=[Stage(name="total", duration_us=us, dram_pct=40.0, bottleneck="Latency")],
        bottleneck=Bottleneck.LATENCY,
        root_cause="Neither unit is busy. The grid is small.",
    )


def test_untouched_file_renders_identically() -> None:
    assert Devlog(HUMAN).render() == HUMAN
    no_newline = HUMAN.rstrip("\n")
    assert Devlog(no_newline).render() == no_newline


def test_reading_sections_and_entries() -> None:
    d = Devlog(HUMAN)
    assert d.title == "MLA decode"
    assert d.overview.startswith("DeepSeek MLA decode")
    assert d.current_best == "See results/."
    assert [e.heading for e in d.entries()] == ["triton_v1 -- naive"]


def test_performance_block_added_without_destroying_text(tmp_path: Path) -> None:
    d = Devlog(HUMAN, tmp_path / "k.md")
    d.set_performance_profile(_profile(1, 400.0), "_profiled by a test_")
    d.save()
    text = (tmp_path / "k.md").read_text()
    assert "Hand-written notes the tools must keep." in text
    assert "### Why BLOCK_M = 64" in text and "One program per row." in text
    # the block sits inside the Performance section, before Design notes
    assert text.index(marker(PERF)) < text.index("## Design notes")
    assert "### Profile: mla_decode triton_v2 | b=32, s=1, t=4096" in text
    assert "#### Stages" in text
    again = Devlog.load(tmp_path / "k.md")
    # a second config is added, the same config replaced
    again.set_performance_profile(_profile(16, 3000.0), "_second run_")
    again.set_performance_profile(_profile(1, 350.0), "_third run_")
    profiles = again.performance_profiles()
    assert [(p.config["s"], p.metrics["duration_us"]) for p in profiles] == [
        (1, 350.0),
        (16, 3000.0),
    ]
    assert "_third run_" in (again.block(PERF) or "")
    # everything outside the block is unchanged
    outside = again.render().split(marker(PERF))[0]
    assert outside == text.split(marker(PERF))[0]
    assert len(again.sections) == len(Devlog(HUMAN).sections)


def test_headings_inside_a_block_do_not_split_sections() -> None:
    d = Devlog(HUMAN)
    d.set_performance_profile(_profile(1, 400.0), "x")
    reparsed = Devlog(d.render())
    assert [s.title for s in reparsed.sections] == [s.title for s in d.sections]


def test_entries_append_and_missing_sections_are_created() -> None:
    d = Devlog("# k\n\n## Overview\n\ntext\n")
    d.add_entry("v2 -- 2026-12-02 -- tiles", "Measured 3x faster.")
    d.set_block("best", "| config | version |")
    text = d.render()
    assert text.index("## Current Best Results") < text.index("## Devlog")
    assert [e.heading for e in Devlog(text).entries()] == ["v2 -- 2026-12-02 -- tiles"]
    assert Devlog(text).block("best") == "| config | version |"


def test_skeleton_and_unclosed_marker() -> None:
    d = Devlog(skeleton("toy"))
    assert d.block(PERF) == ""
    with pytest.raises(KbError, match="no matching"):
        Devlog(f"# k\n## Performance\n{marker(PERF)}\n").block(PERF)


def test_links_are_relative_in_the_page_and_repo_rooted_in_the_contract() -> None:
    from kbopt.contracts.profile import Opportunity

    p = _profile(1, 400.0).with_opportunities(
        [
            Opportunity(
                name="Split-KV", link="docs/knowledge/optimizations/split-kv-decode.md", gain_pct=50
            )
        ]
    )
    d = Devlog(HUMAN)
    d.set_performance_profile(p, "x")
    # the site publishes entries as generated pages, not as their source files
    assert "](../generated/entries/split-kv-decode.md)" in d.render()
    (loose,) = Devlog(d.render()).performance_profiles()
    assert loose.opportunities[0].link == "docs/generated/entries/split-kv-decode.md"


def test_links_go_back_to_knowledge_files_inside_a_project(kb_copy: Path) -> None:
    from kbopt.contracts.profile import Opportunity

    link = "docs/knowledge/optimizations/split-kv-decode.md"
    p = _profile(1, 400.0).with_opportunities(
        [Opportunity(name="Split-KV", link=link, gain_pct=50)]
    )
    path = kb_copy / "docs" / "kernels" / "k.md"
    path.parent.mkdir(parents=True)
    d = Devlog(HUMAN, path)
    d.set_performance_profile(p, "x")
    d.save()
    (back,) = Devlog.load(path).performance_profiles()
    assert back.opportunities[0].link == link


GENERATED = """\
# MLA decode on the H200 — devlog

## Current results (generated)

<!-- GEN:results -->
### decode: b=32, s=1, t=4096
| version | time |
<!-- /GEN:results -->

## Performance (generated from Nsight Compute)

<!-- GEN:profiles -->
## Profile: mla_decode triton_v2 | b=32, s=1, t=4096
### Stages
<!-- /GEN:profiles -->

## Devlog

### triton_v1 — naive
text

## What limits the ladder
prose
"""


def test_another_generators_blocks_are_opaque_and_sections_match_by_prefix() -> None:
    d = Devlog(GENERATED)
    assert d.render() == GENERATED
    # the `## Profile:` inside GEN:profiles does not start a section
    assert [s.title for s in d.sections][1:] == [
        "Current results (generated)",
        "Performance (generated from Nsight Compute)",
        "Devlog",
        "What limits the ladder",
    ]
    assert d.current_best.startswith("<!-- GEN:results -->")
    d.set_performance_profile(_profile(1, 150.0), "_kbopt_")
    d.set_block("best", "| best |")
    d.add_entry("triton_v7 -- 2026-12-02 -- applied", "measured")
    text = d.render()
    gen_profiles = GENERATED.split("<!-- GEN:profiles -->")[1].split("<!-- /GEN:profiles -->")[0]
    assert gen_profiles in text  # their block untouched
    assert text.index("<!-- /GEN:profiles -->") < text.index(marker(PERF)) < text.index("## Devlog")
    assert text.index("<!-- kbopt:best:start -->") < text.index("## Performance")
    assert text.index("### triton_v7 -- 2026-12-02") < text.index("## What limits the ladder")
    assert "## Performance\n" not in text  # no second Performance section was created


def test_overview_falls_back_to_the_introduction() -> None:
    assert Devlog(GENERATED).overview == ""  # no intro text, no Overview section
    d = Devlog("# k\n\nWhat k computes.\n\n## Contract\n\nx\n")
    assert d.overview == "What k computes."
    assert Devlog(HUMAN).overview.startswith("DeepSeek MLA decode")
