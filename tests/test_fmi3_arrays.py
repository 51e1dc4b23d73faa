"""The FMI 3.0 FMUs' array variables (mechfmu/fmu/fmi3_arrays.py, components/native/fmi3_functions.c): a RigidBody's and
the sphere contact's positions, velocities, quaternions, forces and torques as one variable each."""
from __future__ import annotations

import math
import os
import subprocess
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from conftest import HEADERS, HERE, compile_c_host
from fmpy import extract, read_model_description
from fmpy.fmi1 import FMICallException
from fmpy.fmi3 import FMU3Slave

from mechfmu.components import COMPONENTS
from mechfmu.fmu.fmi3_arrays import vector_lengths
from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import export_ssp, export_summary
from test_fmi3 import checked_host
from test_fmi_null_arguments import SANITIZERS, compiler

ARRAYS = {
    "RigidBody": {"centerOfMass": 3, "gravity": 3, "position_start": 3, "orientation_start": 4, "velocity_start": 3,
                  "angularVelocity_start": 3, "force_a": 3, "torque_a": 3, "force_b": 3, "torque_b": 3,
                  "position": 3, "orientation": 4, "velocity": 3, "angularVelocity": 3},
    "SmoothSphereHalfSpaceForce": {
        "sphereLocation": 3, "halfSpaceLocation": 3, "halfSpaceOrientation": 3, "sphere.position": 3,
        "sphere.orientation": 4, "sphere.velocity": 3, "sphere.angularVelocity": 3, "halfSpace.position": 3,
        "halfSpace.orientation": 4, "halfSpace.velocity": 3, "halfSpace.angularVelocity": 3, "sphere.force": 3,
        "sphere.torque": 3, "halfSpace.force": 3, "halfSpace.torque": 3, "contactPoint": 3},
}


def declared_arrays(path) -> dict[str, int]:
    with zipfile.ZipFile(path) as zf:
        root = ET.fromstring(zf.read("modelDescription.xml"))
    return {v.attrib["name"]: int(v.find("Dimension").attrib["start"])
            for v in root.find("ModelVariables") if v.find("Dimension") is not None}


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_the_vectors_of_a_body_and_of_the_contact_are_arrays_and_nothing_else_is(fmi3_fmus, model):
    """The 3-D quantities (and the quaternions, 4) of RigidBody and the sphere contact, each one variable; the other
    components' variables stay scalars."""
    assert declared_arrays(fmi3_fmus[model]) == ARRAYS.get(model, {})


def instantiated(path, model: str, name: str) -> tuple:
    """(model description, an instantiated FMU3Slave of it, the list its messages go to)."""
    md = read_model_description(str(path))
    fmu = FMU3Slave(guid=md.guid, unzipDirectory=extract(str(path)), modelIdentifier=model, instanceName=name)
    messages: list[str] = []
    fmu.instantiate(logMessage=lambda env, status, category, message: messages.append(message.decode()))
    return md, fmu, messages


@pytest.mark.parametrize("model", sorted(ARRAYS))
def test_the_binary_serves_exactly_the_arrays_the_description_declares(fmi3_fmus, model):
    """For every value reference: an array's whole elements with one call (nValues its length), a scalar alone, an
    element's own value reference refused naming the array's; a wrong nValues refused; set and read back whole."""
    md, fmu, messages = instantiated(fmi3_fmus[model], model, "arrays")
    try:
        declared = {v.valueReference: (math.prod(int(d.start) for d in v.dimensions) if v.dimensions else 1, v)
                    for v in md.modelVariables}
        reals = [r for r, (_, v) in declared.items() if v.type == "Float64"]
        for reference in range(max(declared) + 1):
            if reference in declared:
                length, variable = declared[reference]
                if variable.type == "Float64":
                    assert len(fmu.getFloat64([reference], length)) == length, variable.name
                continue
            owner = max(r for r in reals if r < reference)
            messages.clear()
            with pytest.raises(FMICallException):
                fmu.getFloat64([reference], 1)
            assert f"is an element of the array variable with valueReference {owner}" in messages[-1]
        position = next(v.valueReference for v in md.modelVariables if v.dimensions and v.causality == "parameter")
        messages.clear()
        with pytest.raises(FMICallException):
            fmu.getFloat64([position], 1)
        assert "1 values for the 1 value references in valueReferences, whose variables have 3 elements" in messages[-1]
        fmu.setFloat64([position], [0.25, -0.5, 0.75])
        assert fmu.getFloat64([position, position], 6) == [0.25, -0.5, 0.75] * 2
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("model", ["CoordinateSpringDamper", "SmoothSphereHalfSpaceForce", "MassWithStopAndFriction"])
def test_a_repeated_list_of_value_references_reads_and_writes_as_each_one_alone(fmi3_fmus, model):
    """fmi3GetFloat64 and fmi3SetFloat64 keep the last list of value references of each kind and take a repeated one as
    runs of consecutive elements. Lists in any order, with repeats, gaps, parameters, outputs and `time`, called twice
    (the second call takes the kept runs): the values each value reference gives alone; a set writes what each
    element alone would (a repeated element its last value), and a non-finite value is refused as it is alone."""
    rng = np.random.default_rng(7)
    md, fmu, messages = instantiated(fmi3_fmus[model], model, "runs")
    try:
        size = {v.valueReference: math.prod(int(d.start) for d in v.dimensions) if v.dimensions else 1
                for v in md.modelVariables if v.type == "Float64"}
        inputs = [v.valueReference for v in md.modelVariables if v.type == "Float64" and v.causality == "input"]
        fmu.enterInitializationMode()
        fmu.exitInitializationMode()
        time = 0.0
        for _ in range(40):
            chosen = list(rng.choice(inputs, size=int(rng.integers(1, 2 * len(inputs) + 1))))
            values = [float(x) for r in chosen for x in rng.uniform(-0.01, 0.01, size[r])]
            for _ in range(2):
                fmu.setFloat64(chosen, values)
            written = {}
            at = 0
            for r in chosen:
                written[r] = values[at:at + size[r]]
                at += size[r]
            assert all(fmu.getFloat64([r], size[r]) == w for r, w in written.items())
            fmu.doStep(time, 1e-4)
            time += 1e-4
            listed = list(rng.choice(sorted(size), size=int(rng.integers(1, 24))))
            alone = [x for r in listed for x in fmu.getFloat64([r], size[r])]
            for _ in range(2):
                assert fmu.getFloat64(listed, len(alone)) == alone
        array = max(inputs, key=lambda r: size[r])
        before = fmu.getFloat64([array], size[array])
        fmu.setFloat64([array], before)  # the list kept: the next set takes its runs
        bad = [0.125] * size[array]
        bad[-1] = math.nan
        messages.clear()
        with pytest.raises(FMICallException):
            fmu.setFloat64([array], bad)
        assert "failed" in messages[-1] and "finite" in messages[-1], messages
        assert fmu.getFloat64([array], size[array]) == bad[:-1] + before[-1:]
    finally:
        fmu.freeInstance()


