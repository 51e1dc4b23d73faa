"""A real install: a wheel built by ``pip wheel .``, installed (not editable) into a fresh virtual environment,
then, from another folder, every command works and the README's Python example runs: the wheel holds every package
of the source tree under ``mechfmu`` and nothing else, and every FMU and the master's libraries built for every
platform, so that its user compiles nothing (the FMUs are copied into the user's cache, nothing is written into
site-packages); building anew still works. Every prebuilt file is in the wheel's index with its size and SHA-256,
every Linux binary loads on glibc 2.17, and a damaged prebuilt file is named and never loaded (an FMU refused in one
line where no compiler can build it anew, the exchange left to Python)."""
import hashlib
import io
import json
import os
import shutil
import site
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mechfmu.components import COMPONENTS
from mechfmu.fmu.native import PLATFORMS
from test_platform_binaries import glibc_needed

pytestmark = pytest.mark.slow  # a pip install and every FMU built
ROOT = Path(__file__).resolve().parent.parent


def dependency_folders() -> list[str]:
    """The folders this interpreter imports installed packages from (its environment's site-packages, the
    user's if enabled), where the dependencies (pythonfmu, fmpy, numpy, ...) are."""
    folders = site.getsitepackages() + ([site.getusersitepackages()] if site.ENABLE_USER_SITE else [])
    return [folder for folder in dict.fromkeys(folders) if Path(folder).is_dir()]


