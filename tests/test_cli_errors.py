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
     "mass: parameter m = -5 is out of range (0, inf] kg"),
    (lambda t: t.replace("Mass.fmu", "NoSuchBody.fmu"), "mass: FMU not found"),
    (lambda t: t.replace('startConnector="flange_a.s"', 'startConnector="flange_a.x"'),
     "mass has no variable 'flange_a.x'"),
])
@pytest.mark.slow
def test_bad_scenario_gives_one_clear_message(fmus, tmp_path, edit, fragment):
    folder = make_bad(tmp_path, edit)
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(folder)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode != 0
    assert fragment in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout


@pytest.mark.parametrize("source", ["ssd", "--param"])
def test_zero_mass_is_refused_before_the_run_by_its_exclusive_bound(fmus, tmp_path, source):
    """m = 0 passes the modelDescription's inclusive min (FMI has no exclusive bound), but Mass declares m > 0:
    refused up front, exit 2, in the SSD as on the command line, with the bound shown open."""
    if source == "ssd":
        folder = make_bad(tmp_path, lambda t: t.replace('name="m"><ssv:Real value="5.0"',
                                                        'name="m"><ssv:Real value="0.0"'))
        argv = ["run", str(folder)]
    else:
        argv = ["run", "scenarios/oscillator", "--param", "mass.m=0"]
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "mass: parameter m = 0 is out of range (0, inf] kg: it must be > 0" in proc.stderr
    assert "Traceback" not in proc.stderr + proc.stdout and "ok" not in proc.stdout


@pytest.mark.parametrize("argv, said", [
    (["run", "scenarios/oscillator", "--param", "mass.m=2", "--param", "mass.m=3"],
     "--param mass.m is given twice ('2' and '3'): give it once"),
    (["sweep", "scenarios/oscillator", "--grid", "mass.m=1,2", "--grid", "mass.m=3,4", "--metric", "v=final(mass.v)",
      "--out", "{tmp}/study.csv"], "--grid mass.m is given twice ('1,2' and '3,4'): give it once"),
])
def test_an_option_given_twice_for_one_name_is_refused(fmus, tmp_path, argv, said):
    """The last of two values for one name is not silently taken: exit 2 naming the name and both values."""
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", *(a.format(tmp=tmp_path) for a in argv)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and said in proc.stderr, proc.stdout + proc.stderr


@pytest.mark.slow
def test_a_result_file_of_a_format_we_do_not_write_is_refused(tmp_path):
    """--out x.xlsx would get CSV text under a spreadsheet's name: refused before the run, naming .csv."""
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", "scenarios/oscillator", "--local", "--out",
                           str(tmp_path / "x.xlsx")], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 2 and "x.xlsx: results are written as CSV" in proc.stderr, proc.stdout + proc.stderr
    assert not (tmp_path / "x.xlsx").exists()


def test_a_file_whose_root_is_not_a_system_structure_description_is_refused(fmus, tmp_path):
    """An SSD whose root element is not ssd:SystemStructureDescription is no SSP file, whatever it holds."""
    folder = make_bad(tmp_path, lambda t: t.replace("ssd:SystemStructureDescription", "ssd:Foo"))
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(folder)], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert "the root element is '{http://ssp-standard.org/SSP1/SystemStructureDescription}Foo'" in proc.stderr


@pytest.mark.parametrize("name, expected", [("../../escaped", "_.._escaped"), ("/tmp/abs", "_tmp_abs"),
                                            ("..", "scenario"), ("a b/c", "a_b_c")])
@pytest.mark.parametrize("command, suffix", [("export-ssp", ".ssp"), ("draw", ".svg")])
@pytest.mark.slow
def test_a_default_output_never_leaves_the_current_folder(fmus, tmp_path, name, expected, command, suffix):
    """Without -o the file is named after the scenario: its name is read from the file, so it is made one safe
    file name in the current folder; nothing is written anywhere else."""
    folder = make_bad(tmp_path, lambda t: t.replace('name="oscillator"', f'name="{name}"'))
    work = tmp_path / "work" / "here"
    work.mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", command, str(folder)], capture_output=True, text=True,
                          cwd=work, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [p.name for p in work.iterdir()] == [expected + suffix]
    assert sorted(p.name for p in (tmp_path / "work").iterdir()) == ["here"]
