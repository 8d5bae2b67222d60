"""How a launch grid quantizes into waves: the two idle-time shares the catalog reads.

Both assume CTAs of equal duration, as Nsight Compute's launch-statistics rules do, so they
bound what a better-balanced grid could win rather than predict it.

* `tail_wave_pct`: the share of the *last* wave's CTA slots left empty.  It is large
  whenever the last wave is nearly empty, even when that wave is one of thirty.
* `wave_idle_pct`: the share of the *whole launch's* processor time the grid leaves idle.
  Over several waves the launch lasts ceil(waves) waves, of which `waves` are busy.  Under
  one wave every CTA is resident at once and the launch lasts as long as the busiest SM,
  which runs ceil(c) CTAs where the average SM runs c = CTAs / SMs; so a grid of 64 CTAs
  on 132 SMs leaves 52% idle, one of 31 waves and a bit leaves 3%.
"""

from __future__ import annotations

import math

_EPS = 1e-9


def _idle_share(units: float) -> float:
    """100 x (ceil(u) - u) / ceil(u): the idle share when `units` of work fill ceil(u) slots."""
    whole = math.ceil(units - _EPS)
    if whole <= 0:
        return 0.0
    return max(0.0, 100.0 * (whole - units) / whole)


def tail_wave_pct(waves: float) -> float:
    """Share of the last wave's slots left idle: 2.25 waves leave 75% of the third idle."""
    part = waves - math.floor(waves + _EPS)
    return 0.0 if part <= _EPS else 100.0 * (1.0 - part)


def wave_idle_pct(waves: float, ctas_per_sm: float | None) -> float | None:
    """Share of the launch's SM time its grid leaves idle (module docstring); None when a
    grid under one wave has no known SM count (the slots alone would overstate it)."""
    if waves <= 0:
        return None
    if waves >= 1.0 - _EPS:
        return _idle_share(waves)
    if ctas_per_sm is None or ctas_per_sm <= 0:
        return None
    return _idle_share(ctas_per_sm)
