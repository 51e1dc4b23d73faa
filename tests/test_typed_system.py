"""The typed way to write systems (``mechfmu.System`` and the component classes): the shipped scenarios' own
generators, written with it, give the committed SSDs byte for byte; every mistake fails at the call that makes
it, naming the valid names; ``write_scenario`` refuses the same mistakes; a system runs as its written
scenario does."""
import importlib.util
import inspect
import math
import re
import unicodedata
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import numpy as np
import pytest
from mechfmu.components import COMPONENTS

import mechfmu
from mechfmu import CoordinateSpringDamper, Fixed, Force, Mass, RigidBody, Sine, SmoothSphereHalfSpaceForce, System
from mechfmu.master.simulate import simulate
from mechfmu.ssp import write_scenario
from mechfmu.ssp.writer import ssd_content

ROOT = Path(__file__).resolve().parent.parent
SHIPPED = sorted(ROOT.glob("scenarios/**/SystemStructure.ssd"))
#: scenarios whose SSD was laid out by hand before the writer existed (tests edit them as text): the generator
#: gives their content (``ssd_content``), not their layout, and leaves them as they are
LAID_OUT_BY_HAND = {"oscillator", "oscillator_linear", "two_mass_oscillator"}


def script(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_generators_write_every_shipped_scenario_byte_for_byte(tmp_path, monkeypatch):
    scenarios, examples = script(ROOT / "scenarios/make_scenarios.py"), script(ROOT / "scenarios/msl/make_examples.py")
    monkeypatch.setattr(scenarios, "HERE", tmp_path)
    monkeypatch.setattr(examples, "HERE", tmp_path / "msl")
    scenarios.main()
    examples.main(None)
    written = sorted(tmp_path.glob("**/SystemStructure.ssd"))
    assert len(SHIPPED) == len(written) == 25
    for ssd in SHIPPED:
        relative = ssd.relative_to(ROOT / "scenarios")
        if relative.parent.name in LAID_OUT_BY_HAND:
            assert ssd_content(tmp_path / relative) == ssd_content(ssd), relative
        else:
            assert (tmp_path / relative).read_bytes() == ssd.read_bytes(), relative


def test_content_ignores_layout_and_connector_order_only(tmp_path):
    ssd = ROOT / "scenarios/oscillator/SystemStructure.ssd"
    text = ssd.read_text()
    for name, edit in {"same": lambda t: t, "changed": lambda t: t.replace('value="80.0"', 'value="80.5"')}.items():
        (tmp_path / name).write_text(edit(text))
    assert ssd_content(tmp_path / "same") == ssd_content(ssd) != ssd_content(tmp_path / "changed")


def oscillator() -> System:
    s = System("oscillator", "a mass on a spring-damper to ground")
    ground = s.add("ground", Fixed())
    spring = s.add("spring", CoordinateSpringDamper(stiffness=5000.0, damping=80.0))
    mass = s.add("mass", Mass(m=5.0, f_drive=1.0))
    s.connect(ground.flange, spring.flange_a)
    s.connect(spring.flange_b, mass.flange_a)
    s.experiment(stop_time=0.1, step_size=1e-3, algorithm="jacobi")
    return s


def test_an_experiment_takes_every_master_and_auto():
    s = System("empty")
    s.experiment(stop_time=1.0, step_size=1e-3)
    assert (s.stop_time, s.step_size, s.algorithm) == (1.0, 1e-3, "auto")
    s.experiment(2.0, 1e-2, "newton", tolerance=(1e-4, 1e-6), coupling="implicit")
    assert (s.algorithm, s.tolerance, s.options) == ("newton", (1e-4, 1e-6), {"coupling": "implicit"})
    with pytest.raises(ValueError, match="step_size = 2 s must be > 0 and <= stop_time = 1 s"):
        s.experiment(1.0, 2.0)


def test_a_system_writes_what_write_scenario_writes(tmp_path):
    s = oscillator()
    typed = s.write(tmp_path / "typed", fmu_folder="../../fmus").read_bytes()  # write_scenario's default
    plain = write_scenario(tmp_path / "plain", "oscillator", [
        ("ground", "Fixed", {}), ("spring", "CoordinateSpringDamper", {"stiffness": 5000.0, "damping": 80.0}),
        ("mass", "Mass", {"m": 5.0, "f_drive": 1.0})], ["ground.flange <-> spring.flange_a",
                                                          "spring.flange_b <-> mass.flange_a"],
        0.1, 1e-3, description="a mass on a spring-damper to ground", algorithm="jacobi").read_bytes()
    assert typed == plain


def test_a_system_runs_as_its_written_scenario(tmp_path):
    s = oscillator()
    direct = s.run(local=True)
    written = simulate(s.write(tmp_path / "oscillator").parent, local=True)
    assert direct.ok and written.ok
    assert direct.data.dtype.names == written.data.dtype.names
    for name in direct.data.dtype.names:
        assert np.array_equal(direct.data[name], written.data[name]), name
    # m x'' + d x' + k x = F from rest, closed form; Jacobi's first-order error at omega h = 0.03: 2 %
    m, d, k, force, t = 5.0, 80.0, 5000.0, 1.0, 0.1
    omega, zeta = math.sqrt(k / m), d / (2 * math.sqrt(k * m))
    omega_d = omega * math.sqrt(1 - zeta ** 2)
    exact = force / k * (1 - math.exp(-zeta * omega * t) * (math.cos(omega_d * t)
                                                            + zeta / math.sqrt(1 - zeta ** 2) * math.sin(omega_d * t)))
    assert direct.final["mass.s"] == pytest.approx(exact, rel=0.02)


@pytest.mark.slow
def test_a_system_runs_through_its_fmus_and_exports_an_archive(tmp_path):
    s = oscillator()
    through_fmus, local = s.run(), s.run(local=True)
    assert through_fmus.ok
    for name in local.data.dtype.names:
        assert np.array_equal(through_fmus.data[name], local.data[name]), name
    archive = s.export_ssp(tmp_path / "oscillator.ssp")
    with zipfile.ZipFile(archive) as zf:
        names = zf.namelist()
    assert "SystemStructure.ssd" in names and sum(n.endswith(".fmu") for n in names) == 3
    assert simulate(archive).final["mass.s"] == through_fmus.final["mass.s"]


def test_component_classes_take_their_declared_parameters():
    assert all(getattr(mechfmu, name).model == name for name in COMPONENTS)
    signature = inspect.signature(Mass)
    assert list(signature.parameters) == ["m", "L", "s_start", "v_start", "f_drive"]
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in signature.parameters.values())
    assert "m: Real, kg, start 1.0, > 0" in Mass.__doc__
    assert Mass(m=5).parameters == {"m": 5.0} and isinstance(Mass(m=5).parameters["m"], float)
    # a group of dotted parameters given as a whole keeps the order given
    ball = RigidBody(inertia={"zz": 0.5, "xx": 0.75}, position_start=(0.0, 1.0, 0.0))
    assert list(ball.parameters) == ["inertia.zz", "inertia.xx", "position_start.x", "position_start.y",
                                     "position_start.z"]


