"""Links between kernel devlogs and catalog entries, in both directions.

A devlog (``docs/kernels/<kernel>.md``) tells a kernel's optimization ladder, one
section per version (``### triton_v3 — split-KV ...``), and the cycle's records
(``### triton_v3 -- 2026-12-02 -- applied (run R, attempt 2)``).  The catalog's entries
cite those versions in their local evidence (``Source: kernels/<k>/results/F.json
(rows triton_v2, triton_v3); devlog docs/kernels/<k>.md`` or ``kbopt cycle run R,
attempt 2``), and the kernel's ``lessons.toml`` says which entry each version step is
evidence for.  This module turns both into links:

- :func:`devlog_anchors` finds the sections a link may point at, and
  :func:`prepare_devlog` gives each one a MyST label, adds under each version heading
  the entries that version applied, and folds the generated profiles away so the
  written story comes first (the page's own source is never changed on disk: this
  runs on Sphinx's ``source-read``);
- :func:`source_links` turns an evidence block's Source line into links: the devlog
  section, the results file (a download of the file itself), and any web address or
  ``owner/repository`` reference of an external source.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

KERNELS_DIR = "kernels"  # under docs/: the devlogs
_HEADING = re.compile(r"^(#{2,4})\s+`?([A-Za-z][\w]*_v\d+\w*)`?(.*)$")
_RUN = re.compile(r"\(run ([\w.-]+), attempt (\d+)\)")
_GEN_OPEN = re.compile(r"^<!-- GEN:([\w:.-]+) -->\s*$")
_GEN_CLOSE = re.compile(r"^<!-- /GEN:([\w:.-]+) -->\s*$")
_ANY_HEADING = re.compile(r"^(#{1,6})\s+(.*)$")
# Generated blocks that are reference material, not the story: folded on the page.
FOLDED_BLOCKS = ("profiles", "sweep")
# In the results block, a configuration measured on a GPU other than the kernel's usual one
# (`kbopt.devlog_results`: "### decode on NVIDIA H100 80GB HBM3: b=32, ..."); from the first
# such heading up to the software line, the site folds those tables.
_OTHER_GPU = re.compile(r"^### \S+ on (?P<device>.+?): ")


def version_label(kernel: str, version: str) -> str:
    return f"devlog-{kernel}-{version}".lower().replace("_", "-")


def run_label(kernel: str, run: str, attempt: str) -> str:
    return f"devlog-{kernel}-run-{run}-{attempt}".lower().replace("_", "-")


@dataclass
class DevlogAnchors:
    """The labelled sections of one devlog: version -> label, (run, attempt) -> label."""

    kernel: str
    docname: str  # e.g. "kernels/mla_decode"
    versions: dict[str, str] = field(default_factory=dict)
    runs: dict[tuple[str, str], str] = field(default_factory=dict)
    lines: dict[int, str] = field(default_factory=dict)  # heading line index -> label


def scan_devlog(kernel: str, docname: str, text: str) -> DevlogAnchors:
    """The first heading of each version, and each cycle record's heading, labelled."""
    anchors = DevlogAnchors(kernel, docname)
    in_gen = False
    for i, line in enumerate(text.splitlines()):
        if _GEN_OPEN.match(line):
            in_gen = True
        elif _GEN_CLOSE.match(line):
            in_gen = False
        if in_gen:
            continue
        m = _HEADING.match(line)
        if not m:
            continue
        run = _RUN.search(m.group(3))
        if run:
            key = (run.group(1), run.group(2))
            if key not in anchors.runs:
                anchors.runs[key] = anchors.lines[i] = run_label(kernel, *key)
        elif m.group(2) not in anchors.versions:
            label = version_label(kernel, m.group(2))
            anchors.versions[m.group(2)] = anchors.lines[i] = label
    return anchors


