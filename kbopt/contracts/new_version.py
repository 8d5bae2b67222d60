"""The kernel designer -> orchestrator summary (New Version), typed.

Shape::

    ## New Version: add_rmsnorm triton_v3
    ### Changes Applied:
    - 4 rows per program
    - 16-byte vector loads
    ### Files: Created kernels/add_rmsnorm/triton_v3.py
    ### Correctness: PASS -- rel. error 2.1e-3 (tolerance 1e-2)

    ### Trial Configurations Checked
    1. rows=8192, hidden=4096 -- a Llama-8B layer's tokens in one prefill chunk
    2. rows=32, hidden=4096 -- decode: one token per sequence

    ### Devlog Entry Written: docs/kernels/mla_decode.md

`### Changes Applied: a; b` on one line is read too.  `Files:` lists `Created` and
`Modified` paths (comma-separated), or `none`.  A trial configuration is the kernel's
dimensions as `name=value` pairs, then ` -- ` and why the point matters.  Correctness is PASS or FAIL, optionally
followed by ` -- <detail>`.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field, field_validator

from kbopt.contracts._sections import Collector, items, require, split_document

TITLE_RE = re.compile(r"^##\s+New Version:\s*(?P<kernel>\S+)\s+(?P<version>\S+)\s*$")
SHAPE = "## New Version: <kernel> <version>"
_TRIAL_RE = re.compile(
    r"^\[?(?P<dims>[a-z]\w*\s*=\s*\d+(?:\s*,\s*[a-z]\w*\s*=\s*\d+)*)\]?"
    r"\s+(?:--|—)\s+(?P<why>\S.*)$"
)
_SEP = re.compile(r"\s+(?:--|—)\s+")
KNOWN = {"changes applied", "files", "correctness", "trial configurations checked"}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", validate_assignment=True)


class TrialCheck(_Strict):
    dims: dict[str, int] = Field(min_length=1)  # the kernel's dimensions, in order
    why: str = Field(min_length=1)

    @field_validator("dims")
    @classmethod
    def _positive(cls, v: dict[str, int]) -> dict[str, int]:
        bad = [f"{k}={n}" for k, n in v.items() if n < 1]
        if bad:
            raise ValueError(f"dimensions must be at least 1: {', '.join(bad)}")
        return v

    def render(self, number: int) -> str:
        shape = ", ".join(f"{k}={v}" for k, v in self.dims.items())
        return f"{number}. {shape} -- {self.why}"


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
                    errors.add(
                        n, "a trial reads `1. rows=8192, hidden=4096 -- why this point matters`"
                    )
                    continue
                dims = {}
                for part in tm["dims"].split(","):
                    key, _, value = part.partition("=")
                    dims[key.strip()] = int(value)
                if any(v < 1 for v in dims.values()):
                    errors.add(n, "every dimension of a trial must be at least 1")
                    continue
                trials.append(TrialCheck(dims=dims, why=tm["why"]))
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
