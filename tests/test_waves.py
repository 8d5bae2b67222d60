"""The idle share of a launch grid's waves: its rule, its producers, and the anti-pattern
that reads it (grids that leave SMs idle, on any kind of kernel)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kbopt.bench.launch_stats import SM90, Launch, launch_metrics
from kbopt.contracts.profile import Profile
from kbopt.contracts.profile_text import read_facts
from kbopt.store import Store
from kbopt.strategy import recommend
from kbopt.waves import tail_wave_pct, wave_idle_pct

REPO = Path(__file__).resolve().parent.parent
WAVE_QUANT = "wave-quantization-from-coarse-tiles"


@pytest.mark.parametrize(
    ("waves", "ctas_per_sm", "idle"),
    [
        (0.1, 0.485, 51.5),  # 64 CTAs on 132 SMs, whatever the slots per SM: 68 SMs idle
        (0.12, 1.939, 3.05),  # 256 CTAs: every SM busy, 8 of them with one CTA fewer
        (1.29, 31.03, 35.5),  # one full wave, then 29% of a second
        (3.1, 15.5, 22.5),
        (31.03, 62.06, 3.0),  # the last wave of 32 is nearly empty, and barely matters
        (2.0, 4.0, 0.0),
        (1.0, 1.0, 0.0),
    ],
)
def test_idle_share_counts_waves_or_under_one_wave_the_sms(
    waves: float, ctas_per_sm: float, idle: float
) -> None:
    assert wave_idle_pct(waves, ctas_per_sm) == pytest.approx(idle, abs=0.1)


def test_under_one_wave_without_an_sm_count_the_share_is_unknown() -> None:
    assert wave_idle_pct(0.5, None) is None
    assert wave_idle_pct(0.0, 1.0) is None
    assert wave_idle_pct(1.5, None) == pytest.approx(25.0)  # the waves alone suffice
    # The last wave's emptiness is a different (and much larger) figure.
    assert tail_wave_pct(31.03) == pytest.approx(97.0)


def test_launch_statistics_give_the_idle_share() -> None:
    # 64 CTAs of 4 warps on 132 SMs, as Liger's embedding gather launches at 64 tokens
    small = launch_metrics([Launch("gather", (1, 64, 1), 4, 94, 0)], 132, SM90)
    assert small["ctas_per_sm"] == pytest.approx(64 / 132)
    assert small["wave_idle_pct"] == pytest.approx(100 * (1 - 64 / 132))
    big = launch_metrics([Launch("rows", (8192, 1, 1), 4, 32, 0)], 132, SM90)
    assert big["wave_idle_pct"] < 5


def _profile_text(ctas_per_sm: float, waves: float, with_idle: bool) -> str:
    rows = [
        ("duration_us", 5.0),
        ("dram_throughput_pct", 20.0),
        ("pct_of_floor", 30.0),
        ("ctas_per_sm", ctas_per_sm),
        ("waves_per_sm", waves),
        ("achieved_occupancy_pct", 20.0),
    ]
    if with_idle:
        rows.append(("wave_idle_pct", wave_idle_pct(waves, ctas_per_sm) or 0.0))
    table = "\n".join(f"| {k} | {v:g} |" for k, v in rows)
    return (
        "## Profile: my_gather v1 (tokens=64)\n\n"
        "### Stages\n| Stage | Duration | TC% | DRAM% | Occ% | Bottleneck | Key Issue |\n"
        "|---|---|---|---|---|---|---|\n| gather | 5 us | 0 | 20 | 20 | latency | few CTAs |\n\n"
        "### Bottleneck: latency\nRoot cause: a short grid of row gathers.\n\n"
        f"### Metrics\n| Metric | Value |\n|---|---|\n{table}\n"
    )


def test_profiles_written_before_the_share_existed_derive_it_from_their_waves() -> None:
    text = _profile_text(0.485, 0.1, with_idle=False)
    assert "wave_idle_pct" not in text
    assert Profile.parse(text).metrics["wave_idle_pct"] == pytest.approx(51.5)
    facts = read_facts(text)
    assert facts is not None and facts.metrics["wave_idle_pct"] == pytest.approx(51.5)


@pytest.mark.parametrize("with_idle", [True, False])
def test_the_anti_pattern_warns_on_a_short_grid_of_any_kind_and_not_on_a_full_one(
    with_idle: bool,
) -> None:
    store = Store(REPO)
    short = recommend(_profile_text(0.485, 0.1, with_idle), language="triton", store=store)
    assert WAVE_QUANT in [w.id for w in short.warnings]
    # 256 CTAs on 132 SMs: fewer than two waves of slots, yet every SM has work.
    full = recommend(_profile_text(1.939, 0.12, with_idle), language="triton", store=store)
    assert WAVE_QUANT not in [w.id for w in full.warnings]


def test_the_entry_reads_the_idle_share_not_the_last_wave_alone() -> None:
    entry = (REPO / "docs/knowledge/anti-patterns" / f"{WAVE_QUANT}.md").read_text()
    front = entry.split("---")[1]
    assert re.search(r'defining: \["wave_idle_pct > \d+"\]', front)
    when = entry.split("## When to Apply")[1].split("## ")[0]
    triggers = re.findall(r"^- `([a-z_]+) [<>]", when, flags=re.M)
    assert triggers == ["wave_idle_pct"]
