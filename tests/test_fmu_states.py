"""A serialized FMU state is checked as a whole before use: the header's CRC-32 covers the FMI state it names and the
body (every single-bit change is refused), the body's own phase agrees with the header's FMI state and with the
instance's interface, its times agree with its phase, and its Integer and Boolean values are what the fmi2Set
functions leave; a state of the earlier format is refused as another version's. The states are changed here as an
attacker would, with the checksums made right again (``sealed``), so that each check behind them is reached."""
import math
import struct
import zlib

import pytest
from fmpy.fmi1 import FMICallException
from fmpy.fmi2 import FMU2Model
from test_native_fmus import instance

HEADER = 13  # "mechfmu\x03", the FMI state's bit index, the CRC-32 of the index and the body
STEP_COMPLETE, INSTANTIATED = 2, 0  # bit indexes of the loader's FMI states


def parts(blob: bytes) -> tuple[int, bytes]:
    """The header's FMI state index and the body (a native body without its own CRC-32)."""
    assert blob[:8] == b"mechfmu\x03" and zlib.crc32(blob[8:9] + blob[HEADER:]) == int.from_bytes(blob[9:13], "little")
    if blob[HEADER:].startswith(b"{"):  # a component written in Python: JSON, no checksum of its own
        return blob[8], blob[HEADER:]
    assert zlib.crc32(blob[HEADER:-4]) == int.from_bytes(blob[-4:], "little")
    return blob[8], blob[HEADER:-4]


def sealed(index: int, content: bytes) -> bytes:
    body = content if content.startswith(b"{") else content + zlib.crc32(content).to_bytes(4, "little")
    return b"mechfmu\x03" + bytes([index]) + zlib.crc32(bytes([index]) + body).to_bytes(4, "little") + body


def flags_offset(model: str) -> int:
    """Where the body's phase flags (initialized, in Model Exchange use: 8-byte doubles) start."""
    return len(b"mechfmu-native-state 2\0") + len(model) + 1 + 8 * 5


def refusal(slave, messages: list[str], data: bytes) -> str:
    messages.clear()
    with pytest.raises(FMICallException):
        slave.deSerializeFMUstate(data)
    return " ".join(messages)


