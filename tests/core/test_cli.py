"""The `kbopt` command as a user and an agent call it: exit codes, messages, JSON."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from kbopt.cli import build_parser, main
from tests.core.sample import VALID


def run(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kbopt", "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_every_command_has_help_with_an_example() -> None:
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert sub.choices
    for name, cmd in sub.choices.items():
        text = cmd.format_help()
        assert "Example: kbopt" in text, f"`kbopt {name} --help` has no Example"
        assert cmd.description, name


def test_every_argument_of_every_command_explains_itself() -> None:
    """Each option and positional of each (sub)command has help of its own, in words a
    user reads: no requirement codes (KB7, W6) and no pointers to source documents."""
    import argparse
    import re

    def walk(parser: argparse.ArgumentParser, path: str) -> list[str]:
        bad = []
        text = parser.format_help()
        code = re.search(r"\b(?:[A-Z]{1,3}[0-9]{1,2}|source documents?)\b", text)
        if code:
            bad.append(f"{path} --help cites {code.group(0)!r}")
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    bad += walk(sub, f"{path} {name}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                bad.append(f"{path} {'/'.join(action.option_strings) or action.dest} has no help")
        return bad

    assert walk(build_parser(), "kbopt") == []


@pytest.mark.parametrize("path", [["profile"], ["tune"], ["bench"], ["ablate"], ["kernel", "new"]])
def test_measuring_commands_say_every_default_in_their_help(path: list[str]) -> None:
    """An option that has a default says it (argparse's own `choices` list the values)."""
    parser = build_parser()
    for word in path:
        parser = next(a for a in parser._actions if a.dest in ("command", "kernel_command"))
        parser = parser.choices[word]  # type: ignore[index]
    for action in parser._actions:
        if not action.option_strings or action.dest in (
            "help",
            "json",
            "timeout",
            "timeout_after_command",
        ):
            continue
        assert action.help, f"kbopt {' '.join(path)} {action.option_strings[0]} has no help"
        if action.default not in (None, False, [], ""):
            assert "default" in action.help, f"{action.option_strings[0]}: no default shown"
        if action.dest == "arms":
            assert "catalog, random, grid" in action.help


def test_every_help_example_parses(capsys: pytest.CaptureFixture[str]) -> None:
    """A user copies the Example line: its options must be the command's (a required
    option left out, `agent tool` without --role, fails here)."""
    import argparse
    import shlex

    def examples(parser: argparse.ArgumentParser) -> list[str]:
        _, marker, example = (parser.epilog or "").partition("Example:")
        out = [example.strip()] if marker else []
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for sub in action.choices.values():
                    out += examples(sub)
        return [e for e in out if e]

    found = examples(build_parser())
    assert len(found) > 30
    for example in found:
        argv = shlex.split(example.rsplit("|", 1)[-1])  # `echo ... | kbopt ...`
        assert argv[0] == "kbopt", example
        try:
            build_parser().parse_args(argv[1:])
        except SystemExit:
            pytest.fail(f"{example}: {capsys.readouterr().err.strip()}")


def test_search_and_recommend_help_say_the_default_limit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    for command in ("search", "recommend"):
        with pytest.raises(SystemExit):
            main([command, "--help"])
        assert "(default: 10)" in capsys.readouterr().out, command


def test_new_add_show_list_lint_catalog(empty_kb: Path, tmp_path: Path) -> None:
    r = run(empty_kb, "new", "optimization", "my-idea", "--language", "triton", "--json")
    assert r.returncode == 0, r.stderr
    assert (
        json.loads(r.stdout)["path"] == "docs/knowledge/languages/triton/optimizations/my-idea.md"
    )
    r = run(empty_kb, "lint")
    assert r.returncode == 1 and "placeholder 'TODO'" in r.stdout
    r = run(empty_kb, "new", "optimization", "my-idea")
    assert r.returncode == 2 and "already exists" in r.stderr
    (empty_kb / "docs/knowledge/languages/triton/optimizations/my-idea.md").unlink()

    draft = tmp_path / "draft.md"
    draft.write_text(VALID)
    r = run(empty_kb, "add", str(draft), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["id"] == "sample-opt"
    r = run(empty_kb, "add", str(draft))
    assert r.returncode == 2 and "already exists" in r.stderr and "Traceback" not in r.stderr
    r = run(empty_kb, "add", str(draft), "--update")
    assert r.returncode == 0

    r = run(empty_kb, "list", "--json")
    rows = json.loads(r.stdout)
    assert [row["id"] for row in rows] == ["sample-opt"]
    assert {"id", "kind", "scope", "language", "path"} <= set(rows[0])
    assert (empty_kb / rows[0]["path"]).is_file()

    r = run(empty_kb, "show", "sample-opt")
    assert r.stdout == VALID
    r = run(empty_kb, "show", "sample-opt", "--json")
    assert json.loads(r.stdout)["triggers"][0]["metric"] == "ctas_per_sm"

    assert run(empty_kb, "lint").returncode == 0
    assert run(empty_kb, "catalog", "--check").returncode == 0
    (empty_kb / "catalog" / "catalog.json").write_text("{}")
    r = run(empty_kb, "catalog", "--check")
    assert r.returncode == 1 and "stale" in r.stderr
    assert run(empty_kb, "catalog").returncode == 0
    assert run(empty_kb, "catalog", "--check").returncode == 0


def test_an_entry_that_does_not_parse_is_not_left_out_silently(
    empty_kb: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    good = empty_kb / "docs/knowledge/optimizations/sample-opt.md"
    good.parent.mkdir(parents=True)
    good.write_text(VALID)
    broken = good.with_name("broken-entry.md")
    broken.write_text(
        VALID.replace("name: sample-opt", "name: broken-entry").replace("risk: low", "risk: [low")
    )
    warning = "kbopt: warning: docs/knowledge/optimizations/broken-entry.md:"
    root = ["--root", str(empty_kb)]
    assert main([*root, "catalog"]) == 1  # the catalog lacks the entry
    assert warning in capsys.readouterr().err
    assert main([*root, "catalog", "--check", "--json"]) == 1
    out = capsys.readouterr()
    assert json.loads(out.out)["ok"] is False and warning in out.err
    for quick in ("1", "0"):  # the quick path declines; the full command warns
        monkeypatch.setenv("KBOPT_QUICK", quick)
        assert main([*root, "search", "sample"]) == 0
        out = capsys.readouterr()
        assert "sample-opt" in out.out and warning in out.err, out
        profile = empty_kb / "profile.md"
        profile.write_text(
            "## Profile: k v1\n### Metrics\n| Metric | Value |\n|---|---|\n| ctas_per_sm | 0.5 |\n"
        )
        assert main([*root, "recommend", str(profile)]) == 0
        assert warning in capsys.readouterr().err
    broken.unlink()
    assert main([*root, "catalog", "--check"]) == 0


def test_user_errors_are_one_clean_message(empty_kb: Path, tmp_path: Path) -> None:
    cases = [
        (("show", "../../x"), "invalid entry name"),
        (("show", "missing-entry"), "no entry named 'missing-entry'"),
        (("add", str(tmp_path / "nope.md")), "cannot read"),
        (("new", "optimization", "../../x"), "invalid entry name"),
    ]
    for args, fragment in cases:
        r = run(empty_kb, *args)
        assert r.returncode == 2, args
        assert fragment in r.stderr and "Traceback" not in r.stderr, (args, r.stderr)
    bad = tmp_path / "bad.md"
    bad.write_text(VALID.replace("risk: low", "risk: tiny"))
    r = run(empty_kb, "add", str(bad))
    assert r.returncode == 2 and f"{bad}:" in r.stderr and "risk" in r.stderr
    r = run(empty_kb, "add", str(bad), "--json")
    assert r.returncode == 2 and json.loads(r.stdout)["error"]
    assert not list((empty_kb / "docs" / "knowledge").rglob("*.md"))


def test_lint_json_names_file_and_line(empty_kb: Path) -> None:
    path = empty_kb / "docs/knowledge/optimizations/sample-opt.md"
    path.parent.mkdir(parents=True)
    path.write_text(VALID + "- requires `ghost-entry`: needs it\n")
    r = run(empty_kb, "lint", "--json")
    report = json.loads(r.stdout)
    assert r.returncode == 1 and report["ok"] is False
    assert any(
        p.startswith(
            "docs/knowledge/optimizations/sample-opt.md:45: interaction points at unknown entry 'ghost-entry'"
        )
        for p in report["problems"]
    ), report


def test_bundled_catalog_is_clean(repo_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--root", str(repo_root), "lint"]) == 0
    assert main(["--root", str(repo_root), "catalog", "--check"]) == 0
