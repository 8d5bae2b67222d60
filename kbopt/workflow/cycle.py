"""The optimization cycle as an explicit, persisted state machine.

    ANALYZE -> PROFILE -> SELECT -> STRATEGIZE -> DESIGN -> VERIFY -> EVALUATE -+-> LEARN -> DONE
                            ^                                                  |
                            +---------------- target not met ------------------+

- ANALYZE reads the devlog's overview and current best results (and a stress
  configuration the devlog asks for).
- PROFILE measures the baseline at every configuration first (a target on a metric the
  measurements lack stops the run there: it could never be judged), profiles the primary
  one, and updates the devlog's performance section.
- SELECT picks the language from the control the top-ranked entries need (warp-level:
  CuTe DSL; tile-level: Triton, or the TileIR backend on Blackwell when a Triton kernel
  exists), the measured device's SM and the versions that exist (`kbopt.workflow.select`);
  a language given by the user or the designer is kept, its reason saying whether it gives
  the control needed.  The reason goes into the record and the Optimization Task.
- STRATEGIZE ranks the shared + chosen-language catalog against the profile.
- DESIGN backs up the kernel folder and the devlog, hands ONE optimization to the designer
  (Optimization Task -> New Version contracts).  A step never writes the version it starts
  from, nor an existing version this run did not write (`kbopt.workflow.designers`).
- VERIFY refuses a step that did write one, imports every Python file the step touched,
  then measures the new version at every configuration; a refused step, a file that does
  not import, a correctness failure, a run failure or a slowdown over 5% at any
  configuration restores every file byte for byte; otherwise the new version becomes
  current and is profiled against the previous one.  Either way an Optimization Applied
  report and a devlog entry are written.
- EVALUATE stops when the target holds at every configuration or at the iteration limit.
- LEARN writes back through the store (`kbopt.workflow.learn`) and lints the catalog.
- DONE renders the Optimization Summary to `runs/<id>/summary.md`.

The record is saved after every transition and measurement, so `resume` continues a run
that was killed at any point (see `kbopt.workflow.record`).  A new run that fails before
its baseline is profiled (no such version, no GPU, counters required but unreadable)
leaves no run behind: there is nothing to resume.

The fake backend's figures are stand-ins: they stay in the run's record and never reach
the kernel's devlog (performance section, current best, entries) or the catalog.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from kbopt.bench.backend import (
    FAKE_DEVICE_NAME,
    Measurement,
    MeasurementBackend,
    measure_with_backoff,
)
from kbopt.bench.trials import TrialConfig, stress_from_devlog
from kbopt.contracts.new_version import NewVersion
from kbopt.contracts.profile import Profile
from kbopt.contracts.reports import (
    MetricRow,
    OptimizationApplied,
    OptimizationSummary,
    Outcome,
    StepStatus,
    SummaryStep,
    impact_text,
    pct_change,
)
from kbopt.contracts.task import Constraints, OptimizationTask, TaskOptimization
from kbopt.devlog import BEST, Devlog, devlog_path, relative_link
from kbopt.errors import KbError, VersionFailed
from kbopt.kernel import KernelSpec, load_spec
from kbopt.markdown import render_table
from kbopt.model import Trigger
from kbopt.store import Store, atomic_write
from kbopt.vocab import Language
from kbopt.workflow import record as rec
from kbopt.workflow.designers import (
    DesignContext,
    Designer,
    DesignerUnavailable,
    Proposal,
    StepRefused,
)
from kbopt.workflow.kernel_tests import import_problems, run_kernel_tests
from kbopt.workflow.learn import run_learn
from kbopt.workflow.prerequisites import check_prerequisites, specialist_line
from kbopt.workflow.profiler import CYCLE_COUNTER_MODES, profile_version, update_devlog
from kbopt.workflow.record import Attempt, AttemptStatus, RunRecord, State
from kbopt.workflow.safe import Snapshot

PLANNED = 3  # the top-ranked opportunities SELECT reads the needed control from
THROUGHPUT_RIDGE = 100.0  # FLOPs per byte above which a kernel's work is counted in FLOPs
REGRESSION_PCT = 5.0  # W5: more than 5% slower is a regression
CONTROL_LEVEL = {
    "triton": "tile-level (Triton: blocks, dots, pipelining stages)",
    "cute-dsl": "thread/warp-level (CuTe DSL: layouts, TMA, wgmma, warp specialization)",
    "cutile-dsl": "tile-level (cuTile)",
    "tileir": "tile-level (Triton on the TileIR backend)",
}


@dataclass
class Cycle:
    root: Path
    folder: Path
    record: RunRecord
    spec: KernelSpec
    backend: MeasurementBackend
    designer: Designer
    store: Store
    on_state: Callable[[RunRecord], None] | None = None  # called after each save (tests, CLI)
    fresh: bool = False  # started by this process (not resumed): see `run`

    # ------------------------------------------------------------------ plumbing

    @property
    def configs(self) -> list[TrialConfig]:
        return [TrialConfig.from_dict(c) for c in self.record.configs]

    def save(self) -> None:
        rec.save(self.record, self.folder)
        if self.on_state is not None:
            self.on_state(self.record)

    @property
    def fake(self) -> bool:
        """Stand-in figures (the fake backend): they never enter the devlog."""
        return self.record.backend == "fake" or any(
            m.get("device") == FAKE_DEVICE_NAME for m in self.record.baseline.values()
        )

    def go(self, state: State, message: str = "") -> None:
        if message:
            self.record.log(message)
        self.record.state = state
        self.save()

    def run(self) -> RunRecord:
        """Run until DONE, or until a designer's answer is pending (state stays DESIGN)."""
        handlers: dict[State, Callable[[], bool]] = {
            State.ANALYZE: self.analyze,
            State.PROFILE: self.profile,
            State.SELECT: self.select,
            State.STRATEGIZE: self.strategize,
            State.DESIGN: self.design,
            State.VERIFY: self.verify,
            State.EVALUATE: self.evaluate,
            State.LEARN: self.learn,
        }
        bind = getattr(self.designer, "bind", None)
        if callable(bind):  # a designer that reads the catalog and the spec (catalog)
            bind(store=self.store, spec=self.spec, run_dir=self.folder, record=self.record)
        try:
            while self.record.state is not State.DONE:
                if not handlers[self.record.state]():
                    return self.record  # paused: waiting for a designer
        except KbError:
            self._discard_if_stillborn()
            raise
        return self.record

    def _discard_if_stillborn(self) -> None:
        """A new run that failed before its baseline was profiled (no such version, no GPU,
        counters required but unreadable) has nothing to resume: `--resume` would only fail
        again.  Remove its record (and its folder when nothing else is in it)."""
        r = self.record
        if not self.fresh or r.attempts or r.state not in (State.ANALYZE, State.PROFILE):
            return
        (self.folder / rec.RECORD_NAME).unlink(missing_ok=True)
        with contextlib.suppress(OSError):  # something else is in the folder: leave it
            self.folder.rmdir()

    # ------------------------------------------------------------------ states

    def analyze(self) -> bool:
        r = self.record
        devlog = Devlog.for_kernel(self.root, r.kernel)
        r.devlog_overview = devlog.overview[:4000]
        r.devlog_best = devlog.current_best[:4000]
        stress = stress_from_devlog(devlog.render(), self.spec)
        if stress is not None and all(c["name"] != "stress" for c in r.configs):
            r.configs.append({**stress.as_dict(), "name": "stress"})
            r.log(f"devlog asks for a stress configuration: {stress.shape} -- {stress.why}")
        known = self.backend.versions(self.spec)
        if r.start_version not in known:
            raise KbError(
                f"{r.kernel} has no version {r.start_version!r}; known: {', '.join(known)}"
            )
        self.go(State.PROFILE, "read the devlog overview and current best results")
        return True

    def profile(self) -> bool:
        r = self.record
        for cfg in self.configs:
            m = measure_with_backoff(self.backend, self.spec, r.current_version, cfg)
            if not m.correct:
                raise KbError(
                    f"the starting version {r.current_version} fails its correctness check at "
                    f"{cfg.shape} (error {m.error}); fix it before optimizing"
                )
            r.baseline[cfg.name] = m.as_dict()
            self.save()
        self._check_target_measured()
        r.current = dict(r.baseline)
        primary = self.configs[0]
        run = profile_version(
            self.backend,
            self.spec,
            r.current_version,
            primary,
            counters="auto" if r.counters == "baseline" else r.counters,
            language=r.language,
            store=self.store,
            measurement=Measurement.from_dict(r.baseline[primary.name]),
        )
        r.profile = r.baseline_profile = run.profile.render()
        r.profile_from_counters = run.from_counters
        r.warnings = run.warnings
        note = ""
        if self.fake:
            note = "; the devlog is left as it is (the fake backend's figures are stand-ins)"
        else:
            update_devlog(self.root, run)
        self.go(
            State.SELECT,
            f"baseline measured; {run.classification.bottleneck.value}-bound{note}",
        )
        return True

    def _check_target_measured(self) -> None:
        """EVALUATE judges the target on each configuration's measurement: a metric they do
        not carry (a counter read only in a profile, a metric this backend never gives)
        could never be judged, so the run stops before it changes anything."""
        r = self.record
        target = parse_target(r.target)
        lacking = [
            name
            for name, d in r.baseline.items()
            if target.metric not in Measurement.from_dict(d).all_metrics()
        ]
        if lacking:
            first = Measurement.from_dict(r.baseline[lacking[0]])
            raise KbError(
                f"--target {r.target!r}: the {r.backend} backend does not measure "
                f"{target.metric} at {', '.join(lacking)}, so the target could never be "
                f"judged; its measurements carry {', '.join(sorted(first.all_metrics()))}"
            )

    def select(self) -> bool:
        r = self.record
        from kbopt.strategy import ALL_LANGUAGES, recommend
        from kbopt.workflow.select import Planned, choose_language, existing_languages

        ranked = recommend(
            Profile.parse(r.profile), language=ALL_LANGUAGES, store=self.store, limit=PLANNED
        )
        planned = []
        for o in ranked.opportunities:
            entry = self.store.get(o.id)
            text = f"{o.id} {o.title} {entry.mechanism}"
            planned.append(Planned(o.id, str(o.language) if o.language else None, text))
        devices = [str(m.get("device", "")) for m in r.baseline.values()]
        families = {self.spec.version_family(v) or "" for v in self.spec.version_files()}
        designer_language = getattr(self.designer, "language", None)
        given, given_by = (
            (r.language, "the user")
            if r.language
            else (str(designer_language), "the designer")
            if designer_language
            else (None, "")
        )
        choice = choose_language(
            planned,
            device=devices[0] if devices else "",
            existing=existing_languages(families),
            given=given,
            given_by=given_by,
        )
        lang, why = choice.language, choice.reason
        Language(lang)  # a closed vocabulary: refuse anything else early
        r.selected_language, r.selection_reason = lang, why
        self.go(State.STRATEGIZE, f"language {lang}: {why}")
        return True

    def strategize(self) -> bool:
        self.go(State.DESIGN, self._rank())
        return True

    def _rank(self) -> str:
        """Rank the catalog for the current profile into the record's plan and warnings;
        what was ranked, in words."""
        from kbopt.strategy import recommend

        r = self.record
        strategy = recommend(
            Profile.parse(r.profile), language=r.selected_language, store=self.store, limit=10
        )
        r.plan = [o.to_dict() for o in strategy.opportunities]
        r.warnings = [f"{w.id} ({w.path})" for w in strategy.warnings]
        top = ", ".join(o.id for o in strategy.opportunities[:3]) or "none"
        return f"ranked {len(r.plan)} opportunities; top: {top}"

    def _timed_kept(self) -> list[tuple[float, str, dict, str]]:
        """(time at the primary configuration, version, measurements, profile) of the start
        and of every version the run kept, in the order they were kept."""
        primary = self.configs[0].name
        return [
            (float(m[primary]["duration_us"]), v, m, p)
            for m, v, p in self._kept()
            if "duration_us" in m.get(primary, {})
        ]

    def _propose_from(
        self, version: str, measurements: dict, profile: str
    ) -> tuple[Proposal, str] | None:
        """Move the run to `version` (kept before), rank its profile again and ask the
        catalog designer for a move from there: the proposal and what was ranked, in
        words; None, with the run put back where it was, when no move is open there."""
        r = self.record
        left = (r.current_version, r.current, r.profile, r.plan, r.warnings)
        r.current_version, r.current, r.profile = version, dict(measurements), profile
        ranked = self._rank()
        try:
            proposal = self.designer.propose(r, r.plan)
        except DesignerUnavailable:
            proposal = None
        if proposal is None:
            r.current_version, r.current, r.profile, r.plan, r.warnings = left
            return None
        return proposal, ranked

    def _propose_from_the_fastest(self) -> Proposal | None:
        """The catalog designer's move from the fastest version this run kept, when the
        current version was kept more than `PLATEAU_PCT` slower than it and a move is open
        there: the run goes on from the fastest (its profile ranked again), as `kbopt
        ablate`'s walks do; the slower version stays kept, for when the fastest has no move
        left (`_propose_from_an_earlier_version`).  None otherwise (the current version
        and its ranking stay)."""
        from kbopt.workflow.search_momentum import PLATEAU_PCT

        r = self.record
        primary = self.configs[0].name
        timed = self._timed_kept()
        here = r.current.get(primary, {}).get("duration_us")
        if self.designer.name != "catalog" or not timed or here is None:
            return None
        best_us, version, measurements, profile = min(timed, key=lambda t: t[0])
        slower_pct = (float(here) - best_us) / best_us * 100
        if version == r.current_version or not profile or slower_pct <= PLATEAU_PCT:
            return None
        left = r.current_version
        found = self._propose_from(version, measurements, profile)
        if found is None:
            return None
        proposal, ranked = found
        r.log(
            f"going on from {version}, the fastest version this run kept ({best_us:.1f} us at "
            f"{primary}), rather than from {left}, kept {slower_pct:.1f}% slower: moves "
            f"made below the best seldom beat it; {ranked}"
        )
        return proposal

    def _propose_from_an_earlier_version(self, exc: DesignerUnavailable) -> Proposal | None:
        """When no catalog move is left from the fastest version: the move from the latest
        other version the run kept that still has one (a version kept below the fastest,
        left for it), the run moved there.  None when no kept version has a move left."""
        r = self.record
        if self.designer.name != "catalog":
            return None
        here = r.current_version
        for us, version, measurements, profile in reversed(self._timed_kept()):
            if version == here or not profile:
                continue
            found = self._propose_from(version, measurements, profile)
            if found is None:
                continue
            proposal, ranked = found
            for detail in exc.details:
                r.log(f"{self.designer.name} designer: {detail}")
            r.log(
                f"no catalog move left from {here}; going back to {version}, kept earlier "
                f"({us:.1f} us at {self.configs[0].name}), which still has one; {ranked}"
            )
            return proposal
        return None

    def design(self) -> bool:
        r = self.record
        attempt = r.attempts[-1] if r.attempts else None
        if attempt is not None and attempt.status is AttemptStatus.DESIGNING:
            # Interrupted while the designer worked: start from the backed-up files again.
            restored = Snapshot.load(self.folder / attempt.backup_dir).restore()
            if restored:
                r.log(f"resumed: restored {len(restored)} file(s) of the interrupted design")
        elif attempt is None or attempt.status is not AttemptStatus.WAITING:
            try:
                proposal = self._propose_from_the_fastest() or self.designer.propose(r, r.plan)
            except DesignerUnavailable as exc:
                if self._go_on_from_the_fastest(exc):
                    return True
                proposal = self._propose_from_an_earlier_version(exc)
                if proposal is None:
                    return self._designer_blocked(exc)
            if proposal is None:
                r.stop_reason = r.stop_reason or "the designer has nothing left to try"
                self.go(State.LEARN, r.stop_reason)
                return True
            attempt = self._new_attempt(proposal)
        ctx = DesignContext(
            root=self.root,
            kernel=r.kernel,
            spec=self.spec,
            run_dir=self.folder,
            iteration=attempt.iteration,
            backend=self.backend,
            configs=self.configs,
            devlog_path=devlog_path(self.root, r.kernel),
            protected=self._protected(attempt),
        )
        task = OptimizationTask.parse(attempt.task)
        try:
            nv = self.designer.design(task, ctx)
        except DesignerUnavailable as exc:
            # Nothing was designed: put the files back and take the attempt off the record.
            Snapshot.load(self.folder / attempt.backup_dir).restore()
            r.attempts.remove(attempt)
            r.iteration -= 1
            return self._designer_blocked(exc)
        except StepRefused as exc:  # nothing written: VERIFY records the refusal
            attempt.reason = f"refused: {exc}"
            nv = NewVersion(
                kernel=r.kernel,
                version=attempt.new_version,
                changes=[f"not made: {exc}"],
                correct=False,
                correctness_detail="the step was refused",
            )
        except KbError as exc:
            nv = NewVersion(
                kernel=r.kernel,
                version=attempt.new_version,
                changes=[f"not made: {exc}"],
                correct=False,
                correctness_detail=f"the designer could not make the change: {exc}",
            )
        if nv is None:
            attempt.status = AttemptStatus.WAITING
            self.go(State.DESIGN, f"waiting for the {self.designer.name} designer's new version")
            return False
        attempt.new_version = nv.version
        attempt.new_version_summary = nv.render()
        attempt.status = AttemptStatus.VERIFYING
        said = "'s step was refused" if attempt.reason else f" returned {nv.version}"
        self.go(State.VERIFY, f"{self.designer.name} designer{said}")
        return True

    def _protected(self, attempt: Attempt) -> dict[Path, str]:
        """The files the step must not write, and why (`DesignContext.protected`)."""
        start = self.spec.version_path(attempt.from_version)
        out = {start: f"the version the step starts from ({attempt.from_version})"}
        new = self.spec.version_path(attempt.new_version)
        # The first attempt's backup holds the kernel's files as they were before this run
        # changed any: a new version found there is someone's own work, not this run's.
        first = Snapshot.load(self.folder / self.record.attempts[0].backup_dir)
        if new != start and first.existed(new):
            out[new] = (
                f"an existing version ({attempt.new_version}) this run did not write; "
                "give the step a new version name"
            )
        return out

    def _kept(self) -> list[tuple[dict, str, str]]:
        """(measurements, version, profile) of the start and of every version the run kept."""
        r = self.record
        return [(r.baseline, r.start_version, r.baseline_profile)] + [
            (a.measurements, a.new_version, a.profile)
            for a in r.attempts
            if a.status is AttemptStatus.APPLIED
        ]

    def _go_on_from_the_fastest(self, exc: DesignerUnavailable) -> bool:
        """When the catalog designer has no move left from the current version, and the run
        kept a faster one before it (a change within the regression limit is kept, so the
        run can wander a plateau), go on from that version: rank its profile again and
        design from it, as `kbopt ablate`'s walks do.  False when there is none."""
        from kbopt.workflow.catalog_designer import NO_MOVE, UNPLANNED

        r = self.record
        if str(exc) != NO_MOVE and not str(exc).startswith(UNPLANNED):
            return False
        primary = self.configs[0].name
        timed = self._timed_kept()
        if not timed:
            return False
        best_us, version, measurements, profile = min(timed, key=lambda t: t[0])
        if version == r.current_version or not profile:
            return False
        left = r.current_version
        for detail in exc.details:
            r.log(f"{self.designer.name} designer: {detail}")
        r.current_version, r.current, r.profile = version, dict(measurements), profile
        self.go(
            State.STRATEGIZE,
            f"no catalog move left from {left}; going on from {version}, the fastest version "
            f"this run kept ({best_us:.1f} us at {primary})",
        )
        return True

    def _designer_blocked(self, exc: DesignerUnavailable) -> bool:
        """Stop: the designer cannot go on.  LEARN still records what the run did."""
        r = self.record
        r.designer_blocked = r.stop_reason = str(exc)
        for detail in exc.details:
            r.log(f"{self.designer.name} designer: {detail}")
        self.go(State.LEARN, f"{self.designer.name} designer stopped: {exc}")
        return True

    def _new_attempt(self, proposal: Proposal) -> Attempt:
        r = self.record
        r.iteration += 1
        rank = next((i for i, o in enumerate(r.plan, 1) if o["id"] == proposal.optimization), None)
        if proposal.link is None and _is_entry_name(proposal.optimization):
            path = self.store.find(proposal.optimization)
            if path is not None:  # a catalog entry the strategy did not rank: still link it
                entry = self.store.read_file(path)
                proposal.link = self.store.public_path(path)
                proposal.title = entry.title
        attempt = Attempt(
            iteration=r.iteration,
            optimization=proposal.optimization,
            optimization_title=proposal.title or proposal.optimization,
            optimization_link=proposal.link,
            strategy_rank=rank,
            from_version=r.current_version,
            new_version=proposal.new_version,
            language=proposal.language or r.selected_language,
            backup_dir=f"backups/{r.iteration}",
            learn_draft=proposal.learn_draft,
        )
        kernel_dir = self.spec.folder
        Snapshot.take(
            self.root,
            [kernel_dir, devlog_path(self.root, r.kernel)],
            self.folder / attempt.backup_dir,
        )
        attempt.task = self._task(attempt, proposal).render()
        r.attempts.append(attempt)
        r.log(
            f"attempt {attempt.iteration}: {attempt.optimization} "
            f"({attempt.from_version} -> {attempt.new_version}); strategy rank {rank or 'unranked'}; "
            "files backed up"
        )
        self.save()
        return attempt

    def _task(self, attempt: Attempt, proposal: Proposal) -> OptimizationTask:
        profile = Profile.parse(self.record.profile)
        metrics = profile.metrics
        lang = attempt.language or "triton"
        regs = metrics.get("registers_per_thread")
        occ = metrics.get("achieved_occupancy_pct")
        return OptimizationTask(
            kernel=self.record.kernel,
            current_version=attempt.from_version,
            new_version=attempt.new_version,
            bottleneck=profile.bottleneck,
            bottleneck_detail=profile.root_cause,
            optimizations=[
                TaskOptimization(
                    name=attempt.optimization_title or attempt.optimization,
                    rationale=proposal.rationale or "ranked by the strategy",
                    link=attempt.optimization_link,
                )
            ],
            constraints=Constraints(
                register_budget=int(regs) if regs else None,
                target_occupancy_pct=round(occ, 1) if occ else None,
                control_level=CONTROL_LEVEL.get(lang, "")
                + (
                    f"; language chosen because {self.record.selection_reason}"
                    if self.record.selection_reason
                    else ""
                ),
                language=Language(lang),
                language_constraints=[
                    f"keep the signature of {self.spec.entry_point}(), which every version of "
                    f"{self.spec.name} exports (the reference's, in {self.spec.locator})"
                ],
            ),
        )

    def verify(self) -> bool:
        r = self.record
        attempt = r.attempts[-1]
        if attempt.status is AttemptStatus.ROLLING_BACK:
            self._rollback(attempt, attempt.reason)
            return True
        nv = NewVersion.parse(attempt.new_version_summary)
        reason = attempt.reason or self._check_step(attempt)
        if not reason and not nv.correct:
            reason = (
                f"correctness: the designer reported FAIL ({nv.correctness_detail or 'no detail'})"
            )
        for cfg in self.configs if not reason else []:
            try:
                m = measure_with_backoff(self.backend, self.spec, attempt.new_version, cfg)
            except VersionFailed as exc:  # the new code raised when called: a failed change
                reason = f"correctness: {attempt.new_version} failed to run: {exc}"
                break
            except KbError:
                raise
            except Exception as exc:  # the new code does not run: a failed change
                reason = f"correctness: {attempt.new_version} failed to run at {cfg.shape}: {type(exc).__name__}: {exc}"
                break
            attempt.measurements[cfg.name] = m.as_dict()
            before = Measurement.from_dict(r.current[cfg.name])
            attempt.changes_pct[cfg.name] = round(
                (m.duration_us - before.duration_us) / before.duration_us * 100, 2
            )
            self.save()
            if not m.correct:
                reason = (
                    f"correctness: error {m.error:.3g} above tolerance {m.tolerance} at {cfg.shape}"
                )
                break
        if not reason and self.backend.name != "fake":
            # The kernel's own tests, on the new version in place (the fake backend runs
            # no code, so neither does this).
            attempt.tests = run_kernel_tests(self.spec, self.root)
            self.save()
            if attempt.tests["ran"] and not attempt.tests["passed"]:
                reason = f"correctness: the kernel's tests failed ({attempt.tests['detail']})"
        if not reason:
            worst = max(attempt.changes_pct, key=lambda k: attempt.changes_pct[k])
            if attempt.changes_pct[worst] > REGRESSION_PCT:
                reason = (
                    f"regression: {attempt.changes_pct[worst]:+.1f}% at {worst} "
                    f"(limit +{REGRESSION_PCT:g}%)"
                )
        if not reason:
            reason = self._drift(attempt)
        if reason:
            attempt.reason = reason
            attempt.status = AttemptStatus.ROLLING_BACK
            self.save()  # decided before acting: a crash mid-restore finishes it on resume
            self._rollback(attempt, reason)
            return True
        self._keep(attempt)
        return True

    def _check_step(self, attempt: Attempt) -> str:
        """Why the step must be rolled back before it is measured, or "": it wrote a file it
        must not (whatever its designer), or a Python file it touched no longer imports."""
        snapshot = Snapshot.load(self.folder / attempt.backup_dir)
        changed = snapshot.changed()
        for path, why in self._protected(attempt).items():
            if snapshot.rel(path) in changed:
                return f"refused: the step changed {snapshot.rel(path)}, {why}"
        touched = [
            snapshot.root / rel
            for rel in changed
            if rel.endswith(".py") and (snapshot.root / rel).is_file()
        ]
        problems = import_problems(touched, self.root, allow_missing_packages=self.fake)
        if problems:
            more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
            return f"correctness: a file the step touched does not import: {problems[0]}{more}"
        return ""

    def _drift(self, attempt: Attempt) -> str:
        """A change within the limit of the version it replaced is still a regression when
        it is more than the limit slower than the fastest version this run has kept (or its
        start): otherwise a chain of small losses, each kept, could add up to a large one."""
        versions = self._kept()
        for name, measured in attempt.measurements.items():
            now = float(measured["duration_us"])
            fastest = [(float(m[name]["duration_us"]), v) for m, v, _ in versions if name in m]
            if not fastest:
                continue
            best_us, best_version = min(fastest)
            change = (now - best_us) / best_us * 100
            if change > REGRESSION_PCT:
                return (
                    f"regression: {change:+.1f}% at {name} against the fastest version this "
                    f"run kept ({best_version}, {best_us:.1f} us; limit +{REGRESSION_PCT:g}%)"
                )
        return ""

    def _rollback(self, attempt: Attempt, reason: str) -> None:
        attempt.restored = (
            Snapshot.load(self.folder / attempt.backup_dir).restore() or attempt.restored
        )
        attempt.status = AttemptStatus.ROLLED_BACK
        attempt.report = self._report(attempt, Outcome.ROLLED_BACK, reason).render()
        self._devlog_entry(attempt, "rolled back", reason)
        self.go(State.EVALUATE, f"attempt {attempt.iteration} rolled back: {reason}")

    def _keep(self, attempt: Attempt) -> None:
        r = self.record
        primary = self.configs[0]
        previous = Measurement.from_dict(r.current[primary.name])
        r.current = dict(attempt.measurements)
        r.current_version = attempt.new_version
        attempt.status = AttemptStatus.APPLIED
        run = profile_version(
            self.backend,
            self.spec,
            attempt.new_version,
            primary,
            counters="skip" if r.counters == "baseline" else r.counters,
            language=r.selected_language,
            previous=previous,
            store=self.store,
            measurement=Measurement.from_dict(attempt.measurements[primary.name]),
        )
        r.profile = attempt.profile = run.profile.render()
        r.profile_from_counters = run.from_counters
        if not self.fake:
            update_devlog(self.root, run)
        gains = ", ".join(f"{k} {v:+.1f}%" for k, v in attempt.changes_pct.items())
        attempt.report = self._report(attempt, Outcome.SUCCESS, f"time change {gains}").render()
        self._devlog_entry(attempt, "applied", f"time change {gains}")
        self.go(State.EVALUATE, f"attempt {attempt.iteration} kept: {gains}")

    def _report(self, attempt: Attempt, outcome: Outcome, detail: str) -> OptimizationApplied:
        rows = []
        for name, after_d in attempt.measurements.items():
            before = Measurement.from_dict(self._before(attempt, name))
            rows += comparison_rows(name, before, Measurement.from_dict(after_d), self.spec)
        r = self.record
        language = attempt.language or r.selected_language or "triton"
        checks = check_prerequisites(
            tests=attempt.tests,
            version=attempt.new_version,
            language=language,
            measurements={k: Measurement.from_dict(v) for k, v in attempt.measurements.items()},
            baseline={k: Measurement.from_dict(v) for k, v in r.baseline.items()},
            baseline_version=r.start_version,
        )
        if outcome is Outcome.SUCCESS and attempt.changes_pct:
            best = -min(attempt.changes_pct.values())
            detail = f"Achieved {best:.1f}% improvement ({detail})"
        nv = NewVersion.parse(attempt.new_version_summary)
        return OptimizationApplied(
            name=attempt.optimization,
            prerequisites=checks,
            specialist=specialist_line(language, self.designer.name),
            changes=f"{attempt.from_version} -> {attempt.new_version}: " + "; ".join(nv.changes),
            validation=rows,
            outcome=outcome,
            outcome_detail=detail,
        )

    def _before(self, attempt: Attempt, cfg_name: str) -> dict:
        if attempt.status is AttemptStatus.APPLIED:
            # r.current now holds the new version: the "before" is the version it was made
            # from (the previous kept one, or an earlier one the run went back to).
            for prev in reversed(self.record.attempts[: attempt.iteration - 1]):
                if (
                    prev.status is AttemptStatus.APPLIED
                    and prev.new_version == attempt.from_version
                ):
                    return prev.measurements[cfg_name]
            return self.record.baseline[cfg_name]
        return self.record.current[cfg_name]

    def _devlog_entry(self, attempt: Attempt, outcome: str, detail: str) -> None:
        r = self.record
        if self.fake:
            return  # the run's record keeps the attempt; the devlog takes measurements only
        devlog = Devlog.for_kernel(self.root, r.kernel)
        rows = []
        for name, d in attempt.measurements.items():
            m = Measurement.from_dict(d)
            rows.append(
                [
                    name,
                    m.config.shape,
                    f"{m.duration_us:.1f} us",
                    f"{m.pct_of_floor:.1f}%" if m.pct_of_floor is not None else "-",
                    f"{attempt.changes_pct.get(name, 0.0):+.1f}%",
                    "PASS" if m.correct else "FAIL",
                ]
            )
        date = rec.now()[:10]
        body = [
            f"Optimization: {attempt.optimization_title or attempt.optimization}"
            + (
                f" ([entry]({relative_link(attempt.optimization_link)}))"
                if attempt.optimization_link
                else ""
            ),
            f"Outcome: {outcome} -- {detail}",
            f"Designer: {self.designer.name}; run `{r.run_id}` (backend {r.backend}); from {attempt.from_version}",
            "Strategy rank: "
            + (
                f"#{attempt.strategy_rank} of {len(r.plan)} for this profile"
                if attempt.strategy_rank
                else f"not among the {len(r.plan)} ranked for this profile"
            ),
            "",
        ]
        if rows:
            body.append(
                render_table(["Config", "Shape", "Time", "% of floor", "Change", "Correct"], rows)
            )
        if attempt.restored:
            body += ["", "Restored byte for byte: " + ", ".join(f"`{p}`" for p in attempt.restored)]
        heading = f"{attempt.new_version} -- {date} -- {outcome} (run {r.run_id}, attempt {attempt.iteration})"
        if heading not in {e.heading for e in devlog.entries()}:  # a resumed step writes once
            devlog.add_entry(heading, "\n".join(body))
        devlog.set_block(BEST, self._best_block())
        devlog.save()

    def _best_block(self) -> str:
        r = self.record
        rows = []
        for name, d in r.current.items():
            m = Measurement.from_dict(d)
            rows.append(
                [
                    name,
                    m.config.shape,
                    r.current_version,
                    f"{m.duration_us:.1f} us",
                    f"{m.pct_of_floor:.1f}%" if m.pct_of_floor is not None else "-",
                    m.device,
                    m.date[:10],
                ]
            )
        return f"_Written by `kbopt cycle` (run `{r.run_id}`)._\n\n" + render_table(
            ["Config", "Shape", "Version", "Time", "% of floor", "Device", "Date"], rows
        )

    def evaluate(self) -> bool:
        r = self.record
        target = parse_target(r.target)
        verdicts = {
            name: target.holds(Measurement.from_dict(d).all_metrics())
            for name, d in r.current.items()
        }
        r.target_met = all(v is True for v in verdicts.values()) and bool(verdicts)
        if r.target_met:
            r.stop_reason = "target met"
            self.go(State.LEARN, f"target {r.target} met at every configuration")
        elif r.iteration >= r.max_iterations:
            r.stop_reason = f"iteration limit ({r.max_iterations}) reached"
            self.go(State.LEARN, r.stop_reason)
        else:
            missed = ", ".join(
                name + (" (not measured)" if ok is None else "")
                for name, ok in verdicts.items()
                if ok is not True
            )
            self.go(State.SELECT, f"target {r.target} not met at {missed}")
        return True

    def learn(self) -> bool:
        run_learn(self.store, self.record, self.root, persist=self.save)
        self.record.summary = summary(self.record, self.spec).render()
        atomic_write(self.folder / "summary.md", self.record.summary)
        lint = "clean" if self.record.lint_ok else f"{len(self.record.lint_problems)} problem(s)"
        skipped = sum(1 for item in self.record.learned if item.action == "skipped")
        written = len(self.record.learned) - skipped
        self.go(
            State.DONE,
            f"wrote {written} catalog item(s), skipped {skipped} (the run record says why); "
            f"catalog lint {lint}",
        )
        return True