def devlog_anchors(srcdir: Path) -> dict[str, DevlogAnchors]:
    """Kernel name -> the anchors of its devlog, for every ``docs/kernels/*.md``."""
    folder = srcdir / KERNELS_DIR
    out: dict[str, DevlogAnchors] = {}
    if not folder.is_dir():
        return out
    for path in sorted(folder.glob("*.md")):
        text = path.read_text(encoding="utf-8")
        out[path.stem] = scan_devlog(path.stem, f"{KERNELS_DIR}/{path.stem}", text)
    return out


def lessons_by_version(root: Path, kernel: str) -> dict[str, list[str]]:
    """Version -> the entries its step is evidence for, from ``kernels/<k>/lessons.toml``.

    A missing or unreadable file gives no links (``kbopt learn`` reports its errors).
    """
    path = root / "kernels" / kernel / "lessons.toml"
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return {}
    out: dict[str, list[str]] = {}
    for lesson in data.get("lesson", []):
        after, entry = lesson.get("after"), lesson.get("entry")
        if isinstance(after, str) and isinstance(entry, str):
            names = out.setdefault(after, [])
            if entry not in names:
                names.append(entry)
    return out


def _fold(block: str, lines: list[str]) -> list[str]:
    """A generated block inside a collapsed <details>: its headings become bold lines
    (so they leave the page's table of contents), everything else stays as written."""
    body = []
    for line in lines:
        m = _ANY_HEADING.match(line)
        body.append(f"**{m.group(2).strip()}**" if m else line)
    n = sum(1 for line in lines if line.startswith("## "))
    what = f"{n} generated {block}" if n else f"generated {block}"
    fence = "::::::"
    return [f"{fence}{{kbopt-fold}} Show the {what}", *body, fence]


def _fold_other_gpus(lines: list[str]) -> list[str]:
    """The results block with its other GPUs' tables folded: the kernel's usual GPU stays
    in view, the rest (from the first other-GPU heading to the software line) one click away."""
    start = next((k for k, line in enumerate(lines) if _OTHER_GPU.match(line)), None)
    if start is None:
        return lines
    stop = next(
        (k for k in range(start, len(lines)) if lines[k].startswith("Software: ")), len(lines)
    )
    names = dict.fromkeys(
        m["device"] for line in lines[start:stop] if (m := _OTHER_GPU.match(line))
    )
    folded = _fold("results", lines[start:stop])
    folded[0] = f"::::::{{kbopt-fold}} Show the results measured on {', '.join(names)}"
    return [*lines[:start], *folded, "", *lines[stop:]]


def prepare_devlog(
    text: str,
    anchors: DevlogAnchors,
    applied: dict[str, list[str]],
    entry_titles: dict[str, str],
    entry_doc: str,
) -> str:
    """The devlog's Markdown as the site shows it: labels on version and run headings,
    "Catalog entries" under each version heading, generated profiles folded."""
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        gen = _GEN_OPEN.match(line)
        block = gen.group(1) if gen else None
        if block == "results" or block in FOLDED_BLOCKS:
            end = next((j for j in range(i + 1, len(lines)) if _GEN_CLOSE.match(lines[j])), None)
            if end is not None:
                body = lines[i + 1 : end]
                shown = _fold_other_gpus(body) if block == "results" else _fold(block, body)
                out += [line, *shown, lines[end]]
                i = end + 1
                continue
        label = anchors.lines.get(i)
        if label:
            out += [f"({label})=", line]
            m = _HEADING.match(line)
            names = [n for n in applied.get(m.group(2), []) if n in entry_titles] if m else []
            if names and label in anchors.versions.values():
                links = ", ".join(f"{{doc}}`{entry_titles[n]} <{entry_doc}{n}>`" for n in names)
                out += ["", f"*Catalog entries applied here:* {links}.", ""]
        else:
            out.append(line)
        i += 1
    return "\n".join(out) + ("\n" if text.endswith("\n") else "")


# ----------------------------------------------------------------- entry -> devlog