@pytest.mark.parametrize("call, error, words", [
    (lambda: Mass(mm=1.0), TypeError, ["'mm'", "did you mean 'm'", "m, L, s_start, v_start, f_drive"]),
    (lambda: Mass(m=-1.0), ValueError, ["Mass", "m = -1", "must be > 0 kg"]),
    (lambda: Mass(m="heavy"), ValueError, ["m = 'heavy'", "not a Real"]),
    (lambda: Mass(m=True), ValueError, ["Mass", "m = True", "must be a number (Real), not a Boolean"]),
    (lambda: Mass(f_drive=False), ValueError, ["Mass", "f_drive = False", "not a Boolean"]),
    (lambda: CoordinateSpringDamper(stiffness=math.inf), ValueError, ["stiffness = inf", "finite"]),
    (lambda: RigidBody(inertia={"xz": 1.0, "qq": 2.0}), TypeError, ["'qq'", "inertia", "xx, yy, zz"]),
    (lambda: RigidBody(gravity=(0.0, -9.81)), ValueError, ["gravity", "3 values"]),
    (lambda: mechfmu.Mas, AttributeError, ["'Mas'", "did you mean 'Mass'", "CoordinateSpringDamper"]),
])
def test_a_misspelt_parameter_or_model_fails_at_the_call(call, error, words):
    with pytest.raises(error) as info:
        call()
    for word in words:
        assert word in str(info.value)


