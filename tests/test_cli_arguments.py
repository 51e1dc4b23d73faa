"""The command line checks every argument before anything runs (exit 2, the valid choices named), reads
negative numbers as values, reports what it cannot do and why, and has short, complete help texts."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from mechfmu.cli import main
from mechfmu.cli.parser import joined_negative_values
from mechfmu.master.algorithms import ALGORITHMS

ROOT = Path(__file__).resolve().parent.parent
OSCILLATOR = str(ROOT / "scenarios" / "oscillator")


def cli(*argv: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True, cwd=cwd,
                          timeout=600)


@pytest.mark.slow
def test_a_negative_number_is_a_value_not_an_option():
    assert joined_negative_values(["run", "x", "--step", "-1e-4", "--stop", "-.5", "--local"]) == \
        ["run", "x", "--step=-1e-4", "--stop=-.5", "--local"]
    assert joined_negative_values(["--param", "mass.s_start=-1", "--step", "-inf"]) == \
        ["--param", "mass.s_start=-1", "--step=-inf"]
    assert joined_negative_values(["-h"]) == ["-h"]  # an option is still an option
    proc = cli("run", OSCILLATOR, "--local", "--step", "-1e-4")
    assert proc.returncode == 2, proc.stderr
    assert "expected one argument" not in proc.stderr
    assert "step -0.0001 s must be positive and finite" in proc.stderr


@pytest.mark.parametrize("argv, fragment", [
    (["--output-variables", "nosuch.*"], "--output-variables ['nosuch.*'] match no output"),
    (["--plot", "{tmp}/p.png", "--plot-variables", "mass.x"], "--plot-variables ['mass.x'] match no output"),
    (["--output-variables", "mass.*", "--plot", "{tmp}/p.png", "--plot-variables", "spring.f"],
     "--plot-variables (of the recorded --output-variables) ['spring.f'] match no output"),
    (["--plot-variables", "mass.s"], "--plot-variables chooses what --plot draws: give --plot FILE.png"),
])
@pytest.mark.slow
def test_output_and_plot_variables_are_refused_before_the_run(tmp_path, argv, fragment):
    out = tmp_path / "r.csv"
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    proc = cli("run", OSCILLATOR, "--local", "--out", str(out), *argv)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert fragment in proc.stderr
    if "match no output" in fragment:  # the names it could have been
        assert "(components: ground, mass, spring)" in proc.stderr or "(components: mass), e.g. mass.s" in proc.stderr
    assert not list(tmp_path.glob("r*.csv")) and "Traceback" not in proc.stderr  # nothing ran


def test_crosscheck_without_libcosim_runs_the_rest_and_says_what_to_install(capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "libcosimpy", None)  # as if not installed: find_spec is None
    assert main(["crosscheck", OSCILLATOR, "--steps", "20"]) == 0
    out, err = capsys.readouterr()
    assert "pip install libcosimpy==0.0.6" in err
    assert "jacobi FMUs vs in-process" in out and "bitwise  ok" in out
    assert "strict Jacobi vs libcosim" in out and "not run: libcosimpy is not installed" in out


@pytest.mark.slow
def test_a_sweep_with_a_mistyped_name_or_metric_runs_nothing_and_names_the_valid_ones(tmp_path):
    table = tmp_path / "study.csv"
    proc = cli("sweep", OSCILLATOR, "--grid", "mass.mm=1,2", "--grid", "algorithm=jacobi,jacoby",
               "--option", "tolerance=1e-9", "--metric", "v=final(mass.vv)", "--metric", "s=final(mass.s)",
               "--out", str(table), "--workers", "0", "--local")
    assert proc.returncode == 2, proc.stdout + proc.stderr
    for fragment in ("4 problem(s), nothing was run",
                     "mass.mm: unknown parameter; the parameters of mass are L, m, s_start, v_start",
                     "algorithm 'jacoby': use one of auto, fixed-point, gauss-seidel, jacobi, linear-implicit, monolithic, newton",
                     "algorithm 'jacobi': unknown option(s) ['tolerance']",
                     "metric v = 'final(mass.vv)': mass.vv is not an output of the scenario"):
        assert fragment in proc.stderr
    assert not table.exists()


@pytest.mark.slow
def test_a_sweep_whose_runs_all_fail_exits_non_zero_with_the_first_reasons(tmp_path):
    """Jacobi at h >= 0.05 s diverges on oscillator_linear (see the README's divergence guard)."""
    proc = cli("sweep", str(ROOT / "scenarios" / "oscillator_linear"), "--grid", "step=0.05,0.1", "--algorithm",
               "jacobi", "--stop", "10", "--metric", "v=final(mass.v)", "--out", str(tmp_path / "t.csv"),
               "--workers", "0", "--local")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "2 computed, 2 failed" in proc.stdout
    assert "first failures:\n  run 0: the coupled system diverged" in proc.stderr
    assert "\n  run 1: the coupled system diverged" in proc.stderr
    half = cli("sweep", str(ROOT / "scenarios" / "oscillator_linear"), "--grid", "step=0.01,0.1", "--algorithm",
               "jacobi", "--stop", "10", "--metric", "v=final(mass.v)", "--out", str(tmp_path / "h.csv"),
               "--workers", "0", "--local")
    assert half.returncode == 0 and "1 failed" in half.stdout  # a study may map where runs fail
    assert "run 1: the coupled system diverged" in half.stderr


@pytest.mark.slow
def test_help_texts_are_short_and_complete():
    top = cli("--help").stdout
    assert "couples them." in top  # the description is whole, not cut off mid-sentence
    commands = ("build", "run", "algorithms", "sweep", "plot-study", "export-ssp", "crosscheck",
                "export-crosscheck", "validate", "info")
    assert all(f"\n    {c} " in top or f"\n    {c}\n" in top for c in commands), top
    run = cli("run", "--help").stdout
    assert len(run.splitlines()) <= 60, len(run.splitlines())
    assert run.count("event_tolerance") == 0 and "mechfmu algorithms" in run  # options listed once, elsewhere
    listing = cli("algorithms").stdout
    for name, cls in ALGORITHMS.items():
        assert f"\n{name}: " in "\n" + listing
        assert all(f"  {key} " in listing for key in cls.options), name


@pytest.mark.slow
def test_an_output_interval_that_is_not_finite_is_refused_naming_it():
    for value in ("1e308", "1e99999", "-inf"):
        proc = cli("run", OSCILLATOR, "--local", "--stop", "0.01", "--output-interval", value)
        assert proc.returncode == 2 and "output interval" in proc.stderr and "must be a positive multiple" in \
            proc.stderr, (value, proc.stderr)


@pytest.mark.slow
def test_export_ssp_refuses_an_empty_or_non_regular_target(tmp_path):
    empty = cli("export-ssp", OSCILLATOR, "-o", "", cwd=tmp_path)
    assert empty.returncode == 2 and "-o/--output is empty" in empty.stderr
    assert not list(tmp_path.iterdir())  # no oscillator.ssp written instead
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    proc = cli("export-ssp", OSCILLATOR, "-o", str(fifo))
    assert proc.returncode == 2 and f"-o {fifo}: not a regular file; an archive needs one" in proc.stderr


@pytest.mark.slow
def test_info_on_a_file_that_is_not_an_fmu_names_it(tmp_path):
    text = tmp_path / "notes.fmu"
    text.write_text("not a zip")
    proc = cli("info", str(text))
    assert proc.returncode == 2 and f"{text}: not an FMU that can be read" in proc.stderr


def test_the_algorithms_listing_says_what_auto_chooses(capsys):
    """`mechfmu algorithms` names, as auto's choice for a system of Model Exchange components, the master auto
    runs it with (a mass and a spring to ground: every component has a Model Exchange form)."""
    from mechfmu import CoordinateSpringDamper, Fixed, Mass, System
    from mechfmu.cli.parser import print_algorithms
    s = System("plain")
    ground, spring, mass = s.add("ground", Fixed()), s.add("spring", CoordinateSpringDamper()), s.add("mass", Mass())
    s.connect(ground.flange, spring.flange_a)
    s.connect(spring.flange_b, mass.flange_a)
    s.experiment(stop_time=0.01)
    chosen = s.run(local=True).algorithm
    print_algorithms()
    auto = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("auto:"))
    assert auto.split("; ")[1].startswith(f"chooses {chosen} "), (chosen, auto)
