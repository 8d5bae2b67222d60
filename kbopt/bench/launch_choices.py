"""What a Triton version's launch chooses for the knobs it leaves to the kernel, learnt on
a machine without a GPU.

A version may leave a knob at None ("the kernel chooses": an upstream wrapper's default
warps, a block size from the row width).  On a GPU the launch records what it chose
(`Measurement.launched`) and the catalog designer scales its moves from those values.  The
fake backend runs nothing, so it asks this module: the version's call runs once on CPU
inputs at the configuration's dims, in a process of its own (without TRITON_INTERPRET,
under a time limit), with every `@triton.jit` launch compiled for sm_90 and never run
(`kbopt.bench.compile_only`).  The values are the plain ones the version recorded in its
spec's `launch_info` dict, plus the warps and stages of the launch when every kernel it
compiled agrees on them (the real backend takes them from the heaviest launch, which needs
a timing), each also under the name of the knob it sets (`kbopt.moves.launched_by_knob`).
These are facts of the code, not measurements.

    python -m kbopt.bench.launch_choices SPEC VERSION DIMS_JSON [PARAMS_JSON]

prints `{"launched": {...}, "metrics": {...}}` (the catalog metrics the launch recorded:
`kbopt kernel check --launch` counts them as stated), or `{"error": "..."}` when the call could not be followed
here (one that reads the GPU's SM count to choose its launch, say): the values then stay
unknown, as they were before.  A `ValueError` raised by the spec's own code (its launcher
refusing a tile that would not fit, checked in Python before any kernel runs) answers
`{"refused": "..."}` instead: that check gives the same answer on a GPU, so the
configuration is a failed version there too, not an unknown.  `--serve` answers such
requests, one JSON object a line on stdin (`spec`, `version`, `dims`, `params`), for as
long as its input stays open: `LaunchFollower` keeps one such process so that torch and
Triton are imported once.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import subprocess
import sys
import time
import traceback
import weakref
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kbopt.kernel import KernelSpec

USAGE = "usage: python -m kbopt.bench.launch_choices SPEC VERSION DIMS_JSON [PARAMS_JSON]"
# Importing torch and Triton and compiling a few kernels takes seconds; a call that takes
# minutes on CPU inputs is not worth waiting for in a dry run.
TIMEOUT_S = float(os.environ.get("KBOPT_LAUNCH_CHOICES_TIMEOUT_S", "120"))
ARCH = 90  # what the H100 and H200 run, and what every measured version here was built for
# A follower process with nothing to do for this long ends (its owner starts another when
# it asks again): a search asks every few seconds, and an idle one holds memory.
IDLE_S = float(os.environ.get("KBOPT_LAUNCH_CHOICES_IDLE_S", "60"))
# Marks the answer line: a version's own prints go to stderr while it is followed, but a
# library may still write to stdout.
ANSWER = "kbopt-launch-choices "


class Refused(Exception):
    """The version's own code refused the configuration (see `own_refusal`)."""


def own_refusal(exc: BaseException, folder: Path) -> bool:
    """A `ValueError` whose innermost frame is in the spec's folder: the launcher's own
    check of its configuration (a tile past the values a thread may hold), plain Python on
    shapes and knob values that runs the same on a GPU.  Errors raised inside torch,
    Triton or a third-party wrapper are not taken as refusals: on CPU tensors they may only
    mean that the call needs a GPU."""
    if not isinstance(exc, ValueError):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    return Path(frames[-1].filename).resolve().is_relative_to(folder.resolve())