def test_a_misspelt_port_or_a_bad_connection_fails_at_the_call():
    s = System("chain")
    ground, spring, mass = s.add("ground", Fixed()), s.add("spring", CoordinateSpringDamper()), s.add("mass", Mass())
    with pytest.raises(AttributeError, match=r"mass \(Mass\) has no port 'flange_c' \(did you mean 'flange_b'\?\); "
                                             r"its ports: flange_a, flange_b"):
        _ = mass.flange_c
    with pytest.raises(AttributeError, match=r"spring.flange_a has no port 'q'; its ports: s, v"):
        _ = spring.flange_a.q
    with pytest.raises(ValueError, match="the name 'mass' is taken"):
        s.add("mass", Mass())
    with pytest.raises(TypeError, match=r"give a component, Mass\(...\), not the class"):
        s.add("other", Mass)
    with pytest.raises(ValueError, match="exactly one side must output the flange's position .both do."):
        s.connect(ground.flange, mass.flange_b)
    with pytest.raises(ValueError, match="both are outputs"):
        s.connect(mass.flange_a.s, spring.flange_b.f)
    with pytest.raises(ValueError, match="a flange and a variable"):
        s.connect(mass.flange_a, spring.flange_b.s)
    with pytest.raises(TypeError, match="mass is a component; name one of its ports"):
        s.connect(mass, spring.flange_b)
    s.connect(spring.flange_b, mass.flange_a)
    with pytest.raises(ValueError, match=r"spring.flange_b.s is driven twice \(also by mass.flange_a.s\)"):
        s.connect(mass.flange_a, spring.flange_b)
    with pytest.raises(ValueError, match="not a port of a component of system 'chain'"):
        s.connect(System("other").add("m", Mass()).flange_a, spring.flange_a)
    with pytest.raises(ValueError, match="free.ground.flange.: holds no input"):
        s.free(ground.flange)
    with pytest.raises(ValueError, match="no algorithm 'jacobbi'.*'jacobi'"):
        s.experiment(1.0, 1e-3, "jacobbi")
    assert s.connections == ["spring.flange_b <-> mass.flange_a"]  # refused connections left nothing behind


def test_vector_ports_connect_member_by_member_and_signals_output_to_input():
    s = System("contact")
    ball = s.add("ball", RigidBody())
    contact = s.add("contact", SmoothSphereHalfSpaceForce())
    s.connect(contact.sphere.position, ball.position)  # either order: wired from the output
    assert s.connections == [f"ball.position.{a} -> contact.sphere.position.{a}" for a in "xyz"]
    with pytest.raises(ValueError, match="hold different variables"):
        s.connect(ball.orientation, contact.sphere.position)
    signals = System("drive")
    sine, force = signals.add("sine", Sine(amplitude=2.0)), signals.add("force", Force())
    signals.connect(force.f, sine.y)
    assert signals.connections == ["sine.y -> force.f"]


