"""The kernel designer -> orchestrator summary (A11, Japanese source), typed.

Shape::

    ## New Version: mla_decode triton_v3
    ### Changes Applied:
    - split the KV length into 8 slices, one program each
    - log-sum-exp combine kernel
    ### Files: Created kernels/mla_decode/triton_v3.py; Modified kernels/mla_decode/registry.py
    ### Correctness: PASS -- rel. error 2.1e-3 (tolerance 1e-2)

    ### Trial Configurations Checked
    1. b=32, s=1, t=4096 -- plain decode: the default point
    2. b=32, s=16, t=4096 -- speculative: 16 query rows share each KV row

    ### Devlog Entry Written: docs/kernels/mla_decode.md

`### Changes Applied: a; b` on one line is read too.  `Files:` lists `Created` and
`Modified` paths (comma-separated), or `none`.  Correctness is PASS or FAIL, optionally
followed by ` -- <detail>`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from kbopt.contracts._sections import Collector, items, require, split_document

TITLE_RE = re.compile(r"^##\s+New Version:\s*(?P<kernel>\S+)\s+(?P<version>\S+)\s*$")
SHAPE = "## New Version: <kernel> <version>"
_TRIAL_RE = re.compile(
    r"^\[?b\s*=\s*(?P<b>\d+)\s*,\s*s\s*=\s*(?P<s>\d+)\s*,\s*t\s*=\s*(?P<t>\d+)\]?"
    r"\s+(?:--|—)\s+(?P<why>\S.*)$"
)
_SEP = re.compile(r"\s+(?:--|—)\s+")
KNOWN = {"changes applied", "files", "correctness", "trial configurations checked"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class TrialCheck(_Strict):
    b: int = Field(ge=1)
    s: int = Field(ge=1)
    t: int = Field(ge=1)
    why: str = Field(min_length=1)

    def render(self, number: int) -> str:
        return f"{number}. b={self.b}, s={self.s}, t={self.t} -- {self.why}"


class NewVersion(_Strict):
    kernel: str = Field(min_length=1)
    version: str = Field(min_length=1)
    changes: list[str] = Field(min_length=1)
    created: list[str] = Field(default_factory=list)
    modified: list[str] = Field(default_factory=list)
    correct: bool
    correctness_detail: str = ""
    trials: list[TrialCheck] = Field(default_factory=list)
    devlog_entry: str = ""  # path of the devlog the entry was written to

    def render(self) -> str:
        files = "; ".join(
            part
            for part in (
                f"Created {', '.join(self.created)}" if self.created else "",
                f"Modified {', '.join(self.modified)}" if self.modified else "",
            )
            if part
        )
        correctness = "PASS" if self.correct else "FAIL"
        if self.correctness_detail:
            correctness += f" -- {self.correctness_detail}"
        out = [
            f"## New Version: {self.kernel} {self.version}",
            "### Changes Applied:",
            *[f"- {c}" for c in self.changes],
            f"### Files: {files or 'none'}",
            f"### Correctness: {correctness}",
            "",
            "### Trial Configurations Checked",
            *[t.render(i) for i, t in enumerate(self.trials, 1)],
            "",
            f"### Devlog Entry Written: {self.devlog_entry or 'none'}",
        ]
        return "\n".join(out) + "\n"

    @classmethod
    def parse(cls, text: str, path: str = "<new-version>") -> NewVersion:
        errors = Collector(path)
        m, line, sections = split_document(text, TITLE_RE, SHAPE, errors)
        data: dict[str, object] = {"kernel": m["kernel"], "version": m["version"]}
        for s in sections:
            if s.title.lower() not in KNOWN | {"devlog entry written"}:
                errors.add(s.line, f"unknown section {s.title!r} in a new-version summary")
        ch = require(sections, "Changes Applied", errors, line, "the list of changes")
        if ch is not None:
            changes = [c.strip() for c in ch.inline.split(";") if c.strip()] if ch.inline else []
            changes += [t for _, t in items(ch, errors, "Changes Applied", numbered=False)]
            if not changes:
                errors.add(ch.line, "no change listed")
            data["changes"] = changes
        files = require(sections, "Files", errors, line, "Created/Modified paths")
        if files is not None:
            created, modified = _files(files.inline, files.line, errors)
            data.update(created=created, modified=modified)
        corr = require(sections, "Correctness", errors, line, "PASS or FAIL")
        if corr is not None:
            word, *detail = _SEP.split(corr.inline, maxsplit=1)
            if word.strip().upper() not in {"PASS", "FAIL"}:
                errors.add(corr.line, f"correctness {word!r} is neither PASS nor FAIL")
            data["correct"] = word.strip().upper() == "PASS"
            data["correctness_detail"] = detail[0].strip() if detail else ""
        trials = []
        tr = next((s for s in sections if s.title.lower() == "trial configurations checked"), None)
        if tr is not None:
            for n, t in items(tr, errors, "Trial Configurations Checked", numbered=True):
                tm = _TRIAL_RE.match(t)
                if tm is None:
                    errors.add(n, "a trial reads `1. b=32, s=1, t=4096 -- why this point matters`")
                    continue
                trials.append(
                    TrialCheck(b=int(tm["b"]), s=int(tm["s"]), t=int(tm["t"]), why=tm["why"])
                )
        data["trials"] = trials
        dv = next((s for s in sections if s.title.lower() == "devlog entry written"), None)
        if dv is not None:
            data["devlog_entry"] = "" if dv.inline.lower() == "none" else dv.inline
        errors.raise_if_any()
        try:
            return cls.model_validate(data)
        except ValueError as exc:
            errors.add(line, f"invalid new-version summary: {str(exc).splitlines()[0]}")
            errors.raise_if_any()
            raise


def _files(text: str, line: int, errors: Collector) -> tuple[list[str], list[str]]:
    created: list[str] = []
    modified: list[str] = []
    if text.strip().lower() == "none":
        return created, modified
    for part in filter(None, (p.strip() for p in text.split(";"))):
        word, _, paths = part.partition(" ")
        target = {"created": created, "modified": modified}.get(word.lower())
        if target is None or not paths.strip():
            errors.add(line, f"files part {part!r} is not `Created <paths>` or `Modified <paths>`")
            continue
        target.extend(p.strip() for p in paths.split(",") if p.strip())
    return created, modified
