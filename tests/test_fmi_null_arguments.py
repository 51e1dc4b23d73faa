"""Every FMI 2.0 function called as a careless or hostile host would (tests/fmi2_null_host.c): a NULL or freed
component, NULL arrays with n > 0, counts beyond any array (up to an overflow of n * 8), value references out of
range, NULL strings and pointers, FMU states that were never handed out, freed or cut, calls in the wrong state or of
the other interface. Each returns fmi2Error (or, where FMI says so, is ignored) and nothing crashes: the FMU binary
and the host built with AddressSanitizer and UBSan (any report aborts), and the shipped binary under valgrind."""
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest
from conftest import HEADERS, HERE, unavailable
from fmpy import read_model_description

from mechfmu.fmu import native_tables
from mechfmu.fmu.native import NATIVE_SOURCES, SOURCES_DIR

SANITIZERS = ["-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all", "-fno-omit-frame-pointer"]


def unpacked(fmu: Path, folder: Path) -> tuple[str, str, str]:
    """The FMU unpacked in ``folder``: its resources URI, GUID and the value reference of Mass's ``m``."""
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(folder)
    md = read_model_description(str(folder))
    return ((folder / "resources").as_uri(), md.guid,
            str(next(v.valueReference for v in md.modelVariables if v.name == "m")))


def compiler() -> str:
    clang = shutil.which("clang")
    if not clang:
        unavailable("clang is needed to build the FMU with AddressSanitizer (apt-get install clang; .ci/run "
                    "installs it)")
    return clang


def run(command: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(command, capture_output=True, text=True, timeout=600, **kw)


def test_the_host_calls_every_fmi_function():
    declared = set(re.findall(r"FMI2_Export\s+fmi2\w+TYPE\s+(fmi2\w+);", (HEADERS / "fmi2Functions.h").read_text()))
    called = {f"fmi2{name}" for name in re.findall(r"LOAD\(([A-Z]\w+)\)", (HERE / "fmi2_null_host.c").read_text())}
    assert len(declared) > 40 and declared == called, declared ^ called


@pytest.mark.slow
def test_every_fmi_function_refuses_null_and_out_of_range_arguments(fmus, tmp_path):
    clang = compiler()
    generated = native_tables.write(tmp_path)
    library = tmp_path / "Mass.so"  # the loader finds its class by the binary's name
    sources = [p for p in NATIVE_SOURCES if p.suffix == ".c"] + generated + native_tables.law_sources()
    run_ok = run([clang, *SANITIZERS, "-shared", "-fPIC", "-ffp-contract=off", "-DMECHFMU_NATIVE", f"-I{SOURCES_DIR}",
                  f"-I{tmp_path}", f"-I{native_tables.NATIVE_DIR}", f"-I{HEADERS}", "-o", str(library),
                  *map(str, sources), "-lm", "-lpthread"])
    assert run_ok.returncode == 0, run_ok.stderr[-3000:]
    host = tmp_path / "fmi2_null_host"
    built = run([clang, *SANITIZERS, f"-I{HEADERS}", "-o", str(host), str(HERE / "fmi2_null_host.c"), "-ldl"])
    assert built.returncode == 0, built.stderr[-3000:]
    uri, guid, mass = unpacked(fmus["Mass"], tmp_path / "Mass")
    proc = run([str(host), str(library), uri, guid, mass],
               env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="print_stacktrace=1"))
    reports = re.findall(r"==\d+==ERROR.*|runtime error:.*|SUMMARY: .*", proc.stderr)
    violations = [line for line in proc.stdout.splitlines() if line.startswith("violation:")]
    found = "\n".join(reports + violations) + proc.stderr[-3000:]
    assert not reports and not violations and proc.returncode == 0, found
    calls = [line for line in proc.stdout.splitlines() if " => " in line]
    assert len(calls) > 120 and proc.stdout.rstrip().endswith("violations 0"), proc.stdout[-2000:]


@pytest.mark.slow
def test_the_shipped_binary_takes_the_same_calls_under_valgrind(fmus, tmp_path):
    if not shutil.which("valgrind"):
        unavailable("valgrind is needed (apt-get install valgrind; .ci/run installs it)")
    host = tmp_path / "fmi2_null_host"
    cc = shutil.which("cc") or compiler()
    subprocess.run([cc, "-O1", "-g", f"-I{HEADERS}", "-o", str(host), str(HERE / "fmi2_null_host.c"), "-ldl"],
                   check=True)
    uri, guid, mass = unpacked(fmus["Mass"], tmp_path / "Mass")
    log = tmp_path / "valgrind.txt"
    proc = run(["valgrind", "--error-exitcode=99", "--leak-check=full", "--errors-for-leak-kinds=definite",
                f"--log-file={log}", str(host), str(tmp_path / "Mass/binaries/linux64/Mass.so"), uri, guid, mass])
    assert proc.returncode == 0, proc.stdout[-2000:] + log.read_text()[-4000:]
    assert proc.stdout.rstrip().endswith("violations 0")
