"""Attention masks that keep a minority of the (query, key) pairs: the neighborhood-attention
wrapper declares its mask's density, and the catalog proposes visiting only the tiles the
mask reaches on such a kernel, and never on a kernel that says nothing of a mask."""

from __future__ import annotations

from pathlib import Path

import pytest

from kbopt.store import Store
from kbopt.strategy import recommend

REPO = Path(__file__).resolve().parent.parent
ENTRY = "skip-attention-tiles-the-mask-excludes"
PROFILE = (
    REPO
    / "benchmarks/real_profiles_blind9"
    / "liger_neighborhood_attention--triton_v1--b_8_h_12_s_1024_d_64.md"
)


def _with_metric(text: str, line: str) -> str:
    """The profile with one more row in its Metrics table."""
    head, sep, rest = text.partition("| arithmetic_intensity |")
    assert sep, "the profile has no Metrics table"
    return f"{head}{line}\n{sep}{rest}"


@pytest.mark.parametrize(("fraction", "proposed"), [(7 / 1024, True), (1.0, False)])
def test_a_sparse_mask_makes_the_entry_a_first_move(fraction: float, proposed: bool) -> None:
    text = _with_metric(PROFILE.read_text(), f"| attended_fraction | {fraction:.6f} |")
    ids = [o.id for o in recommend(text, language="triton", store=Store(REPO)).opportunities]
    assert (ENTRY in ids[:3]) is proposed
    if not proposed:
        assert ENTRY not in ids  # measured dense: ruled out, not merely ranked low


def test_without_the_density_only_the_kernel_s_words_can_propose_it() -> None:
    # The profile as measured on the H200, before the wrapper declared its mask: its stage
    # names say "neighborhood attention", so the entry may come on its text, and says so.
    result = recommend(PROFILE.read_text(), store=Store(REPO))
    mine = [o for o in result.opportunities if o.id == ENTRY]
    assert all(not o.fired for o in mine)
    # A dense attention kernel whose words name no mask is not offered it at all.
    for dense in (
        "benchmarks/real_profiles/mla_decode--torch--decode.md",
        "benchmarks/real_profiles_blind3/torch_sdpa_decode--torch_v1--decode.md",
    ):
        ranked = recommend((REPO / dense).read_text(), store=Store(REPO)).opportunities
        assert ENTRY not in [o.id for o in ranked[:3]], dense


def test_the_wrapper_declares_the_density_of_its_mask() -> None:
    text = (REPO / "benchmarks/foreign/liger_neighborhood_attention/launcher.py").read_text()
    assert 'metrics={"attended_fraction": attended}' in text
    from kbopt.metric_sources import SPEC, produced_by

    assert SPEC in produced_by()["attended_fraction"]