def progress_printer(stream: TextIO) -> Callable[[RunRecord], None]:
    """Print each new event of a run under the state that wrote it, then DONE once.

    A transition's message describes the state being left (PROFILE ends with "baseline
    measured"), so it is shown under that state, as `record.json` has it; a resumed run
    shows its history from the last event on.
    """
    seen: list[int] = []
    done: list[bool] = []

    def show(record: RunRecord) -> None:
        if not seen:
            seen.append(max(len(record.events) - 1, 0))
        for event in record.events[seen[0] :]:
            print(f"[cycle] {event.state:<10} {event.message}", file=stream)
        seen[0] = len(record.events)
        if record.state is State.DONE and not done:
            done.append(True)
            print(f"[cycle] {State.DONE.value}", file=stream)

    return show


def _is_entry_name(name: str) -> bool:
    from kbopt.model import NAME_RE

    return bool(NAME_RE.match(name))


def summary(r: RunRecord, spec: KernelSpec | None = None) -> OptimizationSummary:
    """The Optimization Summary of a run (with a Throughput row per configuration when the
    kernel's spec is given)."""
    names = [c["name"] for c in r.configs]

    def times(block: dict[str, dict]) -> str:
        parts = []
        for n in names:
            if n in block:
                m = Measurement.from_dict(block[n])
                sol = f", {m.pct_of_floor:.1f}% of floor" if m.pct_of_floor is not None else ""
                parts.append(f"{n} {m.duration_us:.1f} us{sol}")
        return "; ".join(parts)

    steps = []
    for a in r.attempts:
        if a.status not in {AttemptStatus.APPLIED, AttemptStatus.ROLLED_BACK}:
            continue
        primary = names[0]
        before = _before_of(r, a, primary)
        after = a.measurements.get(primary)
        impact = (
            impact_text(
                Measurement.from_dict(before).duration_us, Measurement.from_dict(after).duration_us
            )
            if before and after
            else "not measured"
        )
        details = [f"Version: {a.from_version} -> {a.new_version}"]
        for n in names[1:]:
            b2, a2 = _before_of(r, a, n), a.measurements.get(n)
            if b2 and a2:
                details.append(
                    f"{n}: "
                    + impact_text(
                        Measurement.from_dict(b2).duration_us, Measurement.from_dict(a2).duration_us
                    )
                )
        if a.status is AttemptStatus.ROLLED_BACK:
            label = (
                "Regression detected"
                if a.reason.startswith("regression")
                else "Refused"
                if a.reason.startswith("refused")
                else "Correctness failure"
            )
            impact = f"{label}: {impact}" if impact != "not measured" else label
            details.append(f"Reason: {a.reason}")
        steps.append(
            SummaryStep(
                name=a.optimization_title or a.optimization,
                impact=impact,
                status=StepStatus.APPLIED
                if a.status is AttemptStatus.APPLIED
                else StepStatus.ROLLED_BACK,
                details=details,
            )
        )
    cumulative = []
    for n in names:
        if n not in r.baseline or n not in r.current:
            continue
        cumulative += comparison_rows(
            n, Measurement.from_dict(r.baseline[n]), Measurement.from_dict(r.current[n]), spec
        )
    tried = {a.optimization for a in r.attempts}
    remaining = [
        f"{o['title']} ({o['id']}, est. {o['estimated_gain']}% gain): not tried -- {r.stop_reason or 'run ended'}"
        for o in r.plan
        if o["id"] not in tried
    ][:5]
    remaining += [f"anti-pattern warning: {w}" for w in r.warnings]
    achieved = "goal achieved" if r.target_met else f"goal not achieved ({r.stop_reason})"
    return OptimizationSummary(
        goal=f"{r.target} at every configuration ({', '.join(names)})",
        starting_point=f"{r.start_version}: {times(r.baseline) or 'not measured'}",
        result=f"{r.current_version}: {times(r.current) or 'not measured'}; {achieved}",
        steps=steps,
        cumulative=cumulative,
        remaining=remaining or ["none ranked by the strategy"],
    )


