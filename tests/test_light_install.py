"""A light install: the core builds the FMUs for this machine alone, the cross builds and the studies need their
extras and say which when missing, and a wheel's prebuilt FMUs and libraries are used without compiling."""
import importlib.util
import re
import zipfile

import pytest

from mechfmu.cli import main
from mechfmu.fmu import build, integrity, native
from mechfmu.fmu import prebuilt as prebuilt_module
from mechfmu.studies import MissingExtra
from mechfmu.studies.runner import run_study
from mechfmu.studies.study import Study


def binaries(fmu):
    with zipfile.ZipFile(fmu) as zf:
        return {name.split("/")[1] for name in zf.namelist() if name.startswith("binaries/")}


@pytest.mark.slow
def test_a_build_is_for_this_machine_unless_asked_for_more(tmp_path):
    """The default build compiles the host's binary alone (the others need zig); --platforms all adds them."""
    assert main(["build", "--dir", str(tmp_path)]) == 0
    assert binaries(tmp_path / "Mass.fmu") == {native.HOST_PLATFORM}
    assert build.build(["Mass"], directory=tmp_path) == []  # current for this machine
    assert build.is_current(tmp_path / "Mass.fmu", platforms=[native.HOST_PLATFORM])
    assert not build.is_current(tmp_path / "Mass.fmu", platforms=list(native.PLATFORMS))


def without(monkeypatch, *packages):
    """``importlib.util.find_spec`` as if ``packages`` (top-level names) were not installed."""
    find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name.split(".")[0] in packages else find_spec(name, *a))


def test_a_cross_build_without_zig_names_the_extra(monkeypatch, tmp_path, capsys):
    """Refused before anything is built, in one line: no traceback of the builder."""
    without(monkeypatch, "ziglang")
    with pytest.raises(RuntimeError, match=r'needs zig \(ziglang==0\.17\.1\).*pip install -e "[^"]+\[cross\]"'):
        build.build(["Mass"], directory=tmp_path, platforms=["linux64", "win64"])
    assert main(["build", "--dir", str(tmp_path), "--platforms", "all"]) == 2
    (line,) = capsys.readouterr().err.splitlines()
    assert line.startswith("mechfmu build: error: building the FMUs' Windows, macOS and AArch64 binaries needs zig")
    assert not list(tmp_path.glob("*.fmu"))


def oscillator_study():
    return Study("scenarios/oscillator", {"v": "final(mass.v)"}, grid={"mass.m": [1.0]}, fixed={"stop": 0.01},
                 local=True)


def test_studies_without_dask_or_pyarrow_name_the_extra_before_any_run(monkeypatch, tmp_path, capsys):
    without(monkeypatch, "dask", "pyarrow")
    with pytest.raises(MissingExtra, match=r'Dask workers .* dask, .* pip install -e "[^"]+\[studies\]"'):
        run_study(oscillator_study(), tmp_path / "t.csv", workers=2)
    with pytest.raises(MissingExtra, match=r"Parquet table .* pyarrow"):
        run_study(oscillator_study(), tmp_path / "t.parquet", workers=0)
    assert not list(tmp_path.iterdir())  # refused before anything was written
    assert run_study(oscillator_study(), tmp_path / "t.csv", workers=0)["computed"] == 1  # the core runs studies
    assert main(["sweep", "scenarios/oscillator", "--grid", "mass.m=1,2", "--metric", "v=final(mass.v)",
                 "--out", str(tmp_path / "u.csv"), "--local", "--stop", "0.01"]) == 2
    assert re.search(r'pip install -e "[^"]+\[studies\]"', capsys.readouterr().err)  # in a checkout: from it


