"""Every fenced code block of the documentation pages (docs/getting-started.md, docs/tutorial.md,
docs/how-to/*.md) runs here, and so do the ```python blocks of README.md.

A page runs in a fresh temporary working directory that holds two symbolic links, ``scenarios`` (the
repository's scenarios) and ``fmus`` (the built FMUs), so a page reads as in a checkout
(``mechfmu run scenarios/oscillator``) and whatever it writes lands in the temporary directory. Its blocks
run in the order of the page; what one writes the next can read. The language of a block (the first word
of its info string; a second word marks a kind) says what happens to it:

- ```python: run in one namespace per page (matplotlib draws with its Agg backend); must not raise. A
  ```python block whose first line is a comment naming a ``.py`` file (``# run_libcosim.py``) is a script:
  written under that name into the working directory (a console block then runs it), not run in the namespace.
- ```python error: must raise, and the block right after it must be a ```text block whose text
  (whitespace collapsed) occurs in the exception's last line, ``TypeName: message``.
- ```console (or ```bash): every line that starts with ``$ `` is a command (a line ending in ``\\``
  continues on the next), run by bash with the venv's ``mechfmu`` and ``python`` first on PATH, and must
  exit 0. Besides commands a block holds only blank lines and ``#`` comments: output is shown in a
  ```text block of its own.
- ```console error: one command, which must exit non-zero; every other non-blank line is the shown
  output, and each must occur (whitespace collapsed) in what the command printed.
- ```console setup: setting up the machine, checked rather than run where running would change the shared
  environment or take a quarter of an hour: each command is split at ``&&``; ``pip install -e SPEC`` is
  checked (SPEC is this checkout, ``.`` or ``".[EXTRA]"`` with EXTRA an extra of pyproject.toml, and mechfmu
  is installed from this checkout), ``python3 -m pytest ...`` (the whole suite) is checked by running
  ``python3 -m pytest --version``; every other part runs as in a console block.
- ```toml and ```c: a file: its first line is a comment naming it (``# study.toml``, ``// host.c``) and
  the block is written under that name into the working directory.
- ```text: shown output, not run.

A block of any other language, or one that breaks these rules, fails ``test_blocks_follow_the_rules``.
"""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
import tomllib
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
#: the pages whose blocks run here; every how-to page is among them
REQUIRED = ["getting-started.md", "tutorial.md", "how-to/choose-a-master.md", "how-to/events-and-tolerances.md",
            "how-to/parameter-studies.md", "how-to/cross-tool-checks.md", "how-to/import-fmus.md"]
PAGES = sorted(set(REQUIRED) | {p.relative_to(DOCS).as_posix() for p in DOCS.glob("how-to/*.md")})
LANGUAGES = {"python", "console", "bash", "text", "toml", "c"}
KINDS = {"python": {"", "error"}, "console": {"", "error", "setup"}, "bash": {"", "error", "setup"}}
FILE_NAME = re.compile(r"^(?:#|//)\s*([\w.-]+\.\w+)\s*$")
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*(.*)$")
BIN = Path(sys.executable).parent
#: one command's time limit [s]
TIMEOUT = 300