def _before_of(r: RunRecord, a: Attempt, cfg: str) -> dict | None:
    for prev in reversed(r.attempts[: a.iteration - 1]):
        if prev.status is AttemptStatus.APPLIED:
            return prev.measurements.get(cfg)
    return r.baseline.get(cfg)


# ---------------------------------------------------------------------- entry points


def start(
    root: Path,
    *,
    kernel: str | KernelSpec,
    target: str,
    start_version: str,
    backend: MeasurementBackend,
    designer: Designer,
    designer_spec: str,
    configs: list[TrialConfig],
    store: Store,
    max_iterations: int = 4,
    counters: str = "auto",
    language: str | None = None,
    run_id: str | None = None,
    on_state: Callable[[RunRecord], None] | None = None,
) -> Cycle:
    parse_target(target)  # fail early on a malformed target
    if counters not in CYCLE_COUNTER_MODES:
        raise KbError(f"--counters must be one of {', '.join(CYCLE_COUNTER_MODES)}")
    if language is not None:
        Language(language)
    spec = load_spec(kernel, root)
    if run_id is None:
        run_id, folder = _new_run_folder(root, spec.name)
    else:
        folder = rec.run_dir(root, run_id)
        if (folder / rec.RECORD_NAME).exists():
            raise KbError(f"run {run_id} already exists; resume it with --resume {run_id}")
        folder.mkdir(parents=True, exist_ok=True)
    record = RunRecord(
        run_id=run_id,
        kernel=spec.name,
        spec=spec_reference(spec, root),
        created=rec.now(),
        backend=backend.name,
        designer=designer_spec,
        target=target,
        language=language,
        counters=counters,
        configs=[c.as_dict() for c in configs],
        max_iterations=max_iterations,
        start_version=start_version,
        current_version=start_version,
    )
    record.log(f"started by pid {os.getpid()}")
    cycle = Cycle(root, folder, record, spec, backend, designer, store, on_state, fresh=True)
    cycle.save()
    return cycle


