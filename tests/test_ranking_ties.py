"""Ties in the ranking: scores within TIE of the best of their group are ordered by risk,
then `requires` links, then estimated gain, wherever they fall on a grid of TIE."""

from __future__ import annotations

from kbopt.ranking import TIE, RankedOpportunity, order_ties


def _opp(name: str, score: float, risk: str = "low", gain: float = 10.0) -> RankedOpportunity:
    return RankedOpportunity(
        id=name,
        title=name,
        kind="optimization",
        language=None,
        path=f"docs/knowledge/optimizations/{name}.md",
        score=score,
        estimated_gain=gain,
        trigger="",
        fired=(),
        failed=(),
        relevance=0.0,
        bottleneck_match=False,
        impact="medium",
        risk=risk,
    )


def test_close_scores_tie_even_across_a_grid_line() -> None:
    # 0.7189 and 0.7114 round to different multiples of 0.01, yet are 0.0075 apart.
    ranked = [_opp("risky", 0.7189, risk="medium"), _opp("safe", 0.7114, risk="low")]
    assert TIE > 0.7189 - 0.7114
    assert [o.id for o in order_ties(ranked, {})] == ["safe", "risky"]


def test_groups_form_from_the_top_and_a_clear_gap_is_kept() -> None:
    ranked = [
        _opp("a", 0.800, risk="high"),
        _opp("b", 0.795, risk="low"),
        _opp("c", 0.789, risk="low", gain=90.0),  # 0.011 below the group's best: not a tie
    ]
    assert [o.id for o in order_ties(ranked, {})] == ["b", "a", "c"]


def test_within_a_tie_a_required_entry_comes_first_then_the_larger_gain() -> None:
    ranked = [
        _opp("needs-x", 0.5, gain=50.0),
        _opp("x", 0.499, gain=5.0),
        _opp("big", 0.498, gain=80.0),
    ]
    order = [o.id for o in order_ties(ranked, {"needs-x": frozenset({"x"})})]
    assert order == ["x", "big", "needs-x"]


def test_a_shorter_limit_is_a_prefix_of_the_default_ranking() -> None:
    """A near-tie at the cut used to be ordered only among the entries kept: `recommend
    --limit 3` put another entry third than the default ranking (and the Top 3 a profile
    prints) did."""
    from pathlib import Path

    from kbopt.contracts.profile import Profile
    from kbopt.store import Store
    from kbopt.strategy import recommend

    repo = Path(__file__).resolve().parent.parent
    store = Store(repo)
    profiles = sorted((repo / "benchmarks").glob("real_profiles_blind2*/*.md"))
    assert profiles
    for path in [*profiles, *sorted((repo / "benchmarks" / "profiles").glob("*.md"))]:
        profile = Profile.parse(path.read_text(encoding="utf-8"), str(path))
        full = [o.id for o in recommend(profile, language="triton", store=store).opportunities]
        for limit in (1, 3, 5):
            shorter = recommend(profile, language="triton", store=store, limit=limit)
            assert [o.id for o in shorter.opportunities] == full[:limit], (path.name, limit)