@dataclass
class Block:
    language: str
    kind: str
    text: str
    line: int  # of the opening fence, 1-based

    def where(self, page: str) -> str:
        return f"{page}:{self.line} ({self.language}{' ' + self.kind if self.kind else ''})"


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file, in order (the opening fence's indentation removed)."""
    found: list[Block] = []
    lines = path.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            i += 1
            continue
        indent, fence, info = len(match.group(1)), match.group(2), match.group(3).split()
        body = []
        j = i + 1
        while j < len(lines) and not re.match(rf"^\s*{fence[0]}{{{len(fence)},}}\s*$", lines[j]):
            line = lines[j]
            body.append(line[indent:] if line[:indent].strip() == "" else line.lstrip())
            j += 1
        found.append(Block(info[0] if info else "", " ".join(info[1:]), "\n".join(body) + "\n", i + 1))
        i = j + 1
    return found


def commands(block: Block) -> list[str]:
    """The ``$ `` commands of a console block, continuation lines joined."""
    found: list[str] = []
    continued = False
    for line in block.text.splitlines():
        if continued:
            found[-1] += "\n" + line
        elif line.startswith("$ "):
            found.append(line[2:])
        continued = (continued or line.startswith("$ ")) and line.rstrip().endswith("\\")
    return found


def shown_output(block: Block) -> list[str]:
    """The lines of a console block that are neither commands (nor their continuations) nor blank."""
    shown, continued = [], False
    for line in block.text.splitlines():
        command = line.startswith("$ ") or continued
        continued = command and line.rstrip().endswith("\\")
        if not command and line.strip():
            shown.append(line.strip())
    return shown


def problems(page: str, found: list[Block]) -> list[str]:
    """Every way the blocks of ``page`` break the rules of the module docstring."""
    wrong = []
    for k, block in enumerate(found):
        where = block.where(page)
        if block.language not in LANGUAGES:
            wrong.append(f"{where}: unknown language {block.language!r} (known: {', '.join(sorted(LANGUAGES))})")
        elif block.kind not in KINDS.get(block.language, {""}):
            wrong.append(f"{where}: unknown kind {block.kind!r}")
        elif block.language == "python" and block.kind == "error":
            following = found[k + 1] if k + 1 < len(found) else None
            if following is None or following.language != "text" or not following.text.strip():
                wrong.append(f"{where}: a python error block needs the ```text block of its message right after it")
        elif block.language in ("console", "bash"):
            if not commands(block):
                wrong.append(f"{where}: no '$ ' command")
            if block.kind == "error" and (len(commands(block)) != 1 or not shown_output(block)):
                wrong.append(f"{where}: an error block holds one command and the message it shows")
            if block.kind != "error":
                wrong += [f"{where}: {line!r} is neither a command nor a comment (show output in a ```text block)"
                          for line in shown_output(block) if not line.startswith("#")]
        elif block.language in ("toml", "c") and not FILE_NAME.match(block.text.splitlines()[0] if block.text else ""):
            wrong.append(f"{where}: the first line must be a comment naming the file (# name.toml, // name.c)")
    return wrong


def script_name(block: Block) -> str | None:
    """The file name a ```python block's first line gives (``# name.py``), if it does."""
    match = FILE_NAME.match(block.text.splitlines()[0] if block.text.strip() else "")
    return match.group(1) if match and match.group(1).endswith(".py") else None


def collapsed(text: str) -> str:
    return " ".join(text.split())


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["MPLBACKEND"] = "Agg"
    env.pop("VIRTUAL_ENV", None)
    return env


def shell(command: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=environment(), capture_output=True, text=True,
                          timeout=TIMEOUT)


def check_pip_install(part: str) -> None:
    """``pip install -e SPEC``: SPEC is this checkout (with declared extras), and mechfmu is installed from it."""
    words = shlex.split(part)
    assert words[:3] == ["pip", "install", "-e"] and len(words) == 4, f"{part!r}: expected pip install -e SPEC"
    match = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", words[3])
    assert match, f"{part!r}: SPEC must be this checkout, '.' or '.[EXTRA]'"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert project["name"] == "mechfmu"
    for extra in (match.group(1) or "").split(","):
        assert not extra or extra in project.get("optional-dependencies", {}), f"{part!r}: no extra {extra!r}"
    import mechfmu
    assert Path(mechfmu.__file__).resolve().is_relative_to(ROOT), "mechfmu is not installed from this checkout"


def run_console(block: Block, page: str, cwd: Path) -> None:
    where = block.where(page)
    for command in commands(block):
        if block.kind == "setup":
            for part in (p.strip() for p in command.split("&&")):
                if part.startswith("pip install"):
                    check_pip_install(part)
                elif re.match(r"python3? -m pytest\b", part):
                    done = shell("python3 -m pytest --version", cwd)
                    assert done.returncode == 0, f"{where}: pytest is not installed: {done.stderr}"
                else:
                    done = shell(part, cwd)
                    assert done.returncode == 0, f"{where}: `{part}` exited {done.returncode}:\n{done.stderr}"
            continue
        done = shell(command, cwd)
        printed = done.stdout + done.stderr
        if block.kind == "error":
            assert done.returncode != 0, f"{where}: `{command}` was to fail but exited 0:\n{printed}"
            for line in shown_output(block):
                assert collapsed(line) in collapsed(printed), f"{where}: {line!r} not in the output:\n{printed}"
        else:
            assert done.returncode == 0, f"{where}: `{command}` exited {done.returncode}:\n{printed}"


def run_page(path: Path, name: str, cwd: Path, monkeypatch) -> int:
    """Run every block of the page at ``path`` in ``cwd``; returns the number of blocks run."""
    import matplotlib
    matplotlib.use("Agg")
    from mechfmu.fmu import build
    (cwd / "scenarios").symlink_to(ROOT / "scenarios")
    (cwd / "fmus").symlink_to(build.FMU_DIR)
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("MPLBACKEND", "Agg")
    found = blocks(path)
    wrong = problems(name, found)
    assert not wrong, "\n".join(wrong)
    namespace: dict = {"__name__": "__docs__"}
    ran = 0
    for k, block in enumerate(found):
        where = block.where(name)
        if block.language == "python" and script_name(block):
            (cwd / script_name(block)).write_text(block.text)
        elif block.language == "python":
            code = compile(block.text, where, "exec")
            if block.kind == "error":
                try:
                    exec(code, namespace)
                except Exception as exc:  # the error the page shows
                    last = traceback.format_exception_only(type(exc), exc)[-1]
                    expected = found[k + 1].text
                    assert collapsed(expected) in collapsed(last), \
                        f"{where}: raised {last!r}, the page shows {expected!r}"
                else:
                    raise AssertionError(f"{where}: was to raise, ran without an error")
            else:
                exec(code, namespace)
        elif block.language in ("console", "bash"):
            run_console(block, name, cwd)
        elif block.language in ("toml", "c"):
            file_name = FILE_NAME.match(block.text.splitlines()[0]).group(1)
            (cwd / file_name).write_text(block.text)
        else:
            continue  # text: shown, not run
        ran += 1
    import matplotlib.pyplot as plt
    plt.close("all")
    return ran


def test_the_pages_exist():
    missing = [page for page in REQUIRED if not (DOCS / page).is_file()]
    assert not missing, f"missing pages: {missing}"


@pytest.mark.parametrize("page", PAGES)
def test_blocks_follow_the_rules(page):
    found = blocks(DOCS / page)
    assert found, f"{page}: no code block"
    wrong = problems(page, found)
    assert not wrong, "\n".join(wrong)


def test_an_unknown_language_and_a_misplaced_output_are_refused(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("Text.\n\n```ruby\nputs 1\n```\n\n- item\n\n  ```console\n  $ mechfmu --version\n  mechfmu 0.1\n"
                    "  ```\n\n```python error\nint('x')\n```\n")
    found = blocks(page)
    assert [(b.language, b.kind) for b in found] == [("ruby", ""), ("console", ""), ("python", "error")]
    wrong = problems("page.md", found)
    assert len(wrong) == 3 and "unknown language 'ruby'" in wrong[0] and "'mechfmu 0.1'" in wrong[1] \
        and "```text block" in wrong[2]


@pytest.mark.slow
def test_an_error_block_must_fail_with_its_message(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    for case, shown in (("right", "no FMU at NoSuchModel"), ("wrong", "something it does not say")):
        page.write_text(f"```console error\n$ mechfmu info NoSuchModel\n{shown}\n```\n")
        (tmp_path / case).mkdir()
        if case == "right":
            assert run_page(page, "page.md", tmp_path / case, monkeypatch) == 1
        else:
            with pytest.raises(AssertionError, match="not in the output"):
                run_page(page, "page.md", tmp_path / case, monkeypatch)


@pytest.mark.slow
@pytest.mark.parametrize("page", PAGES)
def test_page_runs(page, tmp_path, monkeypatch):
    assert run_page(DOCS / page, page, tmp_path, monkeypatch) > 0


def readme_python_blocks() -> list[Block]:
    return [b for b in blocks(ROOT / "README.md") if b.language == "python"]


@pytest.mark.slow
def test_readme_python_example_runs(tmp_path, monkeypatch):
    found = readme_python_blocks()
    assert found, "README.md shows the typed API in a ```python block"
    page = tmp_path / "README-python.md"
    page.write_text("".join(f"```python\n{b.text}```\n\n" for b in found))
    (tmp_path / "work").mkdir()
    assert run_page(page, "README.md (its python blocks)", tmp_path / "work", monkeypatch) == len(found)


#: every page a user reads: README.md and docs/ (command lines are checked on all of them, not only those run)
ALL_PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
#: a ``mechfmu ...`` command in an inline code span (not a usage line: those hold [ ] | ... < {)
INLINE = re.compile(r"(?<!`)`(mechfmu [^`\[\]|<{…]+)`(?!`)")
#: a placeholder the reader replaces (SCENARIO, NAME.ssp, FILE)
PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_]*(\.\w+)?")


def documented_commands() -> list[tuple[str, str, bool]]:
    """(where, command line, whole) for every ``mechfmu`` command of the pages: whole for a command of a console
    or bash block (run as shown: it must parse), not for one quoted in the text (it may name a command or an
    option alone: ``mechfmu run --built-fmus``)."""
    found = []
    for page in ALL_PAGES:
        name = page.relative_to(ROOT).as_posix()
        lines = page.read_text(encoding="utf-8").splitlines()
        inside = set()
        for block in blocks(page):
            inside.update(range(block.line, block.line + block.text.count("\n") + 2))
            if block.language in ("console", "bash"):
                for command in commands(block):
                    for part in re.split(r"&&|\|\||;|\|", command.replace("\\\n", " ")):
                        if part.strip().startswith("mechfmu "):
                            found.append((f"{name}:{block.line}", part.strip(), True))
        for number, line in enumerate(lines, 1):
            if number not in inside:
                found += [(f"{name}:{number}", m.group(1).strip(), False) for m in INLINE.finditer(line)
                          if "..." not in m.group(1)]
    return found


def command_problem(command: str, whole: bool) -> str | None:
    """Why the current command line parser refuses ``command`` (None if it takes it): a whole command must parse;
    a quoted one must name a command and only options that command has, with a value among its choices."""
    import argparse
    import contextlib
    import io

    from mechfmu.cli.parser import joined_negative_values, make_parser

    argv, parser = shlex.split(command)[1:], make_parser()
    if whole:
        errors = io.StringIO()
        try:
            with contextlib.redirect_stderr(errors), contextlib.redirect_stdout(io.StringIO()):
                parser.parse_args(joined_negative_values(argv))
        except SystemExit as exc:
            return errors.getvalue().strip().splitlines()[-1] if exc.code else None
        return None
    if not argv or argv[0].startswith("-") or PLACEHOLDER.fullmatch(argv[0]):
        return None  # mechfmu --help, mechfmu COMMAND --help
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    if argv[0] not in subcommands:
        return f"no command {argv[0]!r}"
    options = subcommands[argv[0]]._option_string_actions  # argparse's table of a parser's options
    for token, following in zip(argv[1:], [*argv[2:], None]):
        if not token.startswith("-") or re.fullmatch(r"-[\d.]", token[:2]):
            continue
        option = options.get(token.split("=", 1)[0])
        if option is None:
            return f"mechfmu {argv[0]} has no option {token.split('=', 1)[0]}"
        value = token.split("=", 1)[1] if "=" in token else following
        if option.choices and value is not None and not PLACEHOLDER.fullmatch(value) \
                and value not in option.choices:
            return f"{token.split('=', 1)[0]} {value!r} is not one of {sorted(option.choices)}"
    return None


def test_every_command_line_of_the_docs_is_taken_by_the_parser():
    """Every ``mechfmu ...`` shown in README.md and docs/ names a command and options the command line has (a
    command of a console block parses as a whole), so no page teaches an option that was renamed or removed."""
    found = documented_commands()
    assert len(found) > 100 and any(whole for _, _, whole in found)
    wrong = [f"{where}: {command}: {why}" for where, command, whole in found
             if (why := command_problem(command, whole)) is not None]
    assert not wrong, "\n".join(wrong)


def test_a_command_line_the_parser_refuses_is_found():
    assert command_problem("mechfmu run scenarios/oscillator --stop 1", True) is None
    assert "unrecognized" in command_problem("mechfmu run scenarios/oscillator --stopp 1", True)
    assert command_problem("mechfmu run --built-fmus", False) is None
    assert command_problem("mechfmu run --algorithm NAME", False) is None
    assert "no option --no-such" in command_problem("mechfmu run --no-such", False)
    assert "not one of" in command_problem("mechfmu run --algorithm jacobbi", False)
    assert "no command 'rn'" in command_problem("mechfmu rn x", False)
