"""Static checks of the package: ruff and mypy report nothing on mechfmu, its components and
the validation models (configuration in pyproject.toml; versions pinned in the test extra)."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("command", [
    ["ruff", "check", "mechfmu", "components"],
    ["mypy", "-p", "mechfmu"],
    ["mypy", "components"],
], ids=["ruff", "mypy-mechfmu", "mypy-components"])
def test_static_checks_are_clean(command):
    proc = subprocess.run([sys.executable, "-m", *command], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stdout[-5000:] + proc.stderr[-2000:]