@pytest.mark.parametrize("components, connections, words", [
    ([("mass", "Mas", {})], [], ["component 'mass'", "no model 'Mas'", "did you mean 'Mass'"]),
    ([("mass", "Mass", {"mm": 1.0})], [], ["component 'mass'", "no parameter 'mm'", "m, L, s_start"]),
    ([("mass", "Mass", {"m": 0.0})], [], ["component 'mass'", "m = 0", "must be > 0 kg"]),
    ([("mass", "Mass", {}), ("mass", "Fixed", {})], [], ["'mass'", "taken twice"]),
    ([("mass", "Mass", {}), ("spring", "CoordinateSpringDamper", {})], ["mass.flange_a.x -> spring.flange_a.s"],
     ["no output 'flange_a.x'", "flange_a.s, flange_a.v"]),
    ([("mass", "Mass", {}), ("spring", "CoordinateSpringDamper", {})], ["mass.flange_a.s -> sprong.flange_a.s"],
     ["no component 'sprong'", "did you mean 'spring'"]),
    ([("mass", "Mass", {}), ("spring", "CoordinateSpringDamper", {})],
     ["mass.flange_a.s -> spring.flange_a.s", "mass.flange_b.s -> spring.flange_a.s"], ["driven twice"]),
    ([("mass", "Mass", {}), ("spring", "CoordinateSpringDamper", {})], ["mass.flange_c <-> spring.flange_a"],
     ["no flange 'flange_c'", "flange_a, flange_b"]),
])
def test_write_scenario_refuses_what_the_typed_api_refuses(tmp_path, components, connections, words):
    with pytest.raises(ValueError) as info:
        write_scenario(tmp_path, "bad", components, connections, 1.0, 1e-3)
    for word in words:
        assert word in str(info.value)
    assert not (tmp_path / "SystemStructure.ssd").exists()


def test_a_description_cannot_close_its_comment_and_write_elements(tmp_path):
    """The description is written as an XML comment; one holding '-->' and elements of its own (an injected
    system) stays a comment: the file holds the real system and reads back with its three components."""
    from mechfmu.ssp.scenario import load_scenario
    injected = ('x --><ssd:System name="evil"><ssd:Elements/></ssd:System><!-- y')
    s = System("oscillator", description=injected)
    ground, spring, mass = s.add("ground", Fixed()), s.add("spring", CoordinateSpringDamper()), s.add("mass", Mass())
    s.connect(ground.flange, spring.flange_a)
    s.connect(spring.flange_b, mass.flange_a)
    s.experiment(stop_time=0.1, step_size=1e-3, algorithm="jacobi")
    ssd = s.write(tmp_path / "osc")
    systems = ET.parse(ssd).getroot().findall("{http://ssp-standard.org/SSP1/SystemStructureDescription}System")
    assert [system.get("name") for system in systems] == ["oscillator"]
    assert sorted(load_scenario(ssd.parent).components) == ["ground", "mass", "spring"]


def test_each_call_checks_what_it_adds_and_the_system_stays_checked_as_a_whole(tmp_path):
    """``add`` and ``connect`` check only the new component and wires, against what the system holds: after
    hundreds of components a name taken twice, an input driven twice and a flange out of force ports are refused
    naming the same things, a refused call leaves nothing behind, a connection put into ``connections`` by hand
    is checked with the next ``connect``, and the system writes what ``write_scenario`` writes."""
    s = System("long chain")
    previous = s.add("ground", Fixed()).flange
    for k in range(150):
        spring, mass = s.add(f"spring{k}", CoordinateSpringDamper()), s.add(f"mass{k}", Mass(m=1.0 + k))
        s.connect(previous, spring.flange_a)
        s.connect(spring.flange_b, mass.flange_a)
        previous = mass.flange_b
    first, count = s.placed["mass0"], len(s.connections)
    with pytest.raises(ValueError, match=r"add\('mass0', Mass\(\)\): the name 'mass0' is taken by Mass\(m=1.0\)"):
        s.add("mass0", Mass())
    with pytest.raises(ValueError, match=r"connect\(mass0.flange_a, spring0.flange_b\): .*spring0.flange_b.s is "
                                         r"driven twice \(also by mass0.flange_a.s\)"):
        s.connect(first.flange_a, s.placed["spring0"].flange_b)
    for k in range(3):  # mass0.flange_b has 4 force ports; spring1 holds one
        s.connect(first.flange_b, s.add(f"extra{k}", CoordinateSpringDamper()).flange_a)
    with pytest.raises(ValueError, match=r"mass0.flange_b takes no \(more\) force: 4 port\(s\), all wired"):
        s.connect(first.flange_b, s.add("extra3", CoordinateSpringDamper()).flange_a)
    assert len(s.connections) == count + 3 and s.placed["mass0"] is first
    s.connections.append("mass7.flange_a.s -> spring7.flange_b.s")  # by hand, driven already
    with pytest.raises(ValueError, match=r"connect\(ground.flange, extra3.flange_b\): .*spring7.flange_b.s is "
                                         r"driven twice"):
        s.connect(s.placed["ground"].flange, s.placed["extra3"].flange_b)
    s.connections.pop()
    s.connect(s.placed["ground"].flange, s.placed["extra3"].flange_b)
    assert len(s.connections) == count + 4
    plain = write_scenario(tmp_path / "plain", "long chain", s.components, s.connections, 1.0, 1e-3)
    assert s.write(tmp_path / "typed", fmu_folder="../../fmus").read_bytes() == plain.read_bytes()