class LaunchFollower:
    """A process of its own that follows version launches, kept while its owner uses it
    (torch and Triton are imported once, not once a version): `learn` sends it one request
    a line and reads one answer a line.  It ends with its owner, or after IDLE_S seconds
    without a request (the next one starts another)."""

    def __init__(self, root: Path, timeout_s: float = TIMEOUT_S) -> None:
        self.root = root
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen[str] | None = None
        # The catalog metrics the last launch followed recorded ({} when it was not known).
        self.last_metrics: dict[str, float] = {}

    def learn(
        self,
        spec: KernelSpec,
        version: str,
        dims: Mapping[str, int],
        params: Mapping[str, Any] | None,
    ) -> tuple[dict[str, Any], str | None]:
        """(what the launch chose, None), or ({}, why it is not known).  Raises
        VersionFailed when the version's own launcher refuses the configuration."""
        request = {
            "spec": spec.locator,
            "version": version,
            "dims": dict(dims),
            "params": dict(params or {}),
        }
        self.last_metrics = {}
        for attempt in (1, 2):
            proc = self._started()
            try:
                assert proc.stdin is not None
                proc.stdin.write(json.dumps(request, default=str) + "\n")
                proc.stdin.flush()
                line = self._answer(proc)
            except OSError:  # it had ended before the request went in (idle)
                line = None
            if line is not None:
                break
            code = proc.poll()
            self.close()
            if code is None:
                return {}, f"compiling its launch took more than {self.timeout_s:g} s"
            if code != 0 or attempt == 2:  # 0: it ended idle as the request went in
                return {}, f"the process that follows launches exited with status {code}"
        assert line is not None
        try:
            answer = json.loads(line)
        except json.JSONDecodeError:
            return {}, f"an unreadable answer: {line.strip()[:200]}"
        if isinstance(answer.get("launched"), dict):
            if isinstance(answer.get("metrics"), dict):
                self.last_metrics = dict(answer["metrics"])
            return dict(answer["launched"]), None
        if answer.get("refused"):
            from kbopt.errors import VersionFailed

            raise VersionFailed(f"its launcher refuses this configuration: {answer['refused']}")
        return {}, str(answer.get("error") or "no answer")[:300]

    def _started(self) -> subprocess.Popen[str]:
        if self.proc is not None and self.proc.poll() is not None:
            self.close()  # it ended idle: its pipes go with it
        if self.proc is None:
            env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
            env["PYTHONPATH"] = os.pathsep.join(
                p for p in (str(self.root), env.get("PYTHONPATH", "")) if p
            )
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "kbopt.bench.launch_choices", "--serve"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,  # a version's chatter; errors come back as answers
                text=True,
                env=env,
                cwd=self.root,
            )
            weakref.finalize(self, _stop, self.proc)  # with its owner, not at its idle end
        return self.proc

    def _answer(self, proc: subprocess.Popen[str]) -> str | None:
        """The next answer line, or None when none came in time or the process ended."""
        assert proc.stdout is not None
        deadline = time.monotonic() + self.timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(proc.stdout, selectors.EVENT_READ)
            while True:
                left = deadline - time.monotonic()
                if left <= 0 or not sel.select(left):
                    return None
                line = proc.stdout.readline()
                if not line:
                    return None  # it exited
                if line.startswith(ANSWER):
                    return line[len(ANSWER) :]

    def close(self) -> None:
        if self.proc is not None:
            _stop(self.proc)
            self.proc = None


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.wait()
    for stream in (proc.stdin, proc.stdout):
        if stream is not None:
            stream.close()


def chosen(info: Mapping[str, Any], compiled: list[dict[str, Any]]) -> dict[str, Any]:
    """The plain values a launch recorded, and the warps and pipeline stages every kernel it
    compiled shares.

    The call runs on CPU tensors: a launcher that chooses a value from the GPU (resident
    programs from the compiled kernel's registers) takes a stand-in on this path, and one
    that marks it so (`<name>_from: "interpreter"`) has that value left out."""
    stand_ins = {
        name
        for key, value in info.items()
        if value == "interpreter" and (name := key.removesuffix("_from")) != key
    }
    out = {
        k: v
        for k, v in info.items()
        if isinstance(v, int | float | str) and k.removesuffix("_from") not in stand_ins
    }
    for key in ("num_warps", "num_stages"):
        values = {k[key] for k in compiled}
        if len(values) == 1:
            out.setdefault(key, values.pop())
    return out


# The last shape's inputs, made once: a search follows many knob values at one shape, and
# drawing a large shape's inputs on the CPU costs more than following the call.  They are
# shared, not copied (a copy of a large shape's inputs doubles the memory a follow needs):
# a call that writes into its inputs changes their values for the next, and only a launch
# that chooses from values rather than shapes would notice.
_LAST_INPUTS: dict[str, tuple[Any, ...]] = {}