_RESULTS = re.compile(r"\b(kernels/([\w.-]+)/results/[\w.-]+\.(?:json|csv))")
_ROWS = re.compile(r"\(rows ([\w:.-]+), ([\w:.-]+)\)")
_DEVLOG = re.compile(r"\bdevlog (docs/kernels/([\w.-]+)\.md)")
_CYCLE = re.compile(r"kbopt cycle run ([\w.-]+), attempt (\d+) \(([\w.-]+)")
_URL = re.compile(r"https?://[^\s<>()\"']+[^\s<>()\"'.,;:]")
# "owner/repo" at the start of a Source or after "(": a public repository reference.
_REPO = re.compile(
    r"(?:^|(?<=[(,;] )|(?<=\())([A-Za-z0-9][\w-]*/[A-Za-z0-9][\w.-]*)"
    r"(?:(?:,?\s+)([\w.][\w./-]*\.\w+|README))?"
)
_ARXIV = re.compile(r"arXiv:(\d{4}\.\d{4,5})")
# A web address written without its scheme: docs.nvidia.com/cuda/..., github.com/org/repo.
_HOST_PATH = re.compile(
    r"(?<![\w/.@])((?:[a-z0-9-]+\.)+(?:com|org|io|ai|net|dev)\b(?:/[^\s:;,()\"'<>]*[^\s:;,()\"'<>.])?)"
)
REPO_HOST = "https://github.com"


@dataclass(frozen=True)
class SourceLink:
    text: str
    target: str
    kind: str  # "ref" (a label), "doc" (a docname), "download" (a file), "url"


def source_links(source: str, root: Path, anchors: dict[str, DevlogAnchors]) -> list[SourceLink]:
    """What an evidence block's Source line can link to."""
    links: list[SourceLink] = []
    for m in _RESULTS.finditer(source):
        if (root / m.group(1)).is_file():
            links.append(
                SourceLink(f"results file {Path(m.group(1)).name}", m.group(1), "download")
            )
    for m in _DEVLOG.finditer(source):
        devlog = anchors.get(m.group(2))
        if devlog is None:
            continue
        rows = _ROWS.search(source)
        version = rows.group(2) if rows else None
        if version and version in devlog.versions:
            links.append(SourceLink(f"devlog: {version}", devlog.versions[version], "ref"))
        else:
            links.append(SourceLink(f"devlog: {m.group(2)}", devlog.docname, "doc"))
    for m in _CYCLE.finditer(source):
        devlog = anchors.get(m.group(3))
        label = devlog.runs.get((m.group(1), m.group(2))) if devlog else None
        if devlog and label:
            links.append(SourceLink(f"devlog: cycle record {m.group(2)}", label, "ref"))
    for m in _URL.finditer(source):
        links.append(SourceLink(m.group(0), m.group(0), "url"))
    for m in _HOST_PATH.finditer(_URL.sub("", source)):
        links.append(SourceLink(m.group(1), f"https://{m.group(1)}", "url"))
    for m in _ARXIV.finditer(source):
        links.append(SourceLink(m.group(0), f"https://arxiv.org/abs/{m.group(1)}", "url"))
    if not links:
        for m in _REPO.finditer(source):
            at_start = m.start() == 0 or source[m.start() - 1] == "("
            if m.group(1).startswith(("kernels/", "docs/")) or not (at_start or m.group(2)):
                continue
            url = f"{REPO_HOST}/{m.group(1)}"
            if m.group(2) and "/" in m.group(2):
                url += f"/blob/HEAD/{m.group(2)}"
            links.append(SourceLink(m.group(1), url, "url"))
            break
    return links


def render_source_links(links: list[SourceLink]) -> str:
    """The links as MyST inline markup, separated by " · "."""
    parts = []
    for link in links:
        if link.kind == "ref":
            parts.append(f"{{ref}}`{link.text} <{link.target}>`")
        elif link.kind == "doc":
            parts.append(f"{{doc}}`{link.text} </{link.target}>`")
        elif link.kind == "download":
            parts.append(f"{{download}}`{link.text} </../{link.target}>`")
        else:
            parts.append(
                f"<{link.target}>" if link.text == link.target else f"[{link.text}]({link.target})"
            )
    return " · ".join(parts)
