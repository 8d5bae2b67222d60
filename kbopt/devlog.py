"""A kernel's devlog, `docs/kernels/<kernel>.md`, as a typed document.

The file belongs to people (the kernel engineer writes its overview and the design
notes); tools own two marked blocks inside it and one append-only list:

    # MLA decode                                  <- title (any text)
    ## Overview                                   <- prose, read by ANALYZE
    ## Current Best Results                       <- the block between BEST markers is the tool's
    <!-- kbopt:best:start -->  ...  <!-- kbopt:best:end -->
    ## Performance                                <- the block between PERF markers is the tool's
    <!-- kbopt:performance:start --> ... <!-- kbopt:performance:end -->
    ## Devlog                                     <- one `### <version> ...` entry per new version
    ### triton_v3 -- 2026-12-02 -- split-KV (8 splits)

Everything outside the marked blocks is kept byte for byte: parsing then rendering an
untouched file gives the same text.  When a marked block is missing, it is added at the
end of its section (the section itself is created if needed, before `## Devlog`).  Inside
the performance block, each profile contract is stored one heading level down (`###
Profile:`, `####` sections) so the page's outline stays valid, with its links to knowledge
files pointing at the site's generated entry pages (`../generated/entries/<name>.md`);
`performance_profiles()` gives them back as `Profile` objects (links to the knowledge files
again when the devlog sits in a project), one per trial configuration.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from kbopt.contracts.profile import Profile
from kbopt.errors import KbError
from kbopt.store import atomic_write

DEVLOG_DIR = Path("docs") / "kernels"
PERF = "performance"
BEST = "best"
SECTION_FOR = {PERF: "Performance", BEST: "Current Best Results"}
_H2 = re.compile(r"^##\s+(?P<title>\S.*?)\s*$")
# Opaque blocks: kbopt's own markers and other generators' `<!-- GEN:x -->` ... `<!-- /GEN:x -->`
# (the kernel's results generator): headings inside them never start a section.
_BLOCK_EDGE = re.compile(
    r"^<!-- (?:kbopt:(?P<name>[a-z]+):(?:start|(?P<end>end))"
    r"|(?P<gend>/)?GEN:(?P<gen>[\w:.-]+)) -->$"
)
# Sections are found by title, or by a title that starts with it ("Performance (generated
# from Nsight Compute)"), or by one of these other names a person may have used.
SECTION_ALIASES = {
    "current best results": ("current results", "best results"),
    "performance": ("profiles",),
}
_H3 = re.compile(r"^###\s+(?P<title>\S.*?)\s*$")


def marker(block: str, end: bool = False) -> str:
    return f"<!-- kbopt:{block}:{'end' if end else 'start'} -->"


@dataclass
class _Section:
    heading: str | None  # None for the text before the first `##` heading
    lines: list[str] = field(default_factory=list)  # the heading line first, when there is one

    @property
    def title(self) -> str:
        if self.heading is None:
            return ""
        m = _H2.match(self.heading)
        return m["title"] if m else ""


@dataclass
class DevlogEntry:
    heading: str  # the text after `### `
    body: str


def devlog_path(root: Path, kernel: str) -> Path:
    return root / DEVLOG_DIR / f"{kernel}.md"


class Devlog:
    """One devlog file; edits are in memory until `save()` (atomic)."""

    def __init__(self, text: str, path: Path | None = None):
        self.path = path
        self._trailing_newline = text.endswith("\n")
        self.sections = _split(text)

    # ------------------------------------------------------------------ I/O

    @classmethod
    def load(cls, path: Path) -> Devlog:
        try:
            return cls(path.read_text(encoding="utf-8"), path)
        except OSError as exc:
            raise KbError(f"cannot read the devlog {path}: {exc.strerror}") from None

    @classmethod
    def for_kernel(cls, root: Path, kernel: str, *, create: bool = True) -> Devlog:
        path = devlog_path(root, kernel)
        if path.is_file():
            return cls.load(path)
        if not create:
            raise KbError(f"no devlog for {kernel}: {path} does not exist")
        return cls(skeleton(kernel), path)

    def render(self) -> str:
        lines = [ln for s in self.sections for ln in s.lines]
        text = "\n".join(lines)
        return text + "\n" if self._trailing_newline or not text else text

    def save(self) -> Path:
        if self.path is None:
            raise KbError("this devlog has no path to save to")
        atomic_write(self.path, self.render())
        return self.path

    # ------------------------------------------------------------------ reading

    @property
    def title(self) -> str:
        for s in self.sections:
            for ln in s.lines:
                if ln.startswith("# "):
                    return ln[2:].strip()
        return ""

    def section_text(self, title: str) -> str:
        s = self._find(title)
        return "\n".join(s.lines[1:]).strip() if s else ""

    @property
    def overview(self) -> str:
        """The Overview section, or else the text between the title and the first section."""
        text = self.section_text("Overview")
        if text or not self.sections or self.sections[0].heading is not None:
            return text
        return "\n".join(ln for ln in self.sections[0].lines if not ln.startswith("# ")).strip()

    @property
    def current_best(self) -> str:
        return self.section_text("Current Best Results")

    def block(self, name: str) -> str | None:
        """The text between a block's markers, or None when the block is absent."""
        for s in self.sections:
            span = _block_span(s.lines, name)
            if span:
                return "\n".join(s.lines[span[0] + 1 : span[1]]).strip("\n")
        return None

    def performance_profiles(self) -> list[Profile]:
        text = self.block(PERF) or ""
        chunks = re.split(r"(?m)^(?=### Profile:)", text)
        out = []
        for chunk in chunks:
            if chunk.startswith("### Profile:"):
                text = _promote(chunk, self._knowledge_dir())
                out.append(Profile.parse(text, path=str(self.path or "<devlog>")))
        return out

    def entries(self) -> list[DevlogEntry]:
        s = self._find("Devlog")
        if s is None:
            return []
        out: list[DevlogEntry] = []
        for ln in s.lines[1:]:
            m = _H3.match(ln)
            if m:
                out.append(DevlogEntry(m["title"], ""))
            elif out:
                out[-1].body += ln + "\n"
        for e in out:
            e.body = e.body.strip("\n")
        return out

    # ------------------------------------------------------------------ editing

    def set_block(self, name: str, body: str) -> None:
        """Replace (or add) the marked block `name`; nothing outside it changes."""
        new = [marker(name), *body.strip("\n").splitlines(), marker(name, end=True)]
        for s in self.sections:
            span = _block_span(s.lines, name)
            if span:
                s.lines[span[0] : span[1] + 1] = new
                return
        section = self._find(SECTION_FOR.get(name, name)) or self._add_section(
            SECTION_FOR.get(name, name)
        )
        while len(section.lines) > 1 and not section.lines[-1].strip():
            section.lines.pop()
        section.lines += ["", *new, ""]

    def set_performance_profile(self, profile: Profile, header: str) -> None:
        """Store `profile` in the performance block, replacing the one of the same config."""
        kept = [p for p in self.performance_profiles() if p.config != profile.config]
        # One profile per configuration, in the order of their dims' values.
        profiles = sorted([*kept, profile], key=lambda p: tuple(p.config.values()))
        parts = [header.strip(), *(_demote(p.render()).strip() for p in profiles)]
        self.set_block(PERF, "\n\n".join(parts))

    def add_entry(self, heading: str, body: str) -> None:
        """Append `### heading` + body at the end of the Devlog section (created if missing)."""
        section = self._find("Devlog") or self._add_section("Devlog", at_end=True)
        while len(section.lines) > 1 and not section.lines[-1].strip():
            section.lines.pop()
        section.lines += ["", f"### {heading}", *body.strip("\n").splitlines(), ""]

    # ------------------------------------------------------------------ helpers

    def _knowledge_dir(self) -> Path | None:
        """docs/knowledge of the project this devlog belongs to (docs/kernels/<k>.md)."""
        if self.path is None:
            return None
        candidate = self.path.resolve().parent.parent / "knowledge"
        return candidate if candidate.is_dir() else None

    def _find(self, title: str) -> _Section | None:
        names = (title.lower(), *SECTION_ALIASES.get(title.lower(), ()))
        for exact in (True, False):
            for name in names:
                for s in self.sections:
                    t = s.title.lower()
                    if t == name or (not exact and t.startswith(name)):
                        return s
        return None

    def _add_section(self, title: str, at_end: bool = False) -> _Section:
        section = _Section(f"## {title}", [f"## {title}", ""])
        devlog = self._find("Devlog")
        if at_end or devlog is None:
            if self.sections and self.sections[-1].lines and self.sections[-1].lines[-1].strip():
                self.sections[-1].lines.append("")
            self.sections.append(section)
        else:
            index = self.sections.index(devlog)
            prev = self.sections[index - 1] if index else None
            if prev is not None and prev.lines and prev.lines[-1].strip():
                prev.lines.append("")
            self.sections.insert(index, section)
        return section