#: the characters XML 1.0 holds (its Char production)
def xml_char(char: str) -> bool:
    return char in "\t\n\r" or " " <= char <= "\ud7ff" or "\ue000" <= char <= "\ufffd" or char >= "\U00010000"


def test_names_refuse_exactly_the_control_characters_and_what_xml_cannot_hold():
    from mechfmu.ssp.writer import NOT_XML, refused_character
    for code in [*range(0x10000), 0x10000, 0x1FFFE, 0x10FFFF]:
        char = chr(code)
        assert (refused_character(char) is None) == (unicodedata.category(char) != "Cc" and xml_char(char)), code
        assert (refused_character(char, NOT_XML) is None) == xml_char(char), code


@pytest.mark.parametrize("char", ["\x00", "\x01", "\t", "\n", "\r", "\x1f", "\x7f", "\x85", "\ud800", "\ufffe"])
def test_a_name_holding_a_control_character_is_refused_at_the_call(tmp_path, char):
    name = f"a{char}b"
    xml = "" if xml_char(char) else ", which XML 1.0 cannot hold"
    kind = "control character" if unicodedata.category(char) == "Cc" else "character"
    s = System("ok")
    with pytest.raises(ValueError) as info:
        s.add(name, Mass())
    assert str(info.value).startswith(f"add({name!r}, Mass()): the name holds the {kind} U+{ord(char):04X}{xml};")
    assert not s.placed
    with pytest.raises(ValueError) as info:
        System(name)
    assert str(info.value).startswith(f"System({name!r}, ''): the name holds the {kind} U+{ord(char):04X}{xml};")
    with pytest.raises(ValueError, match=re.escape(f"component name {name!r}: the name holds the {kind} U")):
        write_scenario(tmp_path, "ok", [(name, "Mass", {})], [], 1.0, 1e-3)
    with pytest.raises(ValueError, match=re.escape(f"scenario {name!r}: the name holds the {kind} U")):
        write_scenario(tmp_path, name, [("mass", "Mass", {})], [], 1.0, 1e-3)
    assert not (tmp_path / "SystemStructure.ssd").exists()


@pytest.mark.parametrize("char", ["\x00", "\x08", "\x0b", "\x0c", "\x1f", "\udfff", "\uffff"])
def test_a_description_xml_cannot_hold_is_refused_at_the_call(tmp_path, char):
    with pytest.raises(ValueError) as info:
        System("ok", f"x{char}y")
    assert f"the description holds the {'control ' * (char < ' ')}character U+{ord(char):04X}, which XML 1.0 " \
           "cannot hold" in str(info.value)
    with pytest.raises(ValueError, match="scenario 'ok': the description holds"):
        write_scenario(tmp_path, "ok", [("mass", "Mass", {})], [], 1.0, 1e-3, description=f"x{char}y")


def test_names_and_descriptions_xml_holds_are_written_and_read_back(tmp_path):
    from mechfmu.ssp.scenario import load_scenario
    s = System("syst\u00e8me \u2028", description="lines\n\tindented\r\n\x85 -- \x7f and \U0001F600")
    s.add("masse\u0301", Mass(m=2.0))
    ssd = s.write(tmp_path / "unusual")
    assert list(load_scenario(ssd.parent, local=True).components) == ["masse\u0301"]
    assert load_scenario(ssd.parent, local=True).name == "syst\u00e8me \u2028"


