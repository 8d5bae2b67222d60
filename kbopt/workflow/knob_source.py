"""Rewriting a version's knob values in its source, without importing it.

A version sets its knobs as keyword arguments of `CONFIG = SomeConfig(...)` or as
upper-case module constants (`BLOCK_SIZE = 1024`); `kbopt.kernel.read_knob_values` reads
them, `set_knob_values` here writes them: an existing value is replaced in place, a knob
the `CONFIG(...)` call leaves at its default is added as a keyword.  Everything else in
the file stays byte for byte, and the result is read back to check that it says what was
asked.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from kbopt.errors import KbError
from kbopt.kernel import read_knob_values


def _offsets(text: str) -> list[int]:
    """Byte offset of the start of each line (ast columns count UTF-8 bytes)."""
    starts, total = [0], 0
    for line in text.encode("utf-8").splitlines(keepends=True):
        total += len(line)
        starts.append(total)
    return starts


def set_knob_values(text: str, values: Mapping[str, Any], *, path: str = "<version>") -> str:
    """`text` with each knob of `values` set (see the module docstring)."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as exc:
        raise KbError(f"{path}: cannot parse the version: {exc}") from None
    starts = _offsets(text)
    data = text.encode("utf-8")

    def at(line: int, col: int) -> int:
        return starts[line - 1] + col

    edits: list[tuple[int, int, str]] = []  # (start, end, replacement) in bytes
    todo = dict(values)
    config_call: ast.Call | None = None
    for node in tree.body:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1):
            continue
        target = node.targets[0]
        if not isinstance(target, ast.Name):
            continue
        if target.id == "CONFIG" and isinstance(node.value, ast.Call):
            config_call = node.value
            for kw in node.value.keywords:
                if kw.arg in todo:
                    v = kw.value
                    assert v.end_lineno is not None and v.end_col_offset is not None
                    edits.append(
                        (
                            at(v.lineno, v.col_offset),
                            at(v.end_lineno, v.end_col_offset),
                            repr(todo.pop(kw.arg)),
                        )
                    )
        elif target.id.isupper() and target.id.lower() in todo:
            v = node.value
            assert v.end_lineno is not None and v.end_col_offset is not None
            edits.append(
                (
                    at(v.lineno, v.col_offset),
                    at(v.end_lineno, v.end_col_offset),
                    repr(todo.pop(target.id.lower())),
                )
            )
    if todo:
        if config_call is None:
            raise KbError(
                f"{path}: sets {', '.join(sorted(todo))} neither in CONFIG = ...(...) nor as an "
                "upper-case constant; a catalog move cannot change it"
            )
        func = config_call.func
        assert func.end_lineno is not None and func.end_col_offset is not None
        open_paren = data.index(b"(", at(func.end_lineno, func.end_col_offset))
        if data[open_paren + 1 : open_paren + 2] == b"\n":  # one keyword per line
            added = "".join(f"\n    {k}={v!r}," for k, v in todo.items())
        else:
            has_args = bool(config_call.args or config_call.keywords)
            added = ", ".join(f"{k}={v!r}" for k, v in todo.items()) + (", " if has_args else "")
        edits.append((open_paren + 1, open_paren + 1, added))
    for start, end, new in sorted(edits, reverse=True):
        data = data[:start] + new.encode("utf-8") + data[end:]
    return data.decode("utf-8")


def settable_knobs(path: Path, names: list[str]) -> set[str]:
    """The knobs a catalog move can set in this version file: those its source sets, and
    every one when it has a `CONFIG = X(...)` call (a missing keyword is added)."""
    from kbopt.kernel import read_knob_values

    present = set(read_knob_values(path, names))
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, UnicodeDecodeError):
        return present
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == "CONFIG"
            and isinstance(node.value, ast.Call)
        ):
            return set(names)
    return present


def set_constant(text: str, name: str, value: str) -> str:
    """Replace the string constant `NAME = "..."` when the file has one (VERSION, DESCRIPTION)."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    starts = _offsets(text)
    data = text.encode("utf-8")
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            v = node.value
            assert v.end_lineno is not None and v.end_col_offset is not None
            start = starts[v.lineno - 1] + v.col_offset
            end = starts[v.end_lineno - 1] + v.end_col_offset
            return (data[:start] + repr(value).encode("utf-8") + data[end:]).decode("utf-8")
    return text


def set_docstring_head(text: str, old_version: str, version: str, description: str) -> str:
    """The module docstring of a copied version, opened by its own name and change.

    A version's docstring opens with `<version> — <summary>`; the copy's would still name
    the version it came from.  The copy's opens with the new name and the change, says it
    is a copy with only knob values changed, and keeps the original's notes below."""
    try:
        tree = ast.parse(text)
    except SyntaxError:
        return text
    first = tree.body[0] if tree.body else None
    if not (
        isinstance(first, ast.Expr)
        and isinstance(first.value, ast.Constant)
        and isinstance(first.value.value, str)
        and first.end_lineno is not None
    ):
        return text
    body = (
        f"{version} — {description.rstrip('.')}.\n\n"
        f"A copy of {old_version} with only knob values changed (the catalog designer); "
        f"{old_version}'s notes follow.\n\n{first.value.value.strip()}\n"
    )
    quoted = '"""' + body.replace("\\", "\\\\").replace('"""', '\\"""') + '"""'
    lines = text.splitlines(keepends=True)
    start, end = first.lineno - 1, first.end_lineno
    return "".join(lines[:start]) + quoted + "\n" + "".join(lines[end:])


def write_version(
    source: Path, dest: Path, values: Mapping[str, Any], *, version: str, description: str
) -> None:
    """Copy `source` to `dest` with the knob values changed; checked by reading it back."""
    try:
        text = source.read_text(encoding="utf-8")
    except OSError as exc:
        raise KbError(f"cannot read {source}: {exc.strerror}") from None
    new = set_knob_values(text, values, path=str(source))
    new = set_constant(new, "VERSION", version)
    new = set_constant(new, "DESCRIPTION", description)
    new = set_docstring_head(new, source.stem, version, description)
    dest.write_text(new, encoding="utf-8")
    got = read_knob_values(dest, list(values))
    wrong = {k: got.get(k, "<unset>") for k, v in values.items() if got.get(k, object()) != v}
    if wrong:
        dest.unlink()
        raise KbError(f"{dest}: the knob values did not take ({wrong}); the file was removed")