def test_the_description_and_the_binary_apply_one_rule():
    """The rule on names (what the C glue applies to the runtime's variables): a run of x, y, z or w, x, y, z of one
    causality, in value-reference order; anything else stays scalar."""
    variables = [("a.x", 0, True, "input"), ("a.y", 1, True, "input"), ("a.z", 2, True, "input"),
                 ("q.w", 3, True, "output"), ("q.x", 4, True, "output"), ("q.y", 5, True, "output"),
                 ("q.z", 6, True, "output"), ("b.x", 7, True, "input"), ("b.y", 8, True, "output"),
                 ("b.z", 9, True, "input"), ("flange.w", 10, True, "output"), ("c.x", 11, False, "parameter"),
                 ("c.y", 12, False, "parameter"), ("c.z", 13, False, "parameter"), ("d.x", 14, True, "input"),
                 ("e.y", 15, True, "input"), ("e.z", 16, True, "input")]
    assert vector_lengths(variables) == {0: 3, 3: 4}


def test_a_body_on_a_contact_runs_through_its_arrays_to_the_fmi2_bits_in_every_master(fmi3_fmus):
    """ball_drop's connections name scalars (ball.position.x): the master reads and writes the arrays whole,
    co-simulation and the monolithic master alike, to the FMI 2.0 run's bits."""
    for algorithm in (None, "monolithic"):
        two = simulate("scenarios/ball_drop", algorithm=algorithm, estimate_error=False)
        three = simulate("scenarios/ball_drop", algorithm=algorithm, estimate_error=False, fmi_version=3)
        assert two.status == three.status == "ok"
        assert two.data.dtype.names == three.data.dtype.names
        for name in two.data.dtype.names:
            assert np.array_equal(three.data[name], two.data[name]), (algorithm, name)


def test_an_archive_keeps_the_fmi2_fmu_where_the_fmi3_one_has_arrays(fmi3_fmus, tmp_path):
    """SSP 1.0 connects scalars: exported with --fmi-version 3, the body and the contact keep their FMI 2.0 FMUs,
    and the summary says why."""
    archive = export_ssp("scenarios/ball_drop", tmp_path / "ball_drop.ssp", fmi_version=3)
    with zipfile.ZipFile(archive) as zf:
        versions = {name: ET.fromstring(zipfile.ZipFile(zf.open(name)).read("modelDescription.xml")).get("fmiVersion")
                    for name in zf.namelist() if name.endswith(".fmu")}
    assert versions and set(versions.values()) == {"2.0"}
    summary = export_summary(archive, fmi_version=3)
    assert "ball, contact keep their FMI 2.0 FMU: the FMI 3.0 build has array variables" in summary
    assert "keep their FMI 2.0 FMU" not in export_summary(archive)


def array_host_arguments(fmu, folder) -> list[str]:
    """tests/fmi3_array_host.c's arguments for the sphere contact unpacked in ``folder``."""
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(folder)
    md = read_model_description(str(folder))
    vr = {v.name: str(v.valueReference) for v in md.modelVariables}
    return [str(folder / "resources") + "/", md.guid, vr["sphere.position"], vr["sphere.orientation"],
            vr["sphere.force"]]