def test_a_text_value_or_option_xml_cannot_hold_is_refused_at_the_call(tmp_path):
    """A String parameter (a user function) or a master option holding a character XML cannot hold would write an
    SSD that cannot be read back: refused where it is given, naming the parameter or option and the character (NUL,
    which no FMI String carries, already by the component)."""
    from mechfmu.ssp.library import CoordinateSpringDamper
    s = System("ok")
    with pytest.raises(ValueError, match=re.escape("CoordinateSpringDamper: springForceUserFunction = 'k*u\\x00' "
                                                   "holds a NUL character, which an FMI String cannot carry")):
        CoordinateSpringDamper(springForceUserFunction="k*u\x00")
    with pytest.raises(ValueError, match=re.escape("CoordinateSpringDamper: springForceUserFunction = 'k*u\\x01' is "
                                                   "invalid: syntax error")):  # what the function's parser says
        CoordinateSpringDamper(springForceUserFunction="k*u\x01")
    with pytest.raises(ValueError, match=re.escape("component 'road': fileName = 'road\\x01.csv' holds "
                                                   "the control character U+0001, which XML 1.0 cannot hold")):
        s.add("road", mechfmu.Table(tableOnFile=True, fileName="road\x01.csv"))  # read at the run: not checked before
    assert not s.placed
    with pytest.raises(ValueError, match=re.escape("scenario 'ok': the option exchange holds the control character "
                                                   "U+0001")):
        write_scenario(tmp_path, "ok", [("mass", "Mass", {})], [], 1.0, 1e-3, exchange="strict\x01")
    assert not (tmp_path / "SystemStructure.ssd").exists()


@pytest.mark.parametrize("call, message", [
    (lambda: System(5), "System(5, ''): the name is a non-empty text"),
    (lambda: System("osc", None), "System('osc', None): the name is a non-empty text, the description a text"),
    (lambda: System("osc").add(b"x", Mass()), "add(b'x', Mass()): a name is a non-empty text"),
    (lambda: Mass(m=b"5"), "Mass: m = b'5' is bytes, not a Real"),
    (lambda: System("osc").experiment(True, 1e-3), "experiment: stop_time = True must be a finite number"),
    (lambda: System("osc").experiment(math.inf, 1e-3), "experiment: stop_time = inf must be a finite number"),
    (lambda: System("osc").experiment(1.0, None), "experiment: step_size = None must be a finite number"),
    (lambda: System("osc").experiment(1.0, 1e-3, tolerance=(1e-4,)), "tolerance = (0.0001,) must be a pair"),
    (lambda: System("osc").experiment(1.0, 1e-3, tolerance=(math.nan, 1e-6)), "tolerance rtol = nan must be a"),
    (lambda: System("osc").experiment(1.0, 1e-3, tolerance=(1e-4, 0.0)), "tolerance atol = 0 must be a"),
    (lambda: System("osc").experiment(1.0, 1e-3, events=True), "option events = True must be a text"),
    (lambda: System("osc").experiment(1.0, 1e-3, None), "mechfmu has no algorithm 'None'"),
])
def test_experiment_names_and_values_of_the_wrong_kind_are_refused_at_the_call(call, message):
    """Each was accepted (a Boolean stop time, bytes as a Real, an infinite stop time, a NaN tolerance: an SSD
    that does not load) or failed later with a bare TypeError or IndexError."""
    with pytest.raises((TypeError, ValueError), match=re.escape(message)):
        call()


def test_a_number_given_as_an_option_is_written_as_its_text(tmp_path):
    s = System("osc")
    s.add("mass", Mass())
    s.experiment(1.0, 1e-3, algorithm="jacobi", substeps=3)
    assert 'substeps="3"' in s.write(tmp_path / "osc").read_text()