def _inputs(spec: KernelSpec, locator: str, dims: dict[str, int]) -> tuple[Any, ...]:
    import torch

    key = json.dumps([locator, dims, spec.dtype], sort_keys=True)
    if key not in _LAST_INPUTS:
        _LAST_INPUTS.clear()  # the last shape's memory back before the next is drawn
        made = spec.make_inputs(dims, dtype=getattr(torch, spec.dtype), device="cpu", seed=0)
        _LAST_INPUTS[key] = tuple(made)
    return _LAST_INPUTS[key]


def _follow(locator: str, version: str, dims: dict[str, int], params: dict[str, Any]) -> Any:
    from kbopt.bench.compile_only import SM90_SHARED_LIMIT, compile_call
    from kbopt.bench.real import _params_applied
    from kbopt.kernel import load_spec
    from kbopt.moves import launched_by_knob

    spec = load_spec(locator, os.getcwd())
    sys.modules.pop(spec.module_name(version), None)  # its file as it is now (edits, restores)
    family = spec.version_family(version) or ""
    info = spec.launch_info(family) if spec.launch_info is not None else {}
    if not isinstance(info, dict):
        info = {}
    info.clear()  # what the last version followed in this process recorded must not leak in
    compiled: list[dict[str, Any]] = []
    with _params_applied(spec, version, params or None):
        entry = spec.load_version(version)
        inputs = _inputs(spec, locator, dims)
        try:
            compile_call(entry, inputs, compiled, ARCH, SM90_SHARED_LIMIT)
        except ValueError as exc:
            if own_refusal(exc, spec.folder):
                raise Refused(" ".join(str(exc).split())) from exc
            raise
    recorded = chosen(info, compiled)
    return launched_by_knob(spec.knobs_for(version), recorded), recorded_metrics(info)


def recorded_metrics(info: Mapping[str, Any]) -> dict[str, float]:
    """The catalog metrics a launch recorded: its launch_info's "metrics" (the heads a
    program handles, the share of programs with work...) and its `splits` as `num_splits`
    where "metrics" does not give it.  The real backend reads a measured launch's the same
    way; a value that is not a number raises, as a broken record should."""
    out = {str(k): float(v) for k, v in dict(info.get("metrics") or {}).items()}
    if "splits" in info:
        out.setdefault("num_splits", float(info["splits"]))
    return out


def _answer(request: Mapping[str, Any]) -> dict[str, Any]:
    try:
        with contextlib.redirect_stdout(sys.stderr):
            launched, metrics = _follow(
                str(request["spec"]),
                str(request["version"]),
                dict(request["dims"]),
                dict(request.get("params") or {}),
            )
        return {"launched": launched, "metrics": metrics}
    except Refused as exc:
        return {"refused": str(exc)[:300]}
    except Exception as exc:  # a call that needs a GPU, or a version that fails: say which
        text = " ".join(str(exc).split())
        return {"error": f"{type(exc).__name__}: {text}"[:300]}


def _serve() -> None:
    """Answer requests until the input closes or none comes for IDLE_S seconds (the
    process holds torch and a shape's inputs in memory; its owner starts another when it
    asks again)."""
    with selectors.DefaultSelector() as sel:
        sel.register(sys.stdin, selectors.EVENT_READ)
        while sel.select(IDLE_S):
            line = sys.stdin.readline()  # one request at a time: nothing waits behind it
            if not line:
                return
            if line.strip():
                print(ANSWER + json.dumps(_answer(json.loads(line)), default=str), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    sys.path.insert(0, os.getcwd())
    if args == ["--serve"]:  # one JSON request a line on stdin, one answer a line
        _serve()
        return 0
    if len(args) not in (3, 4):
        print(USAGE, file=sys.stderr)
        return 2
    request = {
        "spec": args[0],
        "version": args[1],
        "dims": json.loads(args[2]),
        "params": json.loads(args[3]) if len(args) == 4 else {},
    }
    print(json.dumps(_answer(request), default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
