"""Trial configurations: the default matrix (W2), a stress point on evidence only, OOM backoff.

The Japanese source fixes the exploratory matrix: decode `b=32, s=1, t=4096` and
speculative `b=32, s=16, t=4096`; on out-of-memory, reduce `b`.  A third (stress)
configuration is added only when the strategy or the devlog shows the first two are not
enough, so `trial_matrix` takes that evidence as an explicit, non-empty reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TypeVar

from kbopt.errors import KbError

T = TypeVar("T")


@dataclass(frozen=True)
class TrialConfig:
    name: str
    b: int
    s: int
    t: int
    why: str = ""

    @property
    def shape(self) -> str:
        """`b=32, s=1, t=4096`: the form used by every contract."""
        return f"b={self.b}, s={self.s}, t={self.t}"

    def with_batch(self, b: int) -> TrialConfig:
        return replace(self, b=b)

    def as_dict(self) -> dict[str, object]:
        return {"name": self.name, "b": self.b, "s": self.s, "t": self.t, "why": self.why}


DECODE = TrialConfig("decode", 32, 1, 4096, "plain decode: one query row per sequence")
SPECULATIVE = TrialConfig(
    "spec", 32, 16, 4096, "speculative decoding: 16 query rows share each KV row"
)
DEFAULT_MATRIX: tuple[TrialConfig, ...] = (DECODE, SPECULATIVE)
_NAMED = {"decode": DECODE, "spec": SPECULATIVE, "speculative": SPECULATIVE}
_SHAPE_RE = re.compile(
    r"^\s*(?:b\s*=\s*)?(\d+)\s*,\s*(?:s\s*=\s*)?(\d+)\s*,\s*(?:t\s*=\s*)?(\d+)\s*$"
)
# "Stress configuration: b=64, s=1, t=32768 -- <reason>" in a devlog asks for a third point.
STRESS_LINE_RE = re.compile(
    r"^\s*[-*]?\s*Stress configuration:\s*(?P<shape>b\s*=\s*\d+\s*,\s*s\s*=\s*\d+\s*,\s*t\s*=\s*\d+)"
    r"\s*(?:--|—)\s*(?P<why>\S.*)$",
    re.M,
)


def parse_config(text: str) -> TrialConfig:
    """`decode`, `spec`, `32,1,4096` or `b=32, s=1, t=4096`."""
    key = text.strip().lower()
    if key in _NAMED:
        return _NAMED[key]
    m = _SHAPE_RE.match(text)
    if not m:
        raise KbError(
            f"config {text!r} is not `decode`, `spec` or `b,s,t` (e.g. 32,1,4096 or b=32,s=1,t=4096)"
        )
    b, s, t = (int(g) for g in m.groups())
    if min(b, s, t) < 1:
        raise KbError(f"config {text!r}: b, s and t must be at least 1")
    name = "decode" if s == 1 else f"s{s}"
    return TrialConfig(f"{name}-b{b}-t{t}", b, s, t, "given on the command line")


def stress_from_devlog(text: str) -> TrialConfig | None:
    """The stress point a devlog asks for (`Stress configuration: b=.., s=.., t=.. -- why`)."""
    m = STRESS_LINE_RE.search(text)
    if not m:
        return None
    cfg = parse_config(m["shape"])
    return TrialConfig("stress", cfg.b, cfg.s, cfg.t, m["why"].strip())


def trial_matrix(stress: TrialConfig | None = None) -> list[TrialConfig]:
    """The default matrix, plus a stress point only when it carries the evidence for it."""
    configs = list(DEFAULT_MATRIX)
    if stress is not None:
        if not stress.why.strip():
            raise KbError(
                "a third (stress) configuration needs a reason from the strategy or the devlog "
                "(W2): say why the default decode and speculative points are not enough"
            )
        configs.append(replace(stress, name="stress"))
    return configs


def is_out_of_memory(exc: BaseException) -> bool:
    """torch.cuda.OutOfMemoryError, or any error whose message says out of memory."""
    if type(exc).__name__ in {"OutOfMemoryError", "OutOfMemory"}:
        return True
    return "out of memory" in str(exc).lower()


@dataclass(frozen=True)
class BackoffResult:
    value: object
    config: TrialConfig  # the configuration that ran (b may be smaller than asked)
    tried: tuple[int, ...]  # batch sizes tried, in order

    @property
    def reduced(self) -> bool:
        return len(self.tried) > 1

    @property
    def note(self) -> str:
        if not self.reduced:
            return ""
        return f"out of memory at b={', b='.join(str(b) for b in self.tried[:-1])}; ran at b={self.config.b}"


def run_with_backoff(
    fn: Callable[[TrialConfig], T],
    config: TrialConfig,
    *,
    is_oom: Callable[[BaseException], bool] = is_out_of_memory,
    on_oom: Callable[[], None] | None = None,
) -> BackoffResult:
    """Run `fn(config)`, halving b on out-of-memory until it fits (W2); other errors pass."""
    b = config.b
    tried: list[int] = []
    while b >= 1:
        tried.append(b)
        cfg = config.with_batch(b)
        try:
            return BackoffResult(fn(cfg), cfg, tuple(tried))
        except Exception as exc:
            if not is_oom(exc):
                raise
            if on_oom is not None:
                on_oom()
            b //= 2
    raise KbError(f"{config.name} ({config.shape}) is out of memory even at b=1")
