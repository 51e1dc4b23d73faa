"""The native runtime shares nothing between instances (FMI lets a host use different instances from different
threads): a C host (tests/fmi2_load_thread_host.c) loads Table instances, each with its own file (names with '.'
and '..' parts, which the path resolution splits), Tables from their table text, and instances of other
components, from four threads at once; every reading must equal the expected one bit for bit (a Table's: linear
interpolation in its rows, computed here; another component's: the same FMU run alone in fmpy). The runtime runs
as shipped (20,000 loads) and built with ThreadSanitizer (which reports any data race, e.g. strtok's one position
for the process); and with the host's locale German (decimal comma), which must not change how numbers are read."""
import os
import shutil
import struct
import subprocess
import sys
import zipfile
from pathlib import Path
from unittest import mock

import pytest
from conftest import interpolated as interpolated_at
from conftest import missing_system_package
from fmpy import read_model_description
from fmpy.fmi2 import FMU2Slave

from mechfmu.fmu.native import compile_binary

HERE = Path(__file__).resolve().parent
STEPS, H = 8, 0.125
#: each Table job's file: rows (t, y) with values no locale-dependent reading could get right by chance
FILES = {f"data{i}.csv": [(0.0, 0.5 + i), (0.25, -1.75 * (i + 1)), (0.625, 2.0625 + i / 8), (1.0, 0.0)]
         for i in range(4)}
#: how each job names its file: through folders it climbs out of again (some that do not exist, which the path
#: resolution takes apart by itself, as os.path.realpath does), '.' and doubled separators
NAMES = ["none0/../data0.csv", "./sub1/none1/./../../data1.csv", "sub2/./none2/none3/../..//../data2.csv",
         "none3/../sub2/.././data3.csv"]
TEXT_ROWS = [(0.0, 0.375), (0.5, -1.5), (0.75, 3.25), (1.0, 0.125)]  # a Table from its table text
OTHERS = {"Sine": ("y", {"amplitude": 10.0, "f": 0.5, "phase": 0.3, "offset": -1.5}),
          "CoordinateSpringDamper": ("f", {"stiffness": 5000.0, "damping": 80.0, "offset": 0.1,
                                           "springForceUserFunction": "0.1*k*u + 2.5*sin(t) + 0.5"}),
          # its hybrid motion integrated within each step: sliding, locking
          # a friction element sliding (its inputs set before initialization) on its table text; its first step
          # warns, per instance, that its locked force is not driven
          "Clutch": ("tau", {"mu_pos": "0, 0.5; 1, 0.4; 10, 0.25", "peak": 1.2, "cgeo": 0.8, "fn_max": 250.0,
                             "flange_b.w": 2.5, "flange_a.w": -0.25, "f_normalized": 0.7}),
          "MassWithStopAndFriction": ("s", {"m": 1.0, "L": 0.2, "s_start": 0.1, "v_start": 2.0, "smax": 0.9,
                                            "smin": -0.5, "F_prop": 1.0, "F_Coulomb": 5.0, "F_Stribeck": 10.0,
                                            "fexp": 2.0})}


def interpolated(rows: list[tuple[float, float]]) -> list[float]:
    """The Table's expected outputs at this module's steps (conftest.interpolated)."""
    return interpolated_at(rows, STEPS, H)


def fmpy_alone(unzipped: Path, md, output: str, parameters: dict) -> list[float]:
    """The output of the FMU run alone in fmpy (this process, one thread) at t = 0, H, ..., STEPS H."""
    variables = {v.name: v for v in md.modelVariables}
    fmu = FMU2Slave(guid=md.guid, unzipDirectory=str(unzipped), modelIdentifier=md.coSimulation.modelIdentifier,
                    instanceName="alone")
    fmu.instantiate()
    for name, value in parameters.items():
        setter = {str: fmu.setString, bool: fmu.setBoolean, int: fmu.setInteger}.get(type(value), fmu.setReal)
        setter([variables[name].valueReference], [value])
    fmu.setupExperiment(startTime=0.0)
    fmu.enterInitializationMode()
    fmu.exitInitializationMode()
    vr = [variables[output].valueReference]
    ys = fmu.getReal(vr)
    for k in range(STEPS):
        fmu.doStep(k * H, H)
        ys += fmu.getReal(vr)
    fmu.terminate()
    fmu.freeInstance()
    return ys


