"""The suite's own set-up does not depend on PATH: tests that run a Python tool (the FMU checker, ruff,
the command line) pass when PATH holds only the system tools' folders, not this interpreter's scripts
folder, as when the virtual environment the tests run in is not activated."""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SYSTEM_TOOLS = ("cc", "gcc", "valgrind", "ldd")  # the programs the suite rightly takes from PATH
TOOL_TESTS = [
    "tests/test_fmus.py::test_fmu_manipulation_toolbox_checker_finds_no_problems[Mass]",
    "tests/test_static_checks.py::test_static_checks_are_clean[ruff]",
    "tests/test_observers.py::test_command_line_with_out_counts_the_same_fmu_calls_as_simulate",
]


def system_tool_path() -> str:
    """A PATH with only the folders of the system tools, without this interpreter's scripts folder."""
    scripts = Path(sysconfig.get_path("scripts")).resolve()
    folders = [Path(found).parent for found in map(shutil.which, SYSTEM_TOOLS) if found]
    return os.pathsep.join(dict.fromkeys(str(folder) for folder in folders if folder.resolve() != scripts))


def test_tool_invocations_pass_without_the_environment_on_path(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("PATH", "VIRTUAL_ENV")}
    env["PATH"] = system_tool_path()
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-n0", "-p", "no:cacheprovider", "--basetemp",
                           str(tmp_path / "inner"), *TOOL_TESTS], capture_output=True, text=True, cwd=ROOT, env=env,
                          timeout=600)
    assert proc.returncode == 0 and f"{len(TOOL_TESTS)} passed" in proc.stdout, proc.stdout[-5000:] + proc.stderr