def parse_target(text: str) -> Trigger:
    """The run's target, `metric op value`; a KbError naming what is wrong."""
    from kbopt.vocab import OPERATORS

    try:
        return Trigger.parse(text)
    except ValueError as exc:  # pydantic's ValidationError is one
        errors = getattr(exc, "errors", None)
        why = (
            str(errors()[0]["msg"]).removeprefix("Value error, ")
            if errors
            else f"not `metric op number` (operators {' '.join(OPERATORS)}; "
            "e.g. 'pct_of_floor>=50')"
        )
        raise KbError(f"--target {text!r}: {why}") from None


def _new_run_folder(root: Path, kernel: str) -> tuple[str, Path]:
    """A run id of its own: the time stamp, then -2, -3... when another run (perhaps in
    another process) took it this second; the folder is made at once to claim it."""
    stamp = rec.new_run_id(kernel)
    for n in range(1, 1000):
        run_id = stamp if n == 1 else f"{stamp}-{n}"
        folder = rec.run_dir(root, run_id)
        try:
            folder.mkdir(parents=True)
        except FileExistsError:
            continue
        return run_id, folder
    raise KbError(f"{rec.run_dir(root, stamp).parent}: no free run id for {stamp} (999 taken)")


def spec_reference(spec: KernelSpec, root: Path) -> str:
    """How a later process finds the spec: the kernel name for `<root>/kernels/<name>/`,
    a path relative to the project when inside it, else the absolute path or module:attr."""
    if ":" in spec.locator:
        return spec.locator
    path = Path(spec.locator).resolve()
    if path == (Path(root) / "kernels" / spec.name / "spec.py").resolve():
        return spec.name
    try:
        return path.relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        return str(path)


