"""`kbopt init`: set up a user's repository to work with kbopt.

It creates what is missing and never overwrites a file, so running it again is safe:

- `docs/knowledge/` with the folder layout entries live in (`optimizations/`,
  `anti-patterns/`, `languages/<language>/{optimizations,anti-patterns}/`, each kept in
  git by an empty `.gitkeep`) and a README.  This folder is also how kbopt finds the
  project root (`find_project_root`); its entries layer over the ones bundled with kbopt;
- `kernels/` with a README saying how to add a kernel;
- `.claude/agents/` and `.claude/skills/`: the Claude Code agent and skill definitions
  (the files `kbopt agent export-claude` writes);
- `.mcp.json` with the `kbopt mcp` server registered for Claude Code (merged into an
  existing file: the user's other servers stay);
- `catalog/`: the generated index of the entries, bundled ones included;
- `.kbopt-cache/` (the search index) in `.gitignore`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kbopt.errors import KbError
from kbopt.store import CATALOG_DIR, KNOWLEDGE_DIR, Store
from kbopt.vocab import Kind, Language

CACHE_IGNORE = ".kbopt-cache/"
KEEP_FILE = ".gitkeep"

KNOWLEDGE_README = """\
# Knowledge base

This project's optimizations and anti-patterns, one Markdown file per entry, in the
template that `kbopt new` scaffolds.  They layer over the entries bundled with kbopt:
`kbopt list`, `search`, `recommend`, `lint` and `catalog` see both (`kbopt list --json`
gives each entry's `layer`: `project` or `bundled`), and an entry here replaces the
bundled entry of the same name.

Where entries live (the folder must agree with the entry's `kind` and `language`):

    optimizations/                       shared optimizations
    anti-patterns/                       shared anti-patterns
    languages/<language>/optimizations/  e.g. languages/triton/optimizations/
    languages/<language>/anti-patterns/

Write through kbopt, never by hand into catalog/:

    kbopt new optimization my-idea --language triton   # scaffold, then fill it in
    kbopt add draft.md                                 # validate a draft and file it here
    kbopt lint                                         # every problem as path:line

Changing a bundled entry (new evidence, narrower conditions, `kbopt add --update`)
writes the changed copy here; the bundled files are never modified.
"""

KERNELS_README = """\
# Kernels

One folder per kernel: `kernels/<name>/` holds a reference, versioned implementations
and what kbopt needs to measure and profile them.

Add a kernel with

    kbopt kernel new NAME --dims a,b

which scaffolds `kernels/NAME/` (`--dims` names the problem's size parameters, e.g.
`--dims rows,cols`).  `kbopt kernel --help` lists the kernel commands.
"""


@dataclass
class InitReport:
    """What `init_project` did, path by path (relative to the root; folders end in /)."""

    root: Path
    created: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": str(self.root),
            "created": self.created,
            "kept": self.kept,
            "updated": self.updated,
        }


def layout_folders() -> list[Path]:
    """Every folder an entry may live in, under the knowledge root."""
    kinds = [k.folder for k in Kind]
    folders = [Path(k) for k in kinds]
    folders += [Path("languages") / lang.value / k for lang in Language for k in kinds]
    return folders


def init_project(root: Path) -> InitReport:
    """Set up `root` (created if missing, in a folder that exists) for kbopt; see the
    module docstring."""
    root = root.expanduser().resolve()
    if root.exists() and not root.is_dir():
        raise KbError(f"{root} is a file: give kbopt init the folder of your repository")
    if not root.exists() and not root.parent.is_dir():
        # One new folder is a new repository; a chain of them is more likely a typo.
        raise KbError(
            f"{root.parent} does not exist: kbopt init creates the repository's folder, not "
            f"the folders above it (create them first: mkdir -p {root.parent})"
        )
    report = InitReport(root)
    try:
        _make_folder(root, report)
        _write_new(root, KNOWLEDGE_DIR / "README.md", KNOWLEDGE_README, report)
        for folder in layout_folders():
            _keep_folder(root, KNOWLEDGE_DIR / folder, report)
        _write_new(root, Path("kernels") / "README.md", KERNELS_README, report)
        _claude_files(root, report)
        _catalog(root, report)
        _ignore_cache(root, report)
    except OSError as exc:
        where = exc.filename or root
        raise KbError(f"cannot write {where}: {exc.strerror or exc}") from None
    return report


def _make_folder(root: Path, report: InitReport) -> None:
    if not root.is_dir():
        root.mkdir()
        report.created.append("./")


def _write_new(root: Path, rel: Path, text: str, report: InitReport) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        with path.open("x", encoding="utf-8", newline="\n") as fh:  # "x": never overwrite
            fh.write(text)
    except FileExistsError:
        report.kept.append(rel.as_posix())
        return
    report.created.append(rel.as_posix())


def _keep_folder(root: Path, rel: Path, report: InitReport) -> None:
    """The folder, with a `.gitkeep` while it is empty so that git keeps the layout."""
    folder = root / rel
    shown = rel.as_posix() + "/"
    if folder.is_dir() and any(folder.iterdir()):
        report.kept.append(shown)
        return
    folder.mkdir(parents=True, exist_ok=True)
    (folder / KEEP_FILE).touch()
    report.created.append(shown)


def _claude_files(root: Path, report: InitReport) -> None:
    # The same files as `kbopt agent export-claude`; a file that exists is the user's now
    # (maybe edited), so it is kept even when it differs from the generated one.
    from kbopt.agents.claude_export import expected_files

    for rel, text in sorted(expected_files().items()):
        _write_new(root, rel, text, report)
    # .mcp.json may already list the user's own MCP servers: kbopt's is merged in.
    from kbopt.agents import mcp_config

    existed = (root / mcp_config.MCP_JSON).exists()
    if mcp_config.register(root):
        (report.updated if existed else report.created).append(str(mcp_config.MCP_JSON))
    else:
        report.kept.append(str(mcp_config.MCP_JSON))
    # .claude/settings.json likewise: the Task routing hook merged into the user's settings.
    from kbopt.agents import claude_hooks

    existed = (root / claude_hooks.SETTINGS).exists()
    if claude_hooks.register(root):
        (report.updated if existed else report.created).append(str(claude_hooks.SETTINGS))
    else:
        report.kept.append(str(claude_hooks.SETTINGS))


def _catalog(root: Path, report: InitReport) -> None:
    from kbopt.catalog_index import expected_files

    for name, text in expected_files(Store(root)).items():
        _write_new(root, CATALOG_DIR / name, text, report)


def _ignore_cache(root: Path, report: InitReport) -> None:
    path = root / ".gitignore"
    if not path.exists():
        _write_new(root, Path(".gitignore"), f"# kbopt's search index\n{CACHE_IGNORE}\n", report)
        return
    text = path.read_text(encoding="utf-8", errors="replace")  # only looked at, never rewritten
    name = CACHE_IGNORE.rstrip("/")
    if {name, "/" + name} & {line.strip().rstrip("/") for line in text.splitlines()}:
        report.kept.append(".gitignore")
        return
    with path.open("a", encoding="utf-8", newline="\n") as fh:  # the user's lines stay as they are
        fh.write(("" if text.endswith("\n") or not text else "\n") + CACHE_IGNORE + "\n")
    report.updated.append(".gitignore")