def test_a_c_host_reads_writes_and_differentiates_the_arrays(fmi3_fmus, tmp_path):
    """The shipped binary in a C host: arrays whole, their derivatives against central differences, the careless
    calls on them refused."""
    host = compile_c_host("fmi3_array_host", tmp_path / "fmi3_array_host")
    model = "SmoothSphereHalfSpaceForce"
    arguments = array_host_arguments(fmi3_fmus[model], tmp_path / model)
    out = checked_host(host, tmp_path / model / "binaries" / "x86_64-linux" / f"{model}.so", arguments)
    assert out.count("\nok ") >= 12, out


def sanitized(model: str, folder: Path, flags: list[str]) -> Path:
    """The model's FMI 3.0 binary built from the sources with clang and ``flags`` (a sanitizer), named as the glue
    finds its class."""
    from mechfmu.fmu import native_tables
    from mechfmu.fmu.native import FMI2_GLUE, FMI3_GLUE, NATIVE_SOURCES
    library = folder / f"{model}.so"
    sources = [FMI3_GLUE, *(p for p in NATIVE_SOURCES if p.suffix == ".c" and p != FMI2_GLUE),
               *native_tables.write(folder), *native_tables.law_sources()]
    subprocess.run([compiler(), *flags, "-shared", "-fPIC", "-ffp-contract=off", "-DMECHFMU_NATIVE", f"-I{folder}",
                    f"-I{native_tables.NATIVE_DIR}", f"-I{HEADERS}", "-o", str(library), *map(str, sources), "-lm",
                    "-lpthread"], check=True)
    return library


def sanitized_host(source: str, folder: Path, flags: list[str]) -> Path:
    host = folder / source
    subprocess.run([compiler(), *flags, f"-I{HEADERS}", f"-I{HERE}", "-o", str(host), str(HERE / f"{source}.c"), "-ldl",
                    "-lm", "-lpthread"], check=True)
    return host


@pytest.mark.slow
def test_the_array_calls_under_address_sanitizer_and_ubsan(fmi3_fmus, tmp_path):
    """The same host and the contact's binary built from the sources with AddressSanitizer and UBSan: no report, no
    leak."""
    model = "SmoothSphereHalfSpaceForce"
    library = sanitized(model, tmp_path, SANITIZERS)
    host = sanitized_host("fmi3_array_host", tmp_path, SANITIZERS)
    arguments = array_host_arguments(fmi3_fmus[model], tmp_path / model)
    checked_host(host, library, arguments, env=dict(os.environ, ASAN_OPTIONS="detect_leaks=1",
                                                    UBSAN_OPTIONS="print_stacktrace=1"))


def thread_host_arguments(fmu, folder, threads: int, steps: int) -> list[str]:
    """tests/fmi3_thread_host.c's arguments for RigidBody unpacked in ``folder``."""
    with zipfile.ZipFile(fmu) as zf:
        zf.extractall(folder)
    md = read_model_description(str(folder))
    vr = {v.name: str(v.valueReference) for v in md.modelVariables}
    return [str(folder / "resources") + "/", md.guid, vr["position_start"], vr["force_a"], vr["position"],
            vr["velocity"], str(threads), str(steps)]


def test_bodies_on_four_threads_step_as_on_one(fmi3_fmus, tmp_path):
    """The shipped binary: four threads, each its own body with early returns, states and instances made and freed
    beside it, give the one-thread run's trajectory to the bit."""
    host = compile_c_host("fmi3_thread_host", tmp_path / "fmi3_thread_host", "-lpthread")
    arguments = thread_host_arguments(fmi3_fmus["RigidBody"], tmp_path / "RigidBody", 4, 2000)
    out = checked_host(host, tmp_path / "RigidBody" / "binaries" / "x86_64-linux" / "RigidBody.so", arguments)
    assert out.count("ok ") == 3, out


@pytest.mark.slow
@pytest.mark.parametrize("sanitizer", ["thread", "address"])
def test_bodies_on_four_threads_under_a_sanitizer_report_nothing(fmi3_fmus, tmp_path, sanitizer):
    """The same host and RigidBody's binary built from the sources with ThreadSanitizer (no data race between the
    instances, the glue's set of live instances and the runtime's shared tables) or AddressSanitizer."""
    flags = ["-g", "-O1", f"-fsanitize={sanitizer}", "-fno-omit-frame-pointer"]
    library = sanitized("RigidBody", tmp_path, flags)
    host = sanitized_host("fmi3_thread_host", tmp_path, flags)
    arguments = thread_host_arguments(fmi3_fmus["RigidBody"], tmp_path / "RigidBody", 4, 300)
    checked_host(host, library, arguments, env=dict(os.environ, TSAN_OPTIONS="halt_on_error=1 exitcode=66",
                                                    ASAN_OPTIONS="detect_leaks=1"))