def resume(
    root: Path,
    run_id: str,
    *,
    backend: MeasurementBackend,
    designer: Designer,
    store: Store,
    on_state: Callable[[RunRecord], None] | None = None,
    designer_spec: str | None = None,
) -> Cycle:
    """Continue a run; `designer_spec` records a designer other than the run's own."""
    folder = rec.run_dir(root, run_id)
    record = rec.load(folder)
    spec = load_spec(record.spec or record.kernel, root)
    record.log(f"resumed by pid {os.getpid()} in state {record.state.value}")
    if designer_spec and designer_spec != record.designer:
        record.log(f"designer {record.designer} replaced by {designer_spec}")
        record.designer = designer_spec
    return Cycle(root, folder, record, spec, backend, designer, store, on_state)


def throughput_row(
    config: str, before: Measurement, after: Measurement, spec: KernelSpec
) -> MetricRow | None:
    """Throughput from the spec's work per call: TFLOP/s where the FLOPs dominate the
    kernel's floor (at least THROUGHPUT_RIDGE FLOPs per byte), else GB/s of bytes moved."""
    flops = spec.flops(after.config.dims_dict)
    moved = spec.bytes_moved(after.config.dims_dict)
    if before.config.dims != after.config.dims or not (flops or moved):
        return None
    if moved == 0 or flops / moved >= THROUGHPUT_RIDGE:
        work, scale, unit = flops, 1e6, "TFLOP/s"  # FLOPs per us -> TFLOP/s
    else:
        work, scale, unit = moved, 1e3, "GB/s"  # bytes per us -> GB/s
    b, a = work / before.duration_us / scale, work / after.duration_us / scale
    return MetricRow(
        metric=f"Throughput ({config})",
        before=f"{b:.3g} {unit}",
        after=f"{a:.3g} {unit}",
        change=f"{(a - b) / b * 100:+.1f}%" if b else "n/a",
    )


def comparison_rows(
    config: str, before: Measurement, after: Measurement, spec: KernelSpec | None = None
) -> list[MetricRow]:
    """Throughput (with a spec), latency and SOL% rows of one configuration, for both
    report formats."""
    rows = [] if spec is None else [r for r in [throughput_row(config, before, after, spec)] if r]
    rows += [
        MetricRow(
            metric=f"Latency ({config})",
            before=f"{before.duration_us:.1f} us",
            after=f"{after.duration_us:.1f} us",
            change=pct_change(before.duration_us, after.duration_us),
        )
    ]
    if before.pct_of_floor is not None and after.pct_of_floor is not None:
        rows.append(
            MetricRow(
                metric=f"SOL% ({config})",
                before=f"{before.pct_of_floor:.1f}%",
                after=f"{after.pct_of_floor:.1f}%",
                change=f"{after.pct_of_floor - before.pct_of_floor:+.1f} points",
            )
        )
    return rows
