"""The built FMUs: fmpy validation, bit-identical to the in-process component, exact state handling,
and running in a Python process that never imported this repository."""
import json
import shutil
import subprocess
import sys
import time
import zipfile

import pytest
from conftest import slow_but
from fmpy.validation import validate_fmu
from mechfmu.components import COMPONENTS

from mechfmu.fmu.build import is_current
from mechfmu.fmu.integrity import READ_BACK


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_fmpy_validate_finds_no_problems(fmus, model):
    assert validate_fmu(str(fmus[model])) == []


@pytest.mark.parametrize("model", slow_but(sorted(COMPONENTS), "Mass"))
def test_fmu_manipulation_toolbox_checker_finds_no_problems(fmus, model):
    """The second checker: the modelDescription against the FMI 2.0 XSD and its semantic checks
    (``fmutool -check``, run by this interpreter, exits non-zero on any error)."""
    pytest.importorskip("fmu_manipulation_toolbox")
    proc = subprocess.run([sys.executable, "-m", "fmu_manipulation_toolbox", "-input", str(fmus[model]), "-check"],
                          capture_output=True, text=True, timeout=120)
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output
    assert "compliant with FMI-2.0" in output and "No semantic error against the FMI-2 standard" in output, output
    assert "ERROR" not in output, output


@pytest.mark.parametrize("model", sorted(COMPONENTS))
@pytest.mark.slow
def test_fmu_matches_component_bit_for_bit_and_state_roundtrips(fmus, model, tmp_path):
    check_round_trip(fmus[model], COMPONENTS[model], tmp_path)


def check_round_trip(fmu, cls, tmp_path) -> None:
    """The FMU in a Python that never imported this repository, driven with random inputs: state
    get/set and serialization replay bit for bit, and every output equals the class's in-process."""
    script = __file__.replace("test_fmus.py", "fmu_roundtrip.py")
    command = [sys.executable, "-I", script, str(fmu), "7", json.dumps(cls.example_parameters)]
    started = time.monotonic()
    try:
        proc = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    except subprocess.TimeoutExpired as exc:  # say so, with what the child had written (a hang, not a mismatch)
        pytest.fail(f"round trip of {fmu.name} did not finish in {exc.timeout} s; stdout tail "
                    f"{(exc.stdout or b'')[-400:]!r}, stderr tail {(exc.stderr or b'')[-2000:]!r}")
    elapsed = time.monotonic() - started
    where = (f"round trip of {fmu.name}: exit code {proc.returncode} after {elapsed:.1f} s; "
             f"stdout tail {proc.stdout[-400:]!r}; stderr tail {proc.stderr[-2000:]!r}")
    assert proc.returncode == 0, where
    try:
        report = json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        pytest.fail(f"no JSON report on the last stdout line: {where}")
    assert report["replay_equal"] and report["serialized_equal"]
    component = cls("roundtrip")
    for name, value in cls.example_parameters.items():
        component.set(name, value)
    component.initialize(0.0)
    if "frictionMode" in report["outputs"]:  # the sequence really switches the state machines
        rows = [[float.fromhex(x) for x in row] for row in report["rows"]]
        for state in ("frictionMode", "limitStopState"):
            column = [row[report["outputs"].index(state)] for row in rows]
            assert any(x == 0 for x in column) and any(x != 0 for x in column), state
    for n, values in enumerate(report["sequence"]):
        for name, value in zip(report["inputs"], values):
            component.set(name, float.fromhex(value))
        component.do_step(n * 1e-3, 1e-3)
        expected = [float.fromhex(x) for x in report["rows"][n]]
        assert [component.get(o) for o in report["outputs"]] == expected, f"step {n}"


def test_scenario_through_fmus_equals_in_process_bit_for_bit(fmus):
    """Three instances of one FMU in one process, two runs in a row (pythonfmu 0.7.0 used to crash
    here), and the FMU run is identical to the in-process run for both algorithms."""
    from mechfmu.master.simulate import simulate
    for algorithm in ("jacobi", "gauss-seidel"):
        runs = [simulate("scenarios/two_mass_oscillator", algorithm=algorithm, stop=0.5, local=local)
                for local in (False, False, True)]
        assert all(r.ok for r in runs), [r.message for r in runs]
        for r in runs[1:]:
            assert r.data.dtype == runs[0].data.dtype
            assert all((r.data[n] == runs[0].data[n]).all() for n in r.data.dtype.names)


@pytest.mark.slow
def test_fmus_appear_complete_while_another_process_builds(fmus, tmp_path):
    """The flaky round trip under load: a test session reading fmus/ while another session rebuilt them
    (both see stale FMUs at start) could read an FMU half written, or pythonfmu's own before our loader
    was packed in. Now each FMU is written beside its target and renamed, and builders take turns."""
    shutil.copy(fmus["Mass"], tmp_path / "Mass.fmu")
    code = ("import sys; from pathlib import Path; from mechfmu.fmu.build import build; "
            "build(['Mass'], directory=Path(sys.argv[1]), force=True)")
    builders = [subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stderr=subprocess.PIPE, text=True)
                for _ in range(2)]
    reads = 0
    while any(b.poll() is None for b in builders):
        with zipfile.ZipFile(tmp_path / "Mass.fmu") as fmu:  # never missing, never a partial zip
            assert "documentation/index.html" in fmu.namelist()  # never pythonfmu's unpackaged FMU
        reads += 1
    assert [b.wait() for b in builders] == [0, 0], [b.stderr.read() for b in builders]
    assert reads > 10 and is_current(tmp_path / "Mass.fmu")
    assert sorted(p.name for p in tmp_path.iterdir()) == [".build.lock", READ_BACK, "Mass.fmu"]  # nothing temporary