def plan_lines(job: tuple, parameters: dict, expected: list[float]) -> list[str]:
    binary, unzipped, md, output = job
    variables = {v.name: v for v in md.modelVariables}
    lines = ["\t".join(["job", str(binary), (unzipped / "resources").as_uri(), md.guid,
                        str(variables[output].valueReference)])]
    for name, value in parameters.items():
        kind = {str: "S", bool: "B", int: "I"}.get(type(value), "R")
        text = value if kind == "S" else str(int(value)) if kind in "BI" else float(value).hex()
        lines.append("\t".join(["set", kind, str(variables[name].valueReference), text]))
    lines.append("\t".join(["expect", *(y.hex() for y in expected)]))
    return lines


def unpacked(fmu: Path, folder: Path, binary: Path | None) -> tuple:
    """The FMU unzipped into ``folder``, with ``binary`` in place of its own if given: (binary, folder, model
    description)."""
    with zipfile.ZipFile(fmu) as archive:
        archive.extractall(folder)
    md = read_model_description(str(folder))
    own = folder / "binaries" / "linux64" / f"{md.coSimulation.modelIdentifier}.so"
    if binary is not None:
        shutil.copy(binary, own)
    return own, folder, md


def write_plan(fmus, work: Path, binary: Path | None, others: tuple[str, ...] = tuple(OTHERS)) -> Path:
    """The host's plan: four Table jobs with their own files, one from table text, and ``others``."""
    lines = [f"steps\t{STEPS}\t{H.hex()}"]
    table = unpacked(fmus["Table"], work / "Table", binary)
    resources = table[1] / "resources"
    for folder in ("sub1", "sub2"):
        (resources / folder).mkdir()
    for (file, rows), name in zip(FILES.items(), NAMES):
        (resources / file).write_text("time,y\n" + "".join(f"{t!r},{y!r}\n" for t, y in rows))
        lines += plan_lines((*table, "y"), {"tableOnFile": True, "fileName": name, "extrapolation": 1},
                            interpolated(rows))
    text = "; ".join(f"{t!r}, {y!r}" for t, y in TEXT_ROWS)
    lines += plan_lines((*table, "y"), {"table": text, "extrapolation": 1}, interpolated(TEXT_ROWS))
    for model in others:
        output, parameters = OTHERS[model]
        job = (*unpacked(fmus[model], work / model, binary), output)
        _, alone, md = unpacked(fmus[model], work / f"{model}_alone", None)  # the shipped binary, in fmpy
        lines += plan_lines(job, parameters, fmpy_alone(alone, md, output, parameters))
    plan = work / "plan.txt"
    plan.write_text("\n".join(lines) + "\n")
    return plan


def compile_host(target: Path, *flags: str, compiler: str = "cc") -> Path:
    import fmpy
    subprocess.run([compiler, "-O1", "-g", "-Wall", "-Wextra", "-Werror", f"-I{Path(fmpy.__file__).parent / 'c-code'}",
                    f"-I{HERE}", *flags, "-o", str(target), str(HERE / "fmi2_load_thread_host.c"), "-ldl",
                    "-lpthread"], check=True)
    return target


@pytest.fixture(scope="module")
def plain_host(tmp_path_factory):
    return compile_host(tmp_path_factory.mktemp("load_thread_host") / "host")


@pytest.fixture(scope="module", params=["thread", "address"])
def sanitized(request, tmp_path_factory):
    """(sanitizer, host, runtime binary) built with clang's ThreadSanitizer or AddressSanitizer: the runtime
    through the project's own build, with the sanitizer added to its compiler."""
    clang = shutil.which("clang")
    assert clang, "this test needs clang with its sanitizers (apt-get install clang; .ci/run installs it)"
    folder = tmp_path_factory.mktemp(request.param)
    wrapper = folder / "clang-sanitized"
    wrapper.write_text(f'#!/bin/sh\nexec {clang} -fsanitize={request.param} -g -fno-omit-frame-pointer "$@"\n')
    wrapper.chmod(0o755)
    binary = folder / "runtime.so"
    with mock.patch.dict(os.environ, {"CC": str(wrapper)}):
        compile_binary(binary, None)
    return request.param, compile_host(folder / "host", f"-fsanitize={request.param}", compiler=clang), binary


def run_host(host: Path, plan: Path, threads: int, loads: int, *locale: str,
             environment: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(host), str(plan), str(threads), str(loads), *locale], capture_output=True, text=True,
                          timeout=600, env={"TSAN_OPTIONS": "halt_on_error=1 exitcode=66", "ASAN_OPTIONS": "detect_leaks=1",
                                            **(environment or {})})


