"""The prerequisites of one optimization, checked from what the cycle really did.

An Optimization Applied report lists three checks, each ticked only when it passed and
each saying what was checked:

- code compatibility: the new version was imported and run by the backend at every
  configuration and matched the reference, and the kernel's own tests passed
  (`kbopt.workflow.kernel_tests`, run in VERIFY);
- hardware: the device the figures came from meets the language's architecture needs
  (cuTile and the TileIR backend need Blackwell, CuTe DSL's kernels here Hopper);
- a measured baseline: the version it is compared with was measured first.

The fake backend imports and runs nothing and names no real device: its checks say so and
stay unticked.
"""

from __future__ import annotations

import re
from typing import Any

from kbopt.bench.backend import FAKE_DEVICE_NAME, Measurement
from kbopt.contracts.reports import Check

# The lowest compute capability (as SM number) each language's kernels need.
LANGUAGE_MIN_SM = {
    "triton": 80,
    "cute-dsl": 90,  # wgmma, TMA and warp specialization: Hopper and later
    "cutile-dsl": 100,  # cuTile: Blackwell only
    "tileir": 100,  # the TileIR backend of Triton: Blackwell only
}
# Device names (as torch reports them) -> SM number; the first pattern that matches wins.
DEVICE_SM = (
    (r"\bG?B(?:100|200|300)\b", 100),
    (r"\bRTX\s?50\d0|\bRTX PRO 6000 Blackwell", 120),
    (r"\bG?H(?:100|200|800|20)\b", 90),
    (r"\bL40S?\b|\bL4\b|\bRTX\s?40\d0|\bRTX 6000 Ada", 89),
    (r"\bA(?:10|10G|16|2|30|40)\b|\bRTX\s?30\d0|\bRTX A\d000", 86),
    (r"\bA(?:100|800)\b", 80),
    (r"\bT4\b|\bRTX\s?20\d0", 75),
    (r"\bV100\b", 70),
)


def device_sm(device: str) -> int | None:
    """The SM number of a device name, or None when the name is not known here."""
    for pattern, sm in DEVICE_SM:
        if re.search(pattern, device, re.IGNORECASE):
            return sm
    return None


def check_prerequisites(
    *,
    tests: dict[str, Any] | None = None,
    version: str,
    language: str,
    measurements: dict[str, Measurement],
    baseline: dict[str, Measurement],
    baseline_version: str,
) -> list[Check]:
    """The three checks of one attempt, from its measurements and the baseline's."""
    return [
        _code_check(version, measurements, tests or {}),
        _hardware_check(language, measurements),
        _baseline_check(baseline_version, baseline),
    ]


def _is_fake(measurements: dict[str, Measurement]) -> bool:
    return any(m.device == FAKE_DEVICE_NAME for m in measurements.values())


def _code_check(version: str, measurements: dict[str, Measurement], tests: dict[str, Any]) -> Check:
    if not measurements:
        return Check(done=False, text=f"Code compatibility: {version} was not run (no measurement)")
    if _is_fake(measurements):
        return Check(
            done=False,
            text=f"Code compatibility not checked: the fake backend neither imports nor runs "
            f"{version}",
        )
    wrong = [name for name, m in measurements.items() if not m.correct]
    configs = ", ".join(measurements)
    if wrong:
        return Check(
            done=False,
            text=f"Code compatibility failed: {version} imported and ran, but its output "
            f"differs from the reference at {', '.join(wrong)}",
        )
    ran = f"{version} imported, ran and matched the reference at {configs}"
    if not tests.get("ran"):
        why = tests.get("detail", "the kernel's tests were not run")
        return Check(done=False, text=f"Code compatibility partly checked: {ran}; tests: {why}")
    files = ", ".join(tests.get("files", []))
    if not tests.get("passed"):
        return Check(
            done=False,
            text=f"Code compatibility failed: {ran}, but its tests failed ({files}: "
            f"{tests.get('detail', '')})",
        )
    return Check(
        done=True,
        text=f"Code compatibility verified: {ran}; its tests passed ({files}: "
        f"{tests.get('detail', '')})",
    )


def _hardware_check(language: str, measurements: dict[str, Measurement]) -> Check:
    need = LANGUAGE_MIN_SM.get(language)
    devices = sorted({m.device for m in measurements.values() if m.device})
    if not devices or _is_fake(measurements):
        return Check(
            done=False,
            text=f"Hardware not checked: no real device measured ({language} needs "
            f"SM{need or '?'}+)",
        )
    device = devices[0]
    sm = device_sm(device)
    if sm is None or need is None:
        return Check(
            done=False,
            text=f"Hardware not checked: the architecture of {device} is not known to kbopt "
            f"({language} needs SM{need or '?'}+)",
        )
    if sm < need:
        return Check(
            done=False,
            text=f"Hardware requirements not met: {device} is SM{sm}, {language} needs SM{need}+",
        )
    return Check(
        done=True,
        text=f"Hardware requirements met: {device} is SM{sm}, {language} needs SM{need}+",
    )


def _baseline_check(version: str, baseline: dict[str, Measurement]) -> Check:
    if not baseline:
        return Check(done=False, text=f"Baseline not measured for {version}")
    times = ", ".join(f"{name} {m.duration_us:.1f} us" for name, m in baseline.items())
    if _is_fake(baseline):
        return Check(
            done=False,
            text=f"Baseline not measured: the fake backend gave stand-in figures for {version} "
            f"({times})",
        )
    return Check(done=True, text=f"Baseline measured first: {version} at {times}")


# Which of the five specialists writes kernels in a language (cuTile has none: the
# kernel designer writes it).
SPECIALIST_FOR_LANGUAGE = {
    "triton": "kernel-triton-specialist",
    "cute-dsl": "kernel-cute-specialist",
    "tileir": "kernel-tileir-specialist",
    "cutile-dsl": "kernel-designer",
}


def specialist_line(language: str, designer: str) -> str:
    """The Specialist line: the specialist for the language, and the designer that acted
    as it (a scripted plan or a human is named as such, never passed off as an agent)."""
    specialist = SPECIALIST_FOR_LANGUAGE.get(language, "kernel-designer")
    if designer == specialist:
        return specialist
    return f"{specialist} (the work done by the {designer} designer)"