def _split(text: str) -> list[_Section]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines = lines[:-1]
    sections = [_Section(None, [])]
    inside: str | None = None  # the marked block being read: headings there are content
    for ln in lines:
        m = _BLOCK_EDGE.match(ln.strip())
        if m:
            name, end = m["name"] or m["gen"], bool(m["end"] or m["gend"])
            if inside is None and not end:
                inside = name
            elif inside == name and end:
                inside = None
        if inside is None and _H2.match(ln) and not ln.startswith("###"):
            sections.append(_Section(ln, [ln]))
        else:
            sections[-1].lines.append(ln)
    if not sections[0].lines:
        sections.pop(0)
    return sections


def _block_span(lines: list[str], name: str) -> tuple[int, int] | None:
    start = next((i for i, ln in enumerate(lines) if ln.strip() == marker(name)), None)
    if start is None:
        return None
    end = next(
        (i for i in range(start + 1, len(lines)) if lines[i].strip() == marker(name, end=True)),
        None,
    )
    if end is None:
        raise KbError(f"the devlog's {marker(name)} has no matching {marker(name, end=True)}")
    return start, end


# Entries are published as generated site pages (kbopt.site), not as their source files, so
# a devlog links `../generated/entries/<name>.md`; the contract itself keeps repo paths.
# An entry's file, in the project (docs/knowledge/) or in the bundled catalog.
_KNOWLEDGE_LINK = re.compile(
    r"\]\((?:docs|kbopt/bundled)/knowledge/(?:[\w.-]+/)*(?P<name>[\w.-]+)\.md\)"
)
_ENTRY_PAGE_LINK = re.compile(r"\]\(\.\./generated/entries/(?P<name>[\w.-]+)\.md\)")