@pytest.mark.slow
def test_loads_on_four_threads_under_a_sanitizer_report_nothing(fmus, sanitized, tmp_path):
    """ThreadSanitizer sees every access of the runtime's own code to shared memory (not the C library's inside,
    e.g. strtok's position: the shipped binary's loads below show that one), AddressSanitizer every access
    outside a live allocation (strtok's position into another thread's freed path): 4 threads x 250 loads of
    Tables with their own files, a Table from text, a sine and a spring-damper with a user function, nothing
    reported, every value right."""
    sanitizer, host, binary = sanitized
    proc = run_host(host, write_plan(fmus, tmp_path, binary), 4, 250)
    assert "Sanitizer" not in proc.stderr, proc.stderr[-6000:]
    assert proc.returncode == 0 and "loads 1000 failures 0" in proc.stdout, proc.stdout + proc.stderr[-3000:]


@pytest.mark.slow
def test_twenty_thousand_loads_on_four_threads_of_the_shipped_binary_all_right(fmus, plain_host, tmp_path):
    """The shipped binary (strtok in the path resolution failed 27 of 20,000 such loads)."""
    proc = run_host(plain_host, write_plan(fmus, tmp_path, None), 4, 5000)
    assert proc.returncode == 0 and "loads 20000 failures 0" in proc.stdout, proc.stdout + proc.stderr


@pytest.fixture(scope="module")
def german(tmp_path_factory) -> tuple[str, dict]:
    """A German locale (decimal comma): (its name, the environment that finds it): the system's if it has one,
    else compiled from the system's locale sources (localedef) into a folder of the test's."""
    probe = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split() if shutil.which(
        "locale") else []
    for name in ("de_DE.UTF-8", "de_DE.utf8"):
        if name in probe:
            return name, {}
    folder = tmp_path_factory.mktemp("locales")
    if shutil.which("localedef"):
        made = subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(folder / "de_DE.UTF-8")],
                              capture_output=True, text=True)
        if (folder / "de_DE.UTF-8" / "LC_NUMERIC").exists():
            return "de_DE.UTF-8", {"LOCPATH": str(folder)}
        reason = made.stderr.strip()
    else:
        reason = "no localedef"
    missing_system_package("locales", f"no German locale on this machine and none can be made ({reason})")
    raise AssertionError("unreachable")  # missing_system_package skips or fails


@pytest.mark.parametrize("how", ["setlocale", "uselocale"])
def test_a_host_with_a_german_locale_reads_every_number_as_written(fmus, plain_host, german, how, tmp_path):
    """setlocale(LC_ALL, "de_DE.UTF-8") in the host before its threads start (as a Modelica tool may run), or
    each thread's own locale (uselocale): the Tables' decimal numbers read with their point (strtod of the
    locale read "0.5" as 0)."""
    name, environment = german
    plan = write_plan(fmus, tmp_path, None, others=("Sine",))
    proc = run_host(plain_host, plan, 2, 24, name, *(["uselocale"] if how == "uselocale" else []),
                    environment=environment)
    assert proc.returncode == 0 and "loads 48 failures 0" in proc.stdout, proc.stdout + proc.stderr


def test_a_user_function_in_a_host_with_a_german_locale_reads_its_literals(fmus, plain_host, german, tmp_path):
    name, environment = german
    plan = write_plan(fmus, tmp_path, None, others=("CoordinateSpringDamper",))
    proc = run_host(plain_host, plan, 2, 12, name, environment=environment)
    assert proc.returncode == 0 and "loads 24 failures 0" in proc.stdout, proc.stdout + proc.stderr


READER = r"""
#include <locale.h>
#include <stdint.h>
#include "numbers.h"
int main(int argc, char **argv) {  /* each line of stdin: the bytes taken and the value (hex), or "none" */
    if (argc > 1 && !setlocale(LC_ALL, argv[1])) return 3;
    char line[4096];
    while (fgets(line, sizeof line, stdin)) {
        line[strcspn(line, "\n")] = '\0';
        double value = 0.0;
        size_t taken = native_parse_decimal(line, strlen(line), &value);
        uint64_t bits;  /* the bits: printf's %a writes the locale's decimal point too */
        memcpy(&bits, &value, sizeof bits);
        if (taken) printf("%zu %016llx\n", taken, (unsigned long long)bits);
        else printf("none\n");
    }
    return 0;
}
"""