def flips_accepted(slave, blob: bytes, bits) -> list[int]:
    """The bits of ``bits`` whose single flip in ``blob`` the FMU deserializes as a state (none should be)."""
    accepted = []
    for bit in bits:
        changed = bytearray(blob)
        changed[bit // 8] ^= 1 << (bit % 8)
        try:
            slave.deSerializeFMUstate(bytes(changed))
            accepted.append(bit)
        except FMICallException:
            pass
    return accepted


def test_every_single_bit_change_of_a_state_is_refused(fmus):
    messages: list[str] = []
    slave, vr = instance(fmus["Mass"], "Mass", messages)
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    slave.setReal([vr["f_drive"]], [1.0])
    slave.doStep(0.0, 1e-3)
    blob = bytes(slave.serializeFMUstate(slave.getFMUstate()))
    assert flips_accepted(slave, blob, range(8 * len(blob))) == []
    assert "checksum does not match" in refusal(slave, messages, blob[:20] + bytes([blob[20] ^ 4]) + blob[21:])
    slave.setFMUstate(slave.deSerializeFMUstate(blob))  # the state itself restores
    slave.terminate()
    slave.freeInstance()


def test_a_state_whose_header_contradicts_its_body_is_refused(fmus):
    """Saved before initialization, marked as stepping: with it, a parameter could change while stepping."""
    messages: list[str] = []
    slave, vr = instance(fmus["Mass"], "Mass", messages)
    index, content = parts(bytes(slave.serializeFMUstate(slave.getFMUstate())))
    assert index == INSTANTIATED
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    reason = refusal(slave, messages, sealed(STEP_COMPLETE, content))
    assert "the state's header says step complete, but its body is not initialized" in reason, reason
    slave.doStep(0.0, 1e-3)
    stepping = bytes(slave.serializeFMUstate(slave.getFMUstate()))
    index, content = parts(stepping)
    reason = refusal(slave, messages, sealed(INSTANTIATED, content))
    assert "says instantiated, but its body is initialized" in reason, reason
    at = flags_offset("Mass")
    assert struct.unpack("<dd", content[at:at + 16]) == (1.0, 0.0)  # initialized, Co-Simulation
    model_exchange = content[:at + 8] + struct.pack("<d", 1.0) + content[at + 16:]
    reason = refusal(slave, messages, sealed(index, model_exchange))
    assert "of the other interface" in reason, reason
    before = content[:at] + struct.pack("<d", 0.0) + content[at + 8:]  # not initialized, with times of a run
    reason = refusal(slave, messages, sealed(INSTANTIATED, before))
    assert "its phase contradicts its times" in reason, reason
    slave.setFMUstate(slave.deSerializeFMUstate(stepping))
    messages.clear()
    with pytest.raises(FMICallException):
        slave.setReal([vr["m"]], [2.0])  # stepping: the mass is fixed
    slave.terminate()
    slave.freeInstance()


def test_a_model_exchange_state_keeps_to_its_interface(fmus, tmp_path):
    messages: list[str] = []
    model, vr = instance(fmus["Mass"], "Mass", messages, kind=FMU2Model)
    model.setupExperiment(startTime=0.0)
    model.enterInitializationMode()
    model.exitInitializationMode()
    index, content = parts(bytes(model.serializeFMUstate(model.getFMUstate())))
    at = flags_offset("Mass")
    assert struct.unpack("<dd", content[at:at + 16]) == (1.0, 1.0)
    co_simulation = content[:at + 8] + struct.pack("<d", 0.0) + content[at + 16:]
    reason = refusal(model, messages, sealed(index, co_simulation))
    assert "of the other interface" in reason or "contradicts its times" in reason, reason
    model.terminate()
    model.freeInstance()


@pytest.mark.parametrize("value, words", [(2.5, "state.values.columns = 2.5 is not an FMI Integer"),
                                          (-2147483649.0, "is not an FMI Integer"), (1e300, "is not an FMI Integer")])
def test_integer_values_of_a_state_are_checked(fmus, value, words):
    messages: list[str] = []
    slave, vr = instance(fmus["Table"], "Table", messages)
    slave.setInteger([vr["columns"]], [2])
    blob = bytes(slave.serializeFMUstate(slave.getFMUstate()))
    index, content = parts(blob)
    at = flags_offset("Table") + 16 + 8 * vr["columns"]
    assert struct.unpack("<d", content[at:at + 8]) == (2.0,)
    changed = content[:at] + struct.pack("<d", value) + content[at + 8:]
    reason = refusal(slave, messages, sealed(index, changed))
    assert words in reason, reason
    boolean = flags_offset("Table") + 16 + 8 * vr["tableOnFile"]
    reason = refusal(slave, messages, sealed(index, content[:boolean] + struct.pack("<d", 0.5) + content[boolean + 8:]))
    assert "state.values.tableOnFile = 0.5 is not a Boolean" in reason, reason
    slave.freeInstance()


def test_a_state_of_the_earlier_format_is_refused_as_another_versions(fmus):
    messages: list[str] = []
    slave, _ = instance(fmus["Mass"], "Mass", messages)
    index, content = parts(bytes(slave.serializeFMUstate(slave.getFMUstate())))
    old = b"mechfmu\x02" + bytes([index]) + content.replace(b"mechfmu-native-state 2", b"mechfmu-native-state 1")
    assert "serialized by an earlier version of this FMU" in refusal(slave, messages, old)
    body = content.replace(b"mechfmu-native-state 2", b"mechfmu-native-state 1")
    reason = refusal(slave, messages, sealed(index, body))
    assert "an earlier version of mechfmu (native state format 1" in reason, reason
    assert not math.isnan(slave.getReal([0])[0])
    slave.freeInstance()


@pytest.mark.slow
def test_a_directional_derivative_costs_what_it_returns(tmp_path):
    """10,000 unknowns x 10,000 knowns over a class's two of each: the law is evaluated twice (a central difference)
    per distinct (unknown, known) pair it needs, not per pair of the request (before: 2 x 10^8 evaluations)."""
    import shutil
    import subprocess

    import fmpy
    from test_start_values import ROOT, SOURCES
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    program = tmp_path / "directional_cost"
    subprocess.run([compiler, "-O1", "-DMECHFMU_NATIVE", f"-I{ROOT / 'mechfmu/fmu'}", f"-I{ROOT / 'components/native'}",
                    f"-I{fmpy.__file__.rpartition('/')[0]}/c-code", "-o", str(program),
                    str(ROOT / "tests/directional_cost.c"), *(str(ROOT / s) for s in SOURCES), "-lm", "-ldl",
                    "-lpthread"], check=True)
    n = 10_000
    status, evaluations, total = subprocess.run([str(program), str(n)], capture_output=True, text=True,
                                                timeout=600, check=True).stdout.split()
    assert status == "0" and int(evaluations) <= 2 * 4, evaluations
    # the class (m = 1, n = 3): y = m u n, so dy/du = 3 and dy/d(state.s) = 0; d(der)/du = 1/m, d(der)/ds = 0;
    # a third of the knowns is u: each y row sums 3 * 3334, each der row 3334 (to the difference's rounding)
    rows_y, rows_der, u_count = (n + 1) // 2, n // 2, len(range(0, n, 3))
    expected = rows_y * 3.0 * u_count + rows_der * 1.0 * u_count
    assert abs(float(total) - expected) <= 1e-6 * expected, (total, expected)


def test_a_python_components_state_keeps_to_the_same_rules():
    """A component written in Python (its state checked by components/state_check.py): times that contradict the
    phase, and an Integer beyond 32 bits, are refused as the native runtime refuses them."""
    from mechfmu.components.base import Component, Input, Output, Param
    from mechfmu.components.state_check import state_problem

    class Probe(Component):
        description = "test only"
        parameters = (Param("k", 1.0, "1", "gain", min=0.0), Param("n", 2, "1", "count", type="Integer"))
        inputs = (Input("u", 0.0),)
        outputs = (Output("y", depends_on=("u",)),)

        def compute_outputs(self):
            return {"y": self.values["k"] * self.values["u"]}

    probe = Probe("probe")
    fresh = probe.get_state()
    assert state_problem(Probe, fresh) is None
    probe.initialize(0.0)
    probe.do_step(0.0, 0.5)
    running = probe.get_state()
    assert state_problem(Probe, running) is None
    assert running["accepted"] == [0.0, 0.0] and running["time"] == 0.5
    before = {**running, "initialized": False}
    assert "its phase contradicts its times" in state_problem(Probe, before)
    assert "its phase contradicts its times" in state_problem(Probe, {**fresh, "initialized": True})
    late = {**running, "accepted": [0.0, 0.75]}  # an accepted point after the state's time
    assert "its phase contradicts its times" in state_problem(Probe, late)
    big = {**fresh, "values": {**fresh["values"], "n": 2**31}}
    assert "is not an FMI Integer" in state_problem(Probe, big)


@pytest.mark.slow
def test_every_single_bit_change_of_a_python_embedding_fmus_state_is_refused(python_fmus):
    """The loader's checksum covers the Python-embedding FMU's body (JSON) as it covers the native one's."""
    messages: list[str] = []
    slave, vr = instance(python_fmus["Mass"], "Mass", messages)
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    slave.doStep(0.0, 1e-3)
    blob = bytes(slave.serializeFMUstate(slave.getFMUstate()))
    assert flips_accepted(slave, blob, range(0, 8 * len(blob), 3)) == []  # every third bit: Python is slower
    index, content = parts(blob)
    assert index == STEP_COMPLETE
    reason = refusal(slave, messages, sealed(INSTANTIATED, content))
    assert "says instantiated, but its body is initialized" in reason, reason
    slave.setFMUstate(slave.deSerializeFMUstate(blob))
    slave.terminate()
    slave.freeInstance()


@pytest.fixture(scope="module")
def python_probe(tmp_path_factory, fmus):
    """tests/test_fmu_faults.py's component written in Python, as an FMU."""
    from conftest import components_with
    from test_fmu_faults import PROBE

    from mechfmu.fmu.build import build
    work = tmp_path_factory.mktemp("state_probe")
    components = components_with(work, "fault_probe", PROBE)
    return build(["FaultProbe"], directory=work / "fmus", components_dir=components, platforms=["linux64"])[0]


@pytest.mark.slow
def test_a_python_components_fmu_state_keeps_to_its_header(python_probe):
    """A component written in Python (its body JSON): saved before initialization, marked as stepping, refused."""
    messages: list[str] = []
    slave, vr = instance(python_probe, "FaultProbe", messages)
    index, content = parts(bytes(slave.serializeFMUstate(slave.getFMUstate())))
    assert index == INSTANTIATED and content.startswith(b"{") and b'"initialized": false' in content
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.exitInitializationMode()
    reason = refusal(slave, messages, sealed(STEP_COMPLETE, content))
    assert "the state's header says step complete, but its body is not initialized" in reason, reason
    slave.freeInstance()


@pytest.mark.parametrize("slot, value, words", [
    (0, 7.0, "mode = 7 is not one of MSL's modes"), (0, 1e300, "is not one of MSL's modes"),
    (4, 0.5, "free = 0.5 is not a Boolean"), (4, 1.0, "mode = 1 contradicts free"),
    (2, 1.0, None)])
def test_a_friction_elements_discrete_state_is_checked(fmus, slot, value, words):
    """A Clutch's saved discrete state (mode, locked, startForward, startBackward, free) must be MSL's: a mode among
    MSL's constants, Booleans 0 or 1, mode 2 exactly when free; a consistent change (startForward set) is taken."""
    messages: list[str] = []
    slave, vr = instance(fmus["Clutch"], "Clutch", messages)
    slave.setReal([vr["fn_max"]], [10.0])
    slave.setupExperiment(startTime=0.0)
    slave.enterInitializationMode()
    slave.setReal([vr["f_normalized"], vr["flange_b.w"]], [1.0, 1.0])
    slave.exitInitializationMode()
    slave.setReal([vr["lambda"]], [0.0])  # driven: no warning
    slave.doStep(0.0, 1e-3)
    assert slave.getReal([vr["mode"]]) == [1.0]
    index, content = parts(bytes(slave.serializeFMUstate(slave.getFMUstate())))
    held = struct.pack("<5d", 1.0, 0.0, 0.0, 0.0, 0.0)  # the hidden state, after the values
    at = content.rindex(held) + 8 * slot
    changed = sealed(index, content[:at] + struct.pack("<d", value) + content[at + 8:])
    if words is None:
        slave.setFMUstate(slave.deSerializeFMUstate(changed))
        assert slave.getReal([vr["startForward"]]) == [1.0]
    else:
        reason = refusal(slave, messages, changed)
        assert words in reason, reason
    slave.freeInstance()