def _demote(text: str) -> str:
    """One heading level down, and repo-root links made to work from docs/kernels/."""
    return links_from_devlog(re.sub(r"(?m)^(#{2,5}) ", lambda m: "#" + m.group(1) + " ", text))


def links_from_devlog(text: str) -> str:
    """Repo-root links made to work from docs/kernels/: an entry's file becomes its page."""
    text = _KNOWLEDGE_LINK.sub(lambda m: f"](../generated/entries/{m['name']}.md)", text)
    return text.replace("](docs/", "](../")


def _promote(text: str, knowledge: Path | None = None) -> str:
    text = re.sub(r"(?m)^#(#{2,6}) ", lambda m: m.group(1) + " ", text)

    def source(m: re.Match[str]) -> str:
        found = sorted(knowledge.rglob(f"{m['name']}.md")) if knowledge else []
        if found and knowledge is not None:
            rel = found[0].relative_to(knowledge.parent.parent).as_posix()
            return f"]({rel})"
        return f"](docs/generated/entries/{m['name']}.md)"

    text = _ENTRY_PAGE_LINK.sub(source, text)
    return text.replace("](../", "](docs/")


def relative_link(path: str) -> str:
    """A repo-root path (`docs/knowledge/.../x.md`) as a link from docs/kernels/<kernel>.md."""
    return _demote(f"]({path})")[2:-1] if path.startswith("docs/") else path


def skeleton(kernel: str) -> str:
    """A new devlog: overview, current best results, performance, devlog entries."""
    return (
        f"# {kernel}\n\n"
        "## Overview\n\n"
        f"What {kernel} computes, its shapes and layout, and the reference it is checked against.\n\n"
        "## Current Best Results\n\n"
        f"{marker(BEST)}\n{marker(BEST, end=True)}\n\n"
        "## Results\n\n"
        "<!-- GEN:results -->\n<!-- /GEN:results -->\n\n"
        "## Performance\n\n"
        f"{marker(PERF)}\n{marker(PERF, end=True)}\n\n"
        "<!-- GEN:profiles -->\n<!-- /GEN:profiles -->\n\n"
        "## Devlog\n"
    )