def decimal_corpus(count: int, seed: int = 5) -> list[str]:
    """Decimal texts of the C grammar: short and long mantissas (up to 900 digits, past the 767 of the longest
    halfway case between doubles), halfway cases of doubles written out exactly, subnormals, overflow, points
    anywhere, exponents up to 12 digits."""
    import math
    import random
    from decimal import Decimal, localcontext
    rng = random.Random(seed)
    texts = ["0.5", "-0.0", ".5", "5.", "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "4.9e-324",
             "2.4703282292062327e-324", "2.4703282292062328e-324", "1e-400", "1e400", "0e999999999999", "inf",
             "-Infinity", "nan", "123456789012345678901234567890"]
    for _ in range(count):
        kind = rng.randrange(4)
        if kind == 0:  # the point halfway between two neighbouring doubles, written out exactly (Decimal: exact)
            x = rng.uniform(0.5, 1.0) * 2.0 ** rng.randrange(-1074, 1023)
            with localcontext() as context:
                context.prec = 2000
                texts.append(str((Decimal(x) + Decimal(math.nextafter(x, math.inf))) / 2))
        elif kind == 1:  # a long mantissa with the point anywhere
            digits = "".join(rng.choice("0123456789") for _ in range(rng.randrange(1, 900)))
            at = rng.randrange(len(digits) + 1)
            texts.append(f"{digits[:at]}.{digits[at:]}e{rng.randrange(-400, 400)}")
        else:
            texts.append(repr(rng.uniform(-1, 1) * 10.0 ** rng.randrange(-330, 300)))
    return texts


def test_numbers_are_read_correctly_rounded_whatever_the_locale(german, tmp_path):
    """components/native/numbers.h's reader, in a process whose locale is German (decimal comma), against Python's
    float() (correctly rounded) on a generated corpus: every text taken whole, every value the same bits."""
    name, environment = german
    source = tmp_path / "reader.c"
    source.write_text(READER)
    program = tmp_path / "reader"
    subprocess.run(["cc", "-O2", "-Wall", "-Wextra", "-Werror", f"-I{HERE.parent / 'components' / 'native'}", "-o",
                    str(program), str(source), "-lm"], check=True)
    texts = decimal_corpus(3000)
    proc = subprocess.run([str(program), name], input="\n".join(texts) + "\n", capture_output=True, text=True,
                          env=environment, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    answers = proc.stdout.splitlines()
    assert len(answers) == len(texts)
    for text, answer in zip(texts, answers):
        taken, bits = answer.split()
        value, expected = struct.unpack("<d", int(bits, 16).to_bytes(8, "little"))[0], float(text)
        assert int(taken) == len(text), text
        assert struct.pack("<d", value) == struct.pack("<d", expected) or (value != value and expected != expected), \
            (text, value.hex(), expected.hex())


def test_a_message_in_a_host_with_a_german_locale_writes_its_numbers_with_a_point(fmus, plain_host, german, tmp_path):
    name, environment = german
    table = unpacked(fmus["Table"], tmp_path / "Table", None)
    plan = tmp_path / "plan.txt"
    lines = [f"steps\t{STEPS}\t{H.hex()}", *plan_lines((*table, "y"), {"table": "0, 0; 0.25, 1; 0.125, 2"},
                                                     [0.0] * (STEPS + 1))]
    plan.write_text("\n".join(lines) + "\n")
    proc = run_host(plain_host, plan, 1, 1, name, environment=environment)
    assert "time is not monotonic: row 3 has t = 0.125 after t = 0.25" in proc.stdout, proc.stdout


SETUP_IN_A_GERMAN_HOST = """
import locale, sys
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Slave, fmi2CallbackFunctions, fmi2CallbackLoggerTYPE, fmi2CallbackAllocateMemoryTYPE, \\
    fmi2CallbackFreeMemoryTYPE, calloc, free
locale.setlocale(locale.LC_ALL, sys.argv[2])
md = read_model_description(sys.argv[1])
logged = []
callbacks = fmi2CallbackFunctions()
callbacks.logger = fmi2CallbackLoggerTYPE(lambda env, name, status, category, message: logged.append(message.decode()))
callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(calloc)
callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(free)
fmu = FMU2Slave(guid=md.guid, unzipDirectory=extract(sys.argv[1]), modelIdentifier=md.coSimulation.modelIdentifier)
fmu.instantiate(callbacks=callbacks)
try:
    fmu.setupExperiment(startTime=1.5, stopTime=0.25)
except FMICallException as error:
    assert error.status == 3, error  # fmi2Error
    print(logged[-1])
"""


def test_a_refused_setup_in_a_host_with_a_german_locale_writes_its_times_with_a_point(fmus, german, tmp_path):
    """The FMI layer's own messages (fmi2SetupExperiment's times) are written with '.', whatever the host's locale
    (printf's %g wrote the German "0,25")."""
    name, environment = german
    script = tmp_path / "setup.py"
    script.write_text(SETUP_IN_A_GERMAN_HOST)
    proc = subprocess.run([sys.executable, str(script), str(fmus["Mass"]), name], capture_output=True, text=True,
                          env={**os.environ, **environment}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "stopTime = 0.25 s is before startTime = 1.5 s" in proc.stdout, proc.stdout
