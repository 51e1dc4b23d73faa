"""A run imports and builds what it needs: an archive that carries its FMUs runs without mechfmu's own FMUs, the
build or the components it does not use; fmpy's FMU classes type their functions once, as fmpy types them; the
``mechfmu`` program ends with its results whole and its exit code."""
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from mechfmu.master.fmpy_loading import typed_class
from mechfmu.ssp.archive import carries_its_fmus
from mechfmu.ssp.export import export_ssp

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def archive(fmus, tmp_path_factory):
    return export_ssp(ROOT / "scenarios" / "oscillator", tmp_path_factory.mktemp("archive") / "oscillator.ssp")


def rewritten(archive: Path, target: Path, change) -> Path:
    """A copy of ``archive`` with its SSD's text changed by ``change``."""
    with zipfile.ZipFile(archive) as source, zipfile.ZipFile(target, "w") as out:
        for info in source.infolist():
            data = source.read(info)
            out.writestr(info, change(data.decode()).encode() if info.filename == "SystemStructure.ssd" else data)
    return target


def test_an_archive_carries_its_fmus_only_when_every_source_is_inside_it(archive, tmp_path):
    assert carries_its_fmus(archive)
    assert not carries_its_fmus(ROOT / "scenarios" / "oscillator")  # a folder: its FMUs are mechfmu's
    outside = rewritten(archive, tmp_path / "outside.ssp",
                        lambda text: text.replace('source="resources/', 'source="../fmus/', 1))
    assert not carries_its_fmus(outside)
    missing = rewritten(archive, tmp_path / "missing.ssp",
                        lambda text: text.replace('source="resources/', 'source="resources/gone/', 1))
    assert not carries_its_fmus(missing)
    climbing = rewritten(archive, tmp_path / "climbing.ssp",
                         lambda text: text.replace('source="resources/', 'source="resources/../resources/', 1))
    assert not carries_its_fmus(climbing)
    (tmp_path / "text.ssp").write_text("not an archive")
    assert not carries_its_fmus(tmp_path / "text.ssp")


def test_an_archive_runs_without_building_or_importing_mechfmus_own(archive, tmp_path):
    """In an empty FMUs' folder: no FMU built there (the compiled exchange alone), neither the build nor pythonfmu
    imported (the modules loaded, written by an exit function, which the program runs before it ends), the same
    rows as a run beside mechfmu's built FMUs, and the program's exit code 0 with its result file whole."""
    probe = ("import runpy, sys\n"
             "sys.argv = ['mechfmu', 'run', sys.argv[1], '-o', sys.argv[2]]\n"
             "runpy.run_module('mechfmu.cli', run_name='__main__')\n")
    imports = tmp_path / "imports.txt"
    environment = {**os.environ, "MECHFMU_FMU_DIR": str(tmp_path / "fmus"), "MECHFMU_IMPORTS": str(imports)}
    hook = ("import atexit, os, sys\n"  # the modules loaded (a lazy one not yet: importlib's _LazyModule)
            "atexit.register(lambda: open(os.environ['MECHFMU_IMPORTS'], 'w').write('\\n'.join(\n"
            "    n for n, m in sys.modules.items() if type(m).__name__ != '_LazyModule')))\n")
    done = subprocess.run([sys.executable, "-c", hook + probe, str(archive), str(tmp_path / "rows.csv")],
                          capture_output=True, text=True, env=environment, timeout=300)
    assert done.returncode == 0, done.stderr
    assert not list((tmp_path / "fmus").glob("*.fmu"))
    loaded = set(imports.read_text().split())
    assert "mechfmu.fmu.build" not in loaded and "pythonfmu" not in loaded, sorted(loaded)
    reference = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(archive), "-o",
                                str(tmp_path / "reference.csv")], capture_output=True, text=True, timeout=300)
    assert reference.returncode == 0, reference.stderr
    assert (tmp_path / "rows.csv").read_bytes() == (tmp_path / "reference.csv").read_bytes()


def test_the_program_ends_with_its_exit_code_and_its_output_flushed(tmp_path):
    """``mechfmu`` (``python -m mechfmu.cli``) skips Python's teardown: what it printed and wrote is whole, and a
    refused run still exits 2."""
    done = subprocess.run([sys.executable, "-m", "mechfmu.cli", "algorithms"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0 and "monolithic" in done.stdout and done.stdout.endswith("\n")
    refused = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(tmp_path / "nowhere")],
                             capture_output=True, text=True, timeout=120)
    assert refused.returncode == 2 and "error" in refused.stderr


@pytest.mark.parametrize("version, model_exchange", [(2, False), (2, True)])
def test_functions_typed_once_are_typed_as_fmpy_types_them(fmus, version, model_exchange, tmp_path):
    """The second instance of a class takes its functions' types from the first; both as fmpy's own class types
    them, function by function."""
    import fmpy
    from fmpy import read_model_description
    folder = fmpy.extract(str(fmus["Mass"]), str(tmp_path / "mass"))
    description = read_model_description(folder)
    kind = getattr(__import__(f"fmpy.fmi{version}", fromlist=["x"]),
                   f"FMU{version}{'Model' if model_exchange else 'Slave'}")
    made = [cls(guid=description.guid, unzipDirectory=folder,
                modelIdentifier=description.coSimulation.modelIdentifier, instanceName=f"mass{i}")
            for i, cls in enumerate((kind, typed_class(version, model_exchange), typed_class(version, model_exchange)))]
    fmpys, *ours = [{name: (f.argtypes, f.restype) for name, f in m._functions.items()} for m in made]
    assert len(fmpys) > 30 and all(typed == fmpys for typed in ours)
    assert type(made[1]).__name__ == kind.__name__