@pytest.mark.slow
def test_a_prebuilt_fmu_is_copied_not_compiled(monkeypatch, tmp_path, capsys):
    """An FMU in the package's prebuilt folder that is current and what the wheel's build wrote (its index) is
    copied to the FMU folder byte for byte; a stale one (other sources) is built instead; a damaged one is named and
    built anew, or, with no compiler, refused in one line that names it (not the compiler's output)."""
    prebuilt, user = tmp_path / "prebuilt", tmp_path / "user"
    written = build.build(["Mass", "Fixed"], directory=prebuilt)
    integrity.write_index(prebuilt, written)
    monkeypatch.setattr(prebuilt_module, "PREBUILT_DIR", prebuilt)
    assert build.build(["Mass"], directory=user) == []  # nothing built
    assert (user / "Mass.fmu").read_bytes() == (prebuilt / "Mass.fmu").read_bytes()
    good = (prebuilt / "Mass.fmu").read_bytes()
    (prebuilt / "Mass.fmu").write_bytes(good[:len(good) // 3])  # truncated: what an interrupted copy leaves
    (user / "Mass.fmu").unlink()
    monkeypatch.setenv("CC", "/bin/false")
    with pytest.raises(integrity.DamagedBinary) as refused:
        build.build(["Mass"], directory=user)
    message = str(refused.value)
    assert "\n" not in message and "Traceback" not in message, message
    assert message.startswith(f"{prebuilt / 'Mass.fmu'}: damaged: {len(good) // 3} bytes where {len(good)} were "
                              "built (truncated); building it anew failed (")
    assert capsys.readouterr().err.startswith(f"mechfmu: warning: {prebuilt / 'Mass.fmu'}: damaged: ")
    assert not (user / "Mass.fmu").exists()
    monkeypatch.delenv("CC")
    assert build.build(["Mass"], directory=user) == [user / "Mass.fmu"]  # with a compiler: built anew
    assert build.is_current(user / "Mass.fmu")
    with zipfile.ZipFile(prebuilt / "Fixed.fmu") as zf, zipfile.ZipFile(tmp_path / "stale.fmu", "w") as out:
        for item in zf.infolist():
            data = zf.read(item)
            out.writestr(item, b"mechfmu_native_0000000000\n" if item.filename == build.NATIVE_STAMP else data)
    (tmp_path / "stale.fmu").replace(prebuilt / "Fixed.fmu")
    integrity.write_index(prebuilt, written)
    monkeypatch.undo()
    assert build.build(["Fixed"], directory=user) == [user / "Fixed.fmu"]
    assert build.is_current(user / "Fixed.fmu", platforms=[native.HOST_PLATFORM])


def test_a_prebuilt_library_is_found_for_this_machine(monkeypatch, tmp_path):
    folder = prebuilt_module.this_platform()
    assert folder == native.HOST_PLATFORM  # the machine the tests run on
    library = tmp_path / "native" / folder / "mechfmu_exchange_0123456789.so"
    library.parent.mkdir(parents=True)
    library.write_bytes(b"")
    assert prebuilt_module.prebuilt_library(library.name, tmp_path) == library
    assert prebuilt_module.prebuilt_library("mechfmu_exchange_other.so", tmp_path) is None


@pytest.mark.parametrize("algorithm, method, imports_scipy", [("jacobi", "Radau", False), ("monolithic", "Radau", False),
                                                             ("monolithic", "BDF", True)])
def test_a_run_imports_scipy_only_when_its_master_integrates_with_it(fmus, algorithm, method, imports_scipy):
    """scipy's packages (a third of a second to import) come with the monolithic master's BDF and LSODA only: not
    with the command line, the scenario, a co-simulation master or Radau (scipy's kernels, loaded alone)."""
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    args = ["run", "scenarios/oscillator", "--algorithm", algorithm, "--stop", "0.01"]
    args += ["--option", f"method={method}"] if algorithm == "monolithic" else []
    script = f"import sys; from mechfmu.cli import main; code = main({args!r}); print('scipy' in sys.modules, code)"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=root, timeout=300)
    assert done.stdout.splitlines()[-1] == f"{imports_scipy} 0", done.stdout + done.stderr
