"""Bad scenarios end in one clear message, no traceback, non-zero exit code."""
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def make_bad(tmp_path, edit):
    folder = tmp_path / "scenarios" / "bad"
    folder.mkdir(parents=True)
    text = (ROOT / "scenarios/oscillator/SystemStructure.ssd").read_text()
    text = text.replace("../../fmus/", (ROOT / "fmus").as_posix() + "/")
    (folder / "SystemStructure.ssd").write_text(edit(text))
    return folder


@pytest.mark.parametrize("edit, fragment", [
    (lambda t: t.replace('name="m"><ssv:Real value="5.0"', 'name="m"><ssv:Real value="-5.0"'),
     "mass: parameter m = -5.0 is out of range [0.0, inf] kg"),
    (lambda t: t.replace("Mass.fmu", "NoSuchBody.fmu"), "mass: FMU not found"),
    (lambda t: t.replace('startConnector="flange_a.s"', 'startConnector="flange_a.x"'),
     "mass has no variable 'flange_a.x'"),
])
def test_bad_scenario_gives_one_clear_message(fmus, tmp_path, edit, fragment):
    folder = make_bad(tmp_path, edit)
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(folder)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode != 0
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


def test_zero_mass_is_refused_at_initialization_by_the_fmu(fmus, tmp_path):
    """m = 0 passes the modelDescription's inclusive min; the FMU itself refuses it."""
    folder = make_bad(tmp_path, lambda t: t.replace('name="m"><ssv:Real value="5.0"', 'name="m"><ssv:Real value="0.0"'))
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(folder)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 1
    assert "Mass 'mass': m = 0.0 is out of range: must be > 0 kg" in proc.stdout
    assert "Traceback" not in proc.stderr + proc.stdout
