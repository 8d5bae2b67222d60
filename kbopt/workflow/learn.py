"""LEARN (the cycle's last step): write back what the run showed, through the store only.

Rules, per finished attempt, first match wins:

| # | the attempt                                              | what is written                                  |
|---|----------------------------------------------------------|--------------------------------------------------|
| 1 | carries a draft entry from the designer, and the         | the draft, with this run's evidence appended: a   |
|   | measurements confirm it (an optimization kept and >= 5%  | new optimization / anti-pattern at                |
|   | faster somewhere, an anti-pattern > 5% slower)           | its shared or language path, or new evidence if   |
|   |                                                          | the entry already exists; unconfirmed: nothing    |
| 2 | names a catalog entry and was kept, >= 5% faster         | evidence appended; a `proposed` entry becomes     |
|   | somewhere                                                | `validated` (evidence refines the effect)         |
| 3 | names a catalog entry and was rolled back for a          | evidence appended with the slowdown (the          |
|   | slowdown over 5%                                         | failure mode is refined)                          |
| 4 | was a catalog move (`--designer catalog`) on a catalog   | evidence appended whatever the effect, and the    |
|   | entry, kept or rolled back for speed (not correctness)   | entry's expected gain refined (below)             |
| 5 | anything else (correctness failure, no significant       | nothing; the reason is recorded                   |
|   | effect, no catalog entry)                                |                                                   |

The evidence is a local experiment: device, software versions, date, and the commands
that reproduce the before and after measurements, one row per trial configuration; its
Source names the run, the attempt, the version pair and the exact change applied (for a
catalog move, every knob's old and new value).  It is attached to the entry the attempt
applied, and to no other.

**How new evidence refines an entry's estimated gain** (`refine_gain`), for the
entry whose catalog move was measured on a real device (or whose move a kernel's lesson
measured in full, `kbopt learn` with `refines_gain`, its Source marked `FULL_MOVE`): the entry's `expected_gain_pct`
becomes the running mean of its prior estimate, counted as one observation, and every
catalog-move measurement recorded on it, `new = prior + (gain - prior) / (n + 1)`, where
`gain` is the measured speed-up in percent (the mean over the trial configurations of
`-time change`; negative when slower) and `n` the number of catalog-move evidence blocks
on the entry, this one included; the result is never below 0.  An optimization's `impact`
label is re-derived from the refined gain (`kbopt.vocab.impact_for_gain`: high from 20%,
medium from 5%, low below), so the label never claims more than the evidence.  After `REFUTE_AFTER`
catalog-move measurements in a row that were each slower by more than `SIGNIFICANT_PCT`
(only the first measurement of each run counts, for the mean and for this: a run that
applies the same entry again is walking its knob further, and an overshoot says how far to
go, not what the entry gives; likewise a step that moves a knob further in the direction
an earlier kept step of the run already moved it, by another entry, is marked in its
Source as continuing that change and does not count),
the entry's status becomes `refuted` and the strategy stops proposing it.  The
strategy's ranking reads `expected_gain_pct`, so the next run ranks with what was
learned.  It
goes in Performance Evidence only; the entry's Generalization is left to its author
(local evidence apart from generalization).  The catalog is linted afterwards and
the result is kept in the run record.

A run on the fake backend writes nothing: its figures are stand-ins, so each finding is
recorded as skipped, with what real figures of the same shape would have written.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

from kbopt.bench.backend import Measurement
from kbopt.errors import KbError
from kbopt.lint import FAKE_DEVICE, lint
from kbopt.model import EvidenceBlock, EvidenceRow
from kbopt.store import Store
from kbopt.template import parse_entry
from kbopt.vocab import Kind, SourceType, Status, impact_for_gain
from kbopt.workflow.record import Attempt, AttemptStatus, Learned, RunRecord

SIGNIFICANT_PCT = 5.0
REFUTE_AFTER = 3  # catalog-move measurements in a row, each slower: the entry is refuted
CATALOG_MOVE = "catalog move"  # marks an evidence Source written for a catalog move
# Marks a lesson's evidence (`kbopt learn`, `refines_gain = true`) that measured the entry's
# move applied in full: it refines the expected gain like a catalog move's measurement.
FULL_MOVE = "the entry's move in full"
# Marks a catalog move that pushed a knob further the way an earlier kept step of the same
# run had already moved it: how far to go, not what the entry gives.
CONTINUES = "continues a change kept at attempt"


def evidence_for(record: RunRecord, attempt: Attempt, note: str = "") -> EvidenceBlock:
    rows = []
    first: Measurement | None = None
    for cfg_name, after_d in attempt.measurements.items():
        after = Measurement.from_dict(after_d)
        before_d = _before(record, attempt, cfg_name)
        if before_d is None:
            continue
        before = Measurement.from_dict(before_d)
        first = first or after
        change = (after.duration_us - before.duration_us) / before.duration_us * 100
        rows.append(
            EvidenceRow(
                config=f"{record.kernel} {after.config.shape}: {attempt.from_version} -> {attempt.new_version}",
                before=f"{before.duration_us:.1f} us",
                after=f"{after.duration_us:.1f} us",
                change=f"{change:+.1f}%",
            )
        )
    if first is None or not rows:
        raise KbError(f"attempt {attempt.iteration} has no before/after measurements to record")
    shapes = sorted({Measurement.from_dict(m).config.shape for m in attempt.measurements.values()})
    cfg_args = " ".join(f"--config '{s.replace(' ', '')}'" for s in shapes)
    changes = _changes(attempt)
    kind = f", {CATALOG_MOVE}" if is_catalog_move(record) else ""
    return EvidenceBlock(
        source_type=SourceType.LOCAL_EXPERIMENT,
        source=(
            f"{_source_prefix(record, attempt)}({record.kernel}, backend {record.backend}{kind}): "
            f"{attempt.from_version} -> {attempt.new_version}"
            + (f", {changes}" if changes else "")
            + (f"; {note}" if note else "")
        ),
        device=first.device or None,
        versions=", ".join(f"{k} {v}" for k, v in sorted(first.versions.items())) or None,
        date=(first.date or "")[:10] or None,
        command=(
            f"kbopt profile {record.kernel} {attempt.from_version} {cfg_args} && "
            f"kbopt profile {record.kernel} {attempt.new_version} {cfg_args}"
        ),
        rows=rows,
    )


def _source_prefix(record: RunRecord, attempt: Attempt) -> str:
    return f"kbopt cycle run {record.run_id}, attempt {attempt.iteration} "


def _changes(attempt: Attempt) -> str:
    """The exact change the designer reported (its New Version's Changes Applied)."""
    from kbopt.contracts.new_version import NewVersion

    if not attempt.new_version_summary:
        return ""
    try:
        nv = NewVersion.parse(attempt.new_version_summary)
    except KbError:
        return ""
    return "; ".join(c.replace("\n", " ") for c in nv.changes)


def is_catalog_move(record: RunRecord) -> bool:
    return record.designer.partition(":")[0] == "catalog"


def _before(record: RunRecord, attempt: Attempt, cfg_name: str) -> dict | None:
    """The measurement of the version this attempt started from."""
    for prev in reversed(record.attempts[: attempt.iteration - 1]):
        if prev.status is AttemptStatus.APPLIED and prev.new_version == attempt.from_version:
            return prev.measurements.get(cfg_name)
    if attempt.from_version == record.start_version:
        return record.baseline.get(cfg_name)
    return None


def _append_once(
    store: Store, name: str, block: EvidenceBlock, status: Status | None = None
) -> tuple[Path, bool]:
    """Append evidence unless this attempt's block is already there (a resumed LEARN);
    (path, whether it was appended now)."""
    entry = store.get(name)
    attempt_prefix = block.source.split("(", 1)[0]  # "kbopt cycle run X, attempt N "
    if any(b.source == block.source or b.source.startswith(attempt_prefix) for b in entry.evidence):
        path = store.find(name)
        assert path is not None
        return path, False
    return store.append_evidence(name, block, status=status), True


def measured_gain_pct(block: EvidenceBlock) -> float | None:
    """The speed-up a block measured, in percent: mean of `-Change` over its rows."""
    pcts = [r.change_pct for r in block.rows if r.change_pct is not None]
    return -sum(pcts) / len(pcts) if pcts else None


_RUN_OF = re.compile(r"^kbopt cycle run (?P<run>\S+), attempt (?P<attempt>\d+) ")


def first_step_per_run(blocks: Sequence[EvidenceBlock]) -> list[EvidenceBlock]:
    """The first catalog-move measurement of each run on an entry.  A run that keeps a move
    and applies the same entry again is walking the knob further in the same direction; a
    later step that overshoots (heads per program past the optimum) says how far to go, not
    what the entry gives, so it does not refine the gain nor count toward refuting it.  A
    step marked as continuing another entry's kept change (`CONTINUES`) does not count
    either."""
    seen: set[str] = set()
    out = []
    for b in blocks:
        if CONTINUES in b.source:
            continue
        m = _RUN_OF.match(b.source)
        if m is not None:
            if m["run"] in seen:
                continue
            seen.add(m["run"])
        out.append(b)
    return out


def refine_gain(store: Store, name: str) -> str:
    """Apply the module's refinement rule after a catalog-move block was appended; returns
    what changed, for the run record."""
    entry = store.get(name)
    moves = first_step_per_run(
        [
            b
            for b in entry.evidence
            if (CATALOG_MOVE in b.source or FULL_MOVE in b.source)
            and FAKE_DEVICE not in (b.device or "")
            and measured_gain_pct(b) is not None
        ]
    )
    if not moves or moves[-1] is not entry.evidence[-1]:
        return ""  # a further step of a move this run already measured: not the entry's gain
    gain = measured_gain_pct(moves[-1])
    assert gain is not None
    prior = entry.expected_gain_pct
    new = max(0.0, prior + (gain - prior) / (len(moves) + 1))
    recent = [measured_gain_pct(b) for b in moves[-REFUTE_AFTER:]]
    refute = len(recent) == REFUTE_AFTER and all(
        g is not None and g <= -SIGNIFICANT_PCT for g in recent
    )
    changed = entry.model_copy(deep=True)
    changed.expected_gain_pct = round(new, 1)
    if changed.kind == Kind.OPTIMIZATION:  # the label follows the refined gain
        changed.impact = impact_for_gain(changed.expected_gain_pct)
    if refute:
        changed.status = Status.REFUTED
    store.update(changed)
    text = (
        f"expected gain {prior:g}% -> {changed.expected_gain_pct:g}% (running mean of the "
        f"prior and {len(moves)} measurement(s) of its move; this one {gain:+.1f}%)"
    )
    if changed.impact != entry.impact:
        text += f"; impact {entry.impact.value} -> {changed.impact.value}"
    if refute:
        text += f"; refuted: the last {REFUTE_AFTER} catalog-move measurements were slower"
    return text


def continued_change(record: RunRecord, attempt: Attempt, root: Path) -> str:
    """`CONTINUES ... N (knob a -> b)` when the attempt's catalog move changed a knob the
    way an earlier kept attempt of the run had already changed it (up again, down again, or
    to the same value); "" otherwise, or when the run's move file is not there."""
    from kbopt.workflow.catalog_designer import chosen_move
    from kbopt.workflow.record import run_dir

    folder = run_dir(root, record.run_id)
    here = chosen_move(folder, attempt.iteration)
    if not here or "before" not in here:
        return ""
    for earlier in record.attempts[: attempt.iteration - 1]:
        if earlier.status is not AttemptStatus.APPLIED:
            continue
        past = chosen_move(folder, earlier.iteration)
        if not past or "before" not in past:
            continue
        for knob, after in here["values"].items():
            if knob in past["values"] and _same_way(
                past["before"].get(knob), past["values"][knob], here["before"].get(knob), after
            ):
                shown = f"{knob} {past['before'].get(knob)} -> {past['values'][knob]}"
                return f"{CONTINUES} {earlier.iteration} ({shown}, by {earlier.optimization})"
    return ""


def _same_way(before1: object, after1: object, before2: object, after2: object) -> bool:
    """Two knob changes that go the same way: both up, both down, or both to one value."""
    numbers = (int, float)
    if all(
        isinstance(v, numbers) and not isinstance(v, bool)
        for v in (before1, after1, before2, after2)
    ):
        return (after1 > before1) == (after2 > before2)  # type: ignore[operator]
    return after1 == after2


def is_fake(record: RunRecord, attempt: Attempt) -> bool:
    """Figures from the fake backend: stand-ins that must never become catalog evidence."""
    devices = {str(m.get("device", "")) for m in attempt.measurements.values()}
    return record.backend == "fake" or FAKE_DEVICE in devices


def learn_attempt(store: Store, record: RunRecord, attempt: Attempt, root: Path) -> Learned:
    """What the attempt teaches (see the module's table); written only from real figures."""
    if is_fake(record, attempt):
        # Say what real figures of the same shape would have written, and write nothing.
        would = _decide(store, record, attempt, root, write=False)
        if would.action == "skipped":
            return would
        return Learned(
            action="skipped",
            entry=would.entry,
            detail=f"fake backend: {would.action} not written ({would.detail or _pcts(attempt)}); "
            "stand-in figures never enter the catalog",
        )
    return _decide(store, record, attempt, root, write=True)


def _decide(
    store: Store, record: RunRecord, attempt: Attempt, root: Path, *, write: bool
) -> Learned:
    changes = attempt.changes_pct.values()
    faster = min(changes, default=0.0) <= -SIGNIFICANT_PCT
    slower = max(changes, default=0.0) > SIGNIFICANT_PCT
    applied = attempt.status is AttemptStatus.APPLIED
    if attempt.learn_draft:
        path = root / attempt.learn_draft
        try:
            draft = parse_entry(path.read_text(encoding="utf-8"), name=None, path=str(path))
        except OSError as exc:
            raise KbError(f"cannot read the draft entry {path}: {exc.strerror}") from None
        confirmed = (draft.kind is Kind.OPTIMIZATION and applied and faster) or (
            draft.kind is Kind.ANTI_PATTERN and slower
        )
        if not confirmed:
            return Learned(
                action="skipped",
                entry=draft.name,
                detail=f"the draft {draft.kind.value} was not confirmed by the measurements ({_pcts(attempt)})",
            )
        evidence = evidence_for(record, attempt)
        if store.find(draft.name) is not None:
            if not write:
                return Learned(action="append_evidence", entry=draft.name)
            written, _ = _append_once(store, draft.name, evidence)
            return Learned(action="append_evidence", entry=draft.name, path=store.display(written))
        draft.evidence = [*draft.evidence, evidence]
        action = "add_optimization" if draft.kind is Kind.OPTIMIZATION else "add_anti_pattern"
        if not write:
            return Learned(action=action, entry=draft.name)
        if draft.kind is Kind.OPTIMIZATION:
            written = store.add_optimization(draft)
        else:
            written = store.add_anti_pattern(draft)
        return Learned(action=action, entry=draft.name, path=store.display(written))
    if store.find(attempt.optimization) is None:
        return Learned(
            action="skipped",
            entry=attempt.optimization,
            detail="no catalog entry of that name and no draft from the designer",
        )
    measured_move = is_catalog_move(record) and (
        attempt.status is AttemptStatus.APPLIED
        or (attempt.status is AttemptStatus.ROLLED_BACK and not attempt.failed_correctness)
    )
    if measured_move:
        state = "kept" if attempt.status is AttemptStatus.APPLIED else "rolled back"
        detail = f"catalog move {state}; time change {_pcts(attempt)}"
        if not write:
            return Learned(action="append_evidence", entry=attempt.optimization, detail=detail)
        entry = store.get(attempt.optimization)
        status = Status.VALIDATED if (faster and entry.status is Status.PROPOSED) else None
        continues = continued_change(record, attempt, root)
        written, appended = _append_once(
            store,
            attempt.optimization,
            evidence_for(record, attempt, note=continues),
            status=status,
        )
        refined = refine_gain(store, attempt.optimization) if appended else ""
        if continues:
            refined = f"gain not refined: the move {continues}"
        return Learned(
            action="append_evidence",
            entry=attempt.optimization,
            path=store.display(written),
            detail=detail + (f"; {refined}" if refined else ""),
        )
    if attempt.status is AttemptStatus.APPLIED and faster:
        detail = "kept; faster by " + _pcts(attempt)
        if not write:
            return Learned(action="append_evidence", entry=attempt.optimization, detail=detail)
        entry = store.get(attempt.optimization)
        status = Status.VALIDATED if entry.status is Status.PROPOSED else None
        written, _ = _append_once(
            store, attempt.optimization, evidence_for(record, attempt), status=status
        )
        return Learned(
            action="append_evidence",
            entry=attempt.optimization,
            path=store.display(written),
            detail=detail,
        )
    if attempt.status is AttemptStatus.ROLLED_BACK and slower and not attempt.failed_correctness:
        detail = "rolled back; slower by " + _pcts(attempt)
        if not write:
            return Learned(action="append_evidence", entry=attempt.optimization, detail=detail)
        written, _ = _append_once(store, attempt.optimization, evidence_for(record, attempt))
        return Learned(
            action="append_evidence",
            entry=attempt.optimization,
            path=store.display(written),
            detail=detail,
        )
    why = (
        "correctness failure: an implementation bug, not catalog knowledge"
        if attempt.failed_correctness
        else f"no significant effect ({_pcts(attempt)}, threshold {SIGNIFICANT_PCT:g}%)"
    )
    return Learned(action="skipped", entry=attempt.optimization, detail=why)


def _pcts(attempt: Attempt) -> str:
    return ", ".join(f"{k} {v:+.1f}%" for k, v in attempt.changes_pct.items()) or "unmeasured"


def run_learn(
    store: Store, record: RunRecord, root: Path, persist: Callable[[], None] = lambda: None
) -> None:
    """LEARN over every attempt not yet learned (saving after each), then lint the catalog."""
    for attempt in record.attempts:
        if attempt.learned or attempt.status not in {
            AttemptStatus.APPLIED,
            AttemptStatus.ROLLED_BACK,
        }:
            continue
        record.learned.append(learn_attempt(store, record, attempt, root))
        attempt.learned = True
        persist()
    problems = lint(store)
    record.lint_ok = not problems
    record.lint_problems = [str(p) for p in problems]
