"""Trial configurations: the kernel's default matrix, a stress point on evidence only, OOM backoff.

A kernel's spec (`kbopt.kernel.KernelSpec`) declares its named dimensions and the default
trial matrix, each point with the reason it is there (add_rmsnorm: `large` at
`rows=8192, hidden=4096`, a prefill chunk of a Llama-3-8B layer).  On out-of-memory the spec's
backoff dimension is halved until the point fits.  A further (stress) configuration is
added only when the strategy or the devlog shows the default points are not enough, so
`trial_matrix` takes that evidence as an explicit, non-empty reason.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TypeVar

from kbopt.errors import KbError

if TYPE_CHECKING:
    from kbopt.kernel import KernelSpec

T = TypeVar("T")


@dataclass(frozen=True)
class TrialConfig:
    """One configuration to measure: a name, the kernel's dimensions, and why it is measured."""

    name: str
    dims: tuple[tuple[str, int], ...]
    why: str = ""

    @classmethod
    def of(cls, name: str, dims: Mapping[str, int], why: str = "") -> TrialConfig:
        return cls(name, tuple((k, int(v)) for k, v in dims.items()), why)

    @property
    def dims_dict(self) -> dict[str, int]:
        return dict(self.dims)

    def dim(self, name: str) -> int:
        return self.dims_dict[name]

    @property
    def shape(self) -> str:
        """`rows=8192, hidden=4096`: the form every contract uses."""
        return ", ".join(f"{k}={v}" for k, v in self.dims)

    @property
    def compact(self) -> str:
        """`rows=8192,hidden=4096`: the form a command line takes."""
        return ",".join(f"{k}={v}" for k, v in self.dims)

    def with_dim(self, name: str, value: int) -> TrialConfig:
        return replace(self, dims=tuple((k, value if k == name else v) for k, v in self.dims))

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "dims": self.dims_dict, "why": self.why}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> TrialConfig:
        """Reads `{"name", "dims": {...}, "why"}` and the flat form older records used."""
        dims = d.get("dims")
        if not isinstance(dims, Mapping):
            dims = {k: v for k, v in d.items() if k not in {"name", "why", "dims"}}
        return cls.of(str(d["name"]), {k: int(v) for k, v in dims.items()}, str(d.get("why", "")))


def default_matrix(spec: KernelSpec) -> list[TrialConfig]:
    """The spec's default trial points, in declaration order."""
    return [TrialConfig.of(t.name, t.dims, t.why) for t in spec.trials]


def _compact_name(dims: Mapping[str, int]) -> str:
    return "-".join(f"{k}{v}" for k, v in dims.items())


def parse_config(text: str, spec: KernelSpec) -> TrialConfig:
    """A trial name of the spec (`large`), or dims: `rows=8192,hidden=4096` or `8192,4096`."""
    from kbopt.kernel import dims_from_text

    trial = spec.trial(text)
    if trial is not None:
        return TrialConfig.of(trial.name, trial.dims, trial.why)
    if "=" not in text and "," not in text and text.strip().isidentifier():
        known = ", ".join(t.name for t in spec.trials)
        raise KbError(
            f"config {text!r} is not a trial of {spec.name} ({known}) nor dims "
            f"({spec.shape(spec.trials[0].dims)})"
        )
    dims = dims_from_text(spec, text)
    return TrialConfig.of(_compact_name(dims), dims, "given on the command line")


# "Stress configuration: rows=65536, hidden=8192 -- <reason>" in a devlog asks for another point.
STRESS_LINE_RE = re.compile(
    r"^\s*[-*]?\s*Stress configuration:\s*(?P<shape>[a-z][\w]*\s*=\s*\d+(?:\s*,\s*[a-z][\w]*\s*=\s*\d+)*)"
    r"\s*(?:--|—)\s*(?P<why>\S.*)$",
    re.M,
)


def stress_from_devlog(text: str, spec: KernelSpec) -> TrialConfig | None:
    """The stress point a devlog asks for (`Stress configuration: k=v, ... -- why`)."""
    m = STRESS_LINE_RE.search(text)
    if not m:
        return None
    cfg = parse_config(m["shape"], spec)
    return TrialConfig("stress", cfg.dims, m["why"].strip())


def trial_matrix(spec: KernelSpec, stress: TrialConfig | None = None) -> list[TrialConfig]:
    """The default matrix, plus a stress point only when it carries the evidence for it."""
    configs = default_matrix(spec)
    if stress is not None:
        if not stress.why.strip():
            raise KbError(
                "a stress configuration needs a reason from the strategy or the devlog: say "
                "why the default trial points are not enough"
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
    dim: str  # the dimension that was halved
    tried: tuple[int, ...]  # its values tried, in order

    @property
    def reduced(self) -> bool:
        return len(self.tried) > 1

    @property
    def note(self) -> str:
        if not self.reduced:
            return ""
        d = self.dim
        tried = ", ".join(f"{d}={v}" for v in self.tried[:-1])
        return f"out of memory at {tried}; ran at {d}={self.config.dim(d)}"


def run_with_backoff(
    fn: Callable[[TrialConfig], T],
    config: TrialConfig,
    dim: str,
    *,
    is_oom: Callable[[BaseException], bool] = is_out_of_memory,
    on_oom: Callable[[], None] | None = None,
) -> BackoffResult:
    """Run `fn(config)`, halving `dim` on out-of-memory until it fits; other errors pass."""
    if dim not in config.dims_dict:
        raise KbError(f"cannot back off on {dim!r}: the configuration has {config.shape}")
    value = config.dim(dim)
    tried: list[int] = []
    while value >= 1:
        tried.append(value)
        cfg = config.with_dim(dim, value)
        try:
            return BackoffResult(fn(cfg), cfg, dim, tuple(tried))
        except Exception as exc:
            if not is_oom(exc):
                raise
            if on_oom is not None:
                on_oom()
            value //= 2
    raise KbError(f"{config.name} ({config.shape}) is out of memory even at {dim}=1")