def test_installed_package_works_from_elsewhere(tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python, mechfmu = venv / "bin" / "python", venv / "bin" / "mechfmu"
    # the dependencies come from the environment running the tests (a .pth adds its folders after the venv's
    # own; .pth files in them, e.g. an editable install's, are not processed); mechfmu itself is installed
    # into the venv, whose site-packages comes first
    purelib = subprocess.run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    (Path(purelib) / "test_dependencies.pth").write_text("".join(f"{folder}\n" for folder in dependency_folders()))
    wheels = tmp_path / "wheels"
    # zig builds every binary of the wheel (its Linux x86-64 ones too): minutes on a busy machine
    proc = subprocess.run([python, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(wheels), str(ROOT)],
                          capture_output=True, text=True, timeout=1800)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    wheel = next(wheels.glob("mechfmu-*.whl"))
    with zipfile.ZipFile(wheel) as zf:
        packaged = {str(Path(n).parent) for n in zf.namelist() if n.endswith("/__init__.py")}
    expected = {str(p.parent.relative_to(ROOT)) for p in (ROOT / "mechfmu").rglob("__init__.py")}
    expected.add("mechfmu/components")
    assert packaged == expected, (sorted(expected - packaged), sorted(packaged - expected))
    with zipfile.ZipFile(wheel) as zf:  # the C sources a build compiles: the loader, both runtimes, the laws
        c_sources = {n for n in zf.namelist() if n.endswith((".c", ".h"))}
    needed = {f"mechfmu/fmu/{p.name}" for p in (ROOT / "mechfmu" / "fmu").glob("fmi2_*.[ch]")}
    needed |= {f"mechfmu/components/native/{p.name}" for p in (ROOT / "components" / "native").glob("*.[ch]")}
    needed.add("mechfmu/master/exchange.c")  # the master's compiled exchange
    assert needed <= c_sources, sorted(needed - c_sources)
    with zipfile.ZipFile(wheel) as zf:  # every FMU and the master's libraries built for every platform
        names = set(zf.namelist())
        for model in COMPONENTS:
            with zf.open(f"mechfmu/prebuilt/{model}.fmu") as fmu, zipfile.ZipFile(fmu) as inner:
                assert {n.split("/")[1] for n in inner.namelist() if n.startswith("binaries/")} == set(PLATFORMS)
    for folder, spec in PLATFORMS.items():
        for library in ("exchange", "components"):
            assert any(n.startswith(f"mechfmu/prebuilt/native/{folder}/mechfmu_{library}_") and n.endswith(
                spec.extension) for n in names), (folder, library)
    with zipfile.ZipFile(wheel) as zf:  # the index of the prebuilt files: each one's size and SHA-256
        index = json.loads(zf.read("mechfmu/prebuilt/manifest.json"))["files"]
        prebuilt = {n.removeprefix("mechfmu/prebuilt/"): zf.read(n) for n in names
                    if n.startswith("mechfmu/prebuilt/") and n != "mechfmu/prebuilt/manifest.json"}
    assert index == {name: {"size": len(data), "sha256": hashlib.sha256(data).hexdigest()}
                     for name, data in prebuilt.items()}
    # every Linux binary it carries (the FMUs', the exchange, the host library) loads on glibc 2.17 (manylinux2014)
    linux = {name: data for name, data in prebuilt.items() if name.startswith(("native/linux64/",
                                                                               "native/aarch64-linux/"))}
    for model in COMPONENTS:
        with zipfile.ZipFile(io.BytesIO(prebuilt[f"{model}.fmu"])) as inner:
            linux |= {f"{model}.fmu/{n}": inner.read(n) for n in inner.namelist()
                      if n.startswith(("binaries/linux64/", "binaries/aarch64-linux/"))}
    assert len(linux) == 2 * len(COMPONENTS) + 4
    needed = {name: glibc_needed(data) for name, data in linux.items()}
    assert all(version <= (2, 17) for version in needed.values()), {n: v for n, v in needed.items() if v > (2, 17)}
    # a wheel for any platform: where its binaries do not load (musl, an older glibc, another processor) mechfmu
    # builds for the machine from the sources it carries, as an editable install does
    assert wheel.name.endswith("-py3-none-any.whl")
    proc = subprocess.run([python, "-m", "pip", "install", "--no-deps", "-q", str(wheel)], capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert not (Path(purelib) / "validation").exists()  # no generic top-level name beside mechfmu
    work = tmp_path / "elsewhere"
    shutil.copytree(ROOT / "scenarios" / "oscillator", work / "oscillator")
    env = {k: v for k, v in os.environ.items() if k != "MECHFMU_FMU_DIR"}
    env["XDG_CACHE_HOME"] = str(tmp_path / "cache")
    # zig's own cache (its C libraries for each target, built once a machine) stays where it is
    env.setdefault("ZIG_GLOBAL_CACHE_DIR", str(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "zig"))

    def run(*argv):
        result = subprocess.run([mechfmu, *argv], capture_output=True, text=True, cwd=work, env=env, timeout=600)
        assert result.returncode == 0, (argv, result.stdout + result.stderr)
        return result.stdout

    locate = "import mechfmu, mechfmu.components as c; print(mechfmu.__file__, c.__file__)"
    where = subprocess.run([python, "-c", locate], capture_output=True, text=True, cwd=work, env=env).stdout
    assert str(venv) in where and str(ROOT) not in where, where  # the installed copy, not the checkout
    assert "mechfmu 0.1.0" in run("--version")
    # a user of the wheel compiles nothing: with no C compiler at hand, the FMUs are the wheel's, copied to the
    # cache, and the master's libraries are loaded from the package
    compiler = env.pop("CC", None)
    env["CC"] = "/bin/false"
    assert "are current" in run("build")
    fmus = tmp_path / "cache" / "mechfmu" / "fmus"
    assert (fmus / "Mass.fmu").read_bytes() == (Path(purelib) / "mechfmu" / "prebuilt" / "Mass.fmu").read_bytes()
    assert "oscillator (FMUs, jacobi): ok" in run("run", "oscillator", "--stop", "0.01", "--out", "r.csv")
    assert (work / "r.csv").is_file()
    loaded = subprocess.run([python, "-c", "from mechfmu.master.exchange import library; print(library()._name)"],
                            capture_output=True, text=True, cwd=work, env=env).stdout
    assert f"{purelib}/mechfmu/prebuilt/native/linux64/mechfmu_exchange_" in loaded, loaded  # FMI calls through C
    # in-process: the native laws from the wheel's host library, the same results
    assert "oscillator (in-process, jacobi): ok" in run("run", "oscillator", "--stop", "0.01", "--local",
                                                        "--out", "local.csv")
    assert (work / "local.csv").read_bytes() == (work / "r.csv").read_bytes()
    assert not (fmus / ".native").exists()  # nothing compiled
    # a damaged prebuilt file is named, never loaded: an FMU (no compiler to build it anew) refused in one line,
    # the exchange library left to Python (the same results)
    wheel_fmu = Path(purelib) / "mechfmu" / "prebuilt" / "Mass.fmu"
    wheel_exchange = Path(loaded.strip())
    saved = {path: path.read_bytes() for path in (wheel_fmu, wheel_exchange)}
    try:
        wheel_fmu.write_bytes(saved[wheel_fmu][:len(saved[wheel_fmu]) // 2])
        (fmus / "Mass.fmu").unlink()
        failed = subprocess.run([mechfmu, "run", "oscillator", "--stop", "0.01"], capture_output=True, text=True,
                                cwd=work, env=env, timeout=600)
        assert failed.returncode == 2 and "Traceback" not in failed.stderr, failed.stderr
        assert failed.stderr.splitlines()[-1].startswith(
            f"mechfmu run: error: {wheel_fmu}: damaged: {len(saved[wheel_fmu]) // 2} bytes where "
            f"{len(saved[wheel_fmu])} were built (truncated); building it anew failed ("), failed.stderr
        wheel_fmu.write_bytes(saved[wheel_fmu])
        cut = len(saved[wheel_exchange]) // 2
        wheel_exchange.write_bytes(saved[wheel_exchange][:cut])
        python_path = subprocess.run([mechfmu, "run", "oscillator", "--stop", "0.01", "--out", "p.csv"],
                                     capture_output=True, text=True, cwd=work, env=env, timeout=600)
        assert python_path.returncode == 0, python_path.stderr  # before: SIGBUS
        assert f"mechfmu: warning: {wheel_exchange}: damaged: {cut} bytes where {len(saved[wheel_exchange])}" \
            in python_path.stderr and "the FMI calls go through Python" in python_path.stderr
        assert (work / "p.csv").read_bytes() == (work / "r.csv").read_bytes()
    finally:
        for path, data in saved.items():
            path.write_bytes(data)
    env.pop("CC")
    if compiler is not None:
        env["CC"] = compiler
    assert "are current" in run("build", "--dir", str(tmp_path / "copied"))  # the wheel's, copied
    assert "built" in run("build", "--force", "--platforms", "host", "--dir", str(tmp_path / "native"))  # compiled
    with zipfile.ZipFile(tmp_path / "native" / "Mass.fmu") as zf:
        assert "resources/mechfmu_native.txt" in zf.namelist()
    validated = run("validate").splitlines()
    assert len(validated) == len(COMPONENTS) and all(line.endswith(": no problems") for line in validated), validated
    assert "m = 1 kg" in run("info", "Mass")
    run("export-ssp", "oscillator", "-o", "oscillator.ssp")
    assert "ok" in run("run", "oscillator.ssp", "--stop", "0.01")
    assert not (Path(purelib) / "fmus").exists() and not (Path(purelib) / "components").exists()
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    example = readme.split("```python\n", 1)[1].split("```", 1)[0]
    example += "\nassert result.ok, result.summary()\nprint(result.summary())\n"
    proc = subprocess.run([python, "-c", example], capture_output=True, text=True, cwd=work, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert (work / "my_oscillator" / "SystemStructure.ssd").is_file()
    assert "ok" in run("run", "my_oscillator", "--stop", "0.01")
