"""Problem-shape facts a kernel spec leaves unstated that the catalog reads for its kind.

Entries for a kind of kernel often gate on the problem's shape (`split-kv-decode` wants
`kv_len >= 1024`).  A spec tells the profile those facts only where a dimension maps to the
metric (`Dim("n", "cached tokens", "kv_len")`), `fixed_metrics` or `shape_metrics` give it.
Facts of the launch (`heads_per_program`, `num_splits`) may instead be recorded by each
version's launch (`launch_info(...)["metrics"]`), which a check without a GPU cannot see.
A fact given neither way leaves such a trigger unmeasured: the entry still ranks, but with
less evidence than a kernel whose spec states it (a blind set's 8-sequence MLA decode, whose
spec gave no KV length, ranked the KV split eighth; a decode whose spec gave no heads per
program could not fire the grouped-heads entries).  `kbopt kernel check`
lists the gaps so a spec's author can close them.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kbopt.metric_sources import SPEC_METRICS
from kbopt.ranking import CALL_CONTEXTS, PROPERTY_CONTEXTS, Card


def stated_metrics(spec: Any) -> set[str]:
    """The catalog metrics the spec gives a profile at its first trial (dims, fixed, shape)."""
    dims = spec.trials[0].dims if spec.trials else {}
    try:
        return set(spec.dim_metrics(dims))
    except Exception:  # a shape_metrics that fails is check_spec's to report
        return {d.metric for d in spec.dims if d.metric} | set(spec.fixed_metrics)


def unstated_shape_metrics(spec: Any, cards: Iterable[Card]) -> dict[str, list[str]]:
    """{shape metric: entries for this spec's kind of kernel whose triggers read it}, for the
    metrics the spec does not state; empty for a spec that names no kind of kernel (its
    contexts are properties such as memory-bound, which say nothing of its shape)."""
    kinds = frozenset(spec.contexts) - CALL_CONTEXTS - PROPERTY_CONTEXTS
    if not kinds:
        return {}
    stated = stated_metrics(spec)
    gaps: dict[str, set[str]] = {}
    for card in cards:
        if not (card.contexts - CALL_CONTEXTS - PROPERTY_CONTEXTS) & kinds:
            continue
        for metric, _, _, _ in card.triggers:
            if metric in SPEC_METRICS and metric not in stated:
                gaps.setdefault(metric, set()).add(card.name)
    return {m: sorted(names) for m, names in sorted(gaps.items())}
