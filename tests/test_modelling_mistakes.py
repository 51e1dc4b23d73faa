"""Modelling mistakes that used to run "ok" while wrong are said before the run: an unconnected input that
carries physics is warned about by name (a mark in the SSD says it is meant), a step that does not divide the
run is refused, and a source path that does not exist is an error unless the built FMUs may stand in."""
import math
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from mechfmu.master.simulate import simulate, step_count
from mechfmu.ssp import write_scenario
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
#: a step divides a run if the run is a whole number of steps to this relative rounding
DIVIDES = 1e-9
SHIPPED = sorted(p.parent for p in SCENARIOS.glob("**/SystemStructure.ssd"))
FREE = re.compile(r"\s*<ssd:Annotations>\s*<ssc:Annotation type=\"org.mechfmu\">\s*<mechfmu:Free [^>]*/>\s*"
                  r"</ssc:Annotation>\s*</ssd:Annotations>")
SOURCES = re.compile(r"\s*<ssd:Annotations>\s*<ssc:Annotation type=\"org.mechfmu\">\s*<mechfmu:Sources [^>]*/>\s*"
                     r"</ssc:Annotation>\s*</ssd:Annotations>")


def edited(tmp_path: Path, scenario: str, *, drop: tuple[str, ...] = (), absolute: bool = True, edit=None) -> Path:
    """A copy of a shipped scenario in ``tmp_path`` without the connections ``drop`` ("a.x -> b.y"), its
    sources made absolute (so it loads from anywhere), then ``edit`` applied to the SSD's text."""
    folder = Path(tempfile.mkdtemp(dir=tmp_path)) / scenario.replace("/", "_")
    folder.mkdir()
    text = (SCENARIOS / scenario / "SystemStructure.ssd").read_text()
    if absolute:
        text = re.sub(r'source="(\.\./)+fmus/', f'source="{(ROOT / "fmus").as_posix()}/', text)
    for wire in drop:
        (source, output), (target, input_) = (end.strip().split(".", 1) for end in wire.split("->"))
        line = re.compile(rf'\s*<ssd:Connection startElement="{source}" startConnector="{re.escape(output)}" '
                          rf'endElement="{target}" endConnector="{re.escape(input_)}"\s*/>')
        text, count = line.subn("", text)
        assert count == 1, wire
    (folder / "SystemStructure.ssd").write_text(edit(text) if edit else text)
    return folder


def spring_marked_free(inputs: str):
    """An SSD edit: the oscillator's spring gets ``<mechfmu:Free inputs="..."/>``."""
    end = '</ssd:ParameterBindings>\n      </ssd:Component>\n      <ssd:Component name="mass"'
    mark = ('</ssd:ParameterBindings>\n        <ssd:Annotations><ssc:Annotation type="org.mechfmu">'
            f'<mechfmu:Free inputs="{inputs}"/></ssc:Annotation></ssd:Annotations>\n      </ssd:Component>\n'
            '      <ssd:Component name="mass"')
    return lambda text: text.replace(end, mark)


# --- unconnected inputs that carry physics ----------------------------------------------------------------

OSCILLATOR_WIRES = ["ground.flange.s -> spring.flange_a.s", "ground.flange.v -> spring.flange_a.v",
                    "mass.flange_a.s -> spring.flange_b.s", "mass.flange_a.v -> spring.flange_b.v",
                    "spring.flange_b.f -> mass.flange_a.f"]


@pytest.mark.parametrize("wire", OSCILLATOR_WIRES)
def test_each_missing_wire_of_the_oscillator_is_named_before_the_run(tmp_path, wire):
    """Fixed - CoordinateSpringDamper - Mass with one wire left out: the one warning names exactly the input
    that wire fed, says it is not connected and how to mark it free."""
    scenario = load_scenario(edited(tmp_path, "oscillator", drop=(wire,)), local=True)
    target = wire.split("->")[1].strip()
    assert len(scenario.warnings) == 1, scenario.warnings
    assert scenario.warnings[0].startswith(f"{target} is not connected"), scenario.warnings
    assert f'free=["{target}"]' in scenario.warnings[0] and "<mechfmu:Free inputs=" in scenario.warnings[0]


@pytest.mark.slow
def test_the_spring_without_velocity_warns_in_the_result_and_a_free_mark_silences_it(tmp_path):
    """The new user's oscillator: the mass's velocity not wired to the spring, so the spring has no damping
    (mass.s 3.68e-3 m at 1 s instead of 2.00e-3 m, both "ok"). The result carries the warning; marking
    the input free removes it and changes no bit."""
    complete = simulate(SCENARIOS / "oscillator", local=True)
    missing = simulate(edited(tmp_path, "oscillator", drop=("mass.flange_a.v -> spring.flange_b.v",)), local=True)
    assert complete.ok and missing.ok and complete.warnings == []
    assert complete.final["mass.s"] == pytest.approx(2.00e-3, abs=5e-6)  # the damped spring's static point
    assert missing.final["mass.s"] == pytest.approx(3.68e-3, abs=5e-6)  # undamped: still swinging
    assert [w for w in missing.warnings if w.startswith("spring.flange_b.v is not connected while spring.flange_b.s"
                                                        " is")], missing.warnings
    assert "no damping" in missing.warnings[0] and "spring.flange_b.v" in missing.summary()
    marked = edited(tmp_path, "oscillator", drop=("mass.flange_a.v -> spring.flange_b.v",),
                    edit=spring_marked_free("flange_b.v"))
    free = simulate(marked, local=True)
    assert not [w for w in free.warnings if "not connected" in w]  # (the undamped swing's error estimate warns)
    assert all((free.data[n] == missing.data[n]).all() for n in missing.data.dtype.names)


def test_a_connector_end_left_unconnected_warns_as_held_at_zero(tmp_path):
    """Without its ground wires the spring's flange_a stays at 0, at rest (as if fixed there), where Modelica's
    unconnected flange is a free end: warned, naming the flange."""
    folder = edited(tmp_path, "oscillator", drop=tuple(OSCILLATOR_WIRES[:2]))
    (warning,) = load_scenario(folder, local=True).warnings
    assert warning.startswith("spring.flange_a is not connected") and "position 0" in warning
    assert "free end" in warning and 'free=["spring.flange_a"]' in warning


@pytest.mark.parametrize("folder", SHIPPED, ids=[str(p.relative_to(SCENARIOS)) for p in SHIPPED])
def test_no_shipped_scenario_warns(folder):
    """Free ends of bodies (a mass's other flange, the unused ports flange_x[2..4], a ball's port b), inputs
    the master wires itself (tangents, rates, lambda) and drives are no mistakes; the two deliberate
    unconnected connector ends (geared_rotors' brake, ball_drop's half-space) are marked free."""
    assert load_scenario(folder, local=True).warnings == []
    assert load_scenario(folder).warnings == []


@pytest.mark.parametrize("scenario, warned", [("geared_rotors", "brake.flange_a is not connected"),
                                              ("ball_drop", "contact.halfSpace is not connected")])
def test_the_free_marks_of_the_shipped_scenarios_are_needed_and_change_no_result(tmp_path, scenario, warned):
    unmarked = edited(tmp_path, scenario, edit=lambda t: FREE.sub("", t))
    (warning,) = load_scenario(unmarked, local=True).warnings
    assert warning.startswith(warned)
    runs = [simulate(folder, local=True, stop=0.05) for folder in (SCENARIOS / scenario, unmarked)]
    assert all((runs[0].data[n] == runs[1].data[n]).all() for n in runs[0].data.dtype.names)


def test_an_element_whose_force_never_reaches_its_body_is_named_by_the_free_port(tmp_path):
    """MSL's Damper: damper2 and spring2 share mass2.flange_b; without spring2's force wired back, the
    flange's next port (mass2.flange_b[2].f) is named, with the element and the wire to add."""
    folder = edited(tmp_path, "msl/Damper", drop=("spring2.flange_a.f -> mass2.flange_b[2].f",))
    (warning,) = load_scenario(folder, local=True).warnings
    assert warning.startswith("mass2.flange_b[2].f is not connected: spring2 reads mass2.flange_b's motion")
    assert "connect spring2.flange_a.f -> mass2.flange_b[2].f" in warning


def test_three_dimensional_ports_wired_in_part_are_named(tmp_path):
    """A ball whose contact torque is not wired back, and a contact that gets the ball's position but not
    its velocity: each unwired input named, by port."""
    wires = [f"contact.sphere.torque.{a} -> ball.torque_a.{a}" for a in "xyz"] + [
        f"ball.velocity.{a} -> contact.sphere.velocity.{a}" for a in "xyz"]
    warnings = load_scenario(edited(tmp_path, "ball_drop", drop=tuple(wires)), local=True).warnings
    assert len(warnings) == 2, warnings
    assert warnings[0].startswith("ball.torque_a.x/y/z are not connected while ball.force_a.x is")
    assert warnings[1].startswith("contact.sphere.velocity.x/y/z are not connected while contact.sphere.position.x")


def test_a_force_that_reaches_the_body_another_way_is_felt_and_a_rod_passes_the_check_on(tmp_path):
    """The old sign trick (the element's other flange force into the body's f_drive) feeds the body: no
    warning. Through a Rod the element's force must reach the rod's flange_b.f: without it that is named."""
    trick = ["ground.flange.s -> spring.flange_a.s", "ground.flange.v -> spring.flange_a.v",
             "mass.flange_a.s -> spring.flange_b.s", "mass.flange_a.v -> spring.flange_b.v",
             "spring.flange_a.f -> mass.f_drive"]
    components = [("ground", "Fixed", {}), ("spring", "CoordinateSpringDamper", {"stiffness": 100.0}),
                  ("mass", "Mass", {"m": 1.0}), ("rod", "Rod", {"L": 0.5})]
    write_scenario(tmp_path / "trick", "trick", components[:3], trick, 1.0, 1e-3)
    assert load_scenario(tmp_path / "trick", local=True).warnings == []
    carried = ["mass.flange_b <-> rod.flange_a", "ground.flange <-> spring.flange_a"]
    write_scenario(tmp_path / "rod", "rod", components, carried + ["rod.flange_b <-> spring.flange_b"], 1.0, 1e-3)
    assert load_scenario(tmp_path / "rod", local=True).warnings == []
    unfelt = carried + [f"rod.flange_b.{q} -> spring.flange_b.{q}" for q in "sv"]
    write_scenario(tmp_path / "unfelt", "unfelt", components, unfelt, 1.0, 1e-3)
    (warning,) = load_scenario(tmp_path / "unfelt", local=True).warnings
    assert warning.startswith("rod.flange_b.f is not connected: spring reads rod.flange_b's motion")


def test_an_unconnected_signal_input_is_warned_with_the_value_it_keeps(tmp_path):
    """A Force whose signal is not wired pushes with 0 N for the whole run: warned by name, with its start value,
    in the result as well; a free mark says it is meant. Rates (wired by linear-implicit coupling) and a body's
    drive are not signals."""
    (warning,) = load_scenario(edited(tmp_path, "msl/Sensors", drop=("sineForce.y -> force.f",)), local=True).warnings
    assert warning.startswith("force.f is not connected and has no value in the scenario: it keeps its start value "
                              "0 N for the whole run"), warning
    assert "s.connect(sine.y, force.f)" in warning and 'write_scenario(free=["force.f"])' in warning
    from mechfmu import Force, Mass, Sine, System
    s = System("pushed")
    sine, force, mass = s.add("sine", Sine(amplitude=50.0, f=2.0)), s.add("force", Force()), s.add("mass", Mass(m=1.0))
    s.connect(force.flange, mass.flange_a)
    s.experiment(stop_time=0.01, step_size=1e-3, algorithm="jacobi")
    result = s.run(local=True)
    assert result.ok and any(w.startswith("force.f is not connected") for w in result.warnings), result.warnings
    assert result.final["mass.flange_a.s"] == 0.0  # what the warning says: no push
    s.free(force.f)
    assert not any("force.f" in w for w in s.run(local=True).warnings)
    s.connect(sine.y, force.f)
    s.free_inputs.clear()
    assert not any("not connected" in w for w in s.run(local=True).warnings)


def test_write_scenario_writes_free_marks_and_refuses_wrong_ones(tmp_path):
    components = [("ground", "Fixed", {}), ("spring", "CoordinateSpringDamper", {"stiffness": 100.0}),
                  ("mass", "Mass", {"m": 1.0})]
    wires = ["mass.flange_a <-> spring.flange_b"]
    write_scenario(tmp_path / "a", "a", components, wires, 1.0, 1e-3, free=["spring.flange_a"])
    assert load_scenario(tmp_path / "a", local=True).warnings == []
    write_scenario(tmp_path / "b", "b", components, wires, 1.0, 1e-3)
    assert load_scenario(tmp_path / "b", local=True).warnings[0].startswith("spring.flange_a is not connected")
    for mark in ("spring.flange_c", "nobody.flange_a", "spring.flange_b.s", "spring"):
        with pytest.raises(ValueError, match=re.escape(f"free {mark!r}: not an unconnected input")):
            write_scenario(tmp_path / "c", "c", components, wires, 1.0, 1e-3, free=[mark])


@pytest.mark.parametrize("inputs, problem", [
    ("flange_c", "spring: free mark 'flange_c' names no input"),
    ("flange_b.s", "spring: free mark 'flange_b.s', but flange_b.s is connected; remove the mark"),
    ("", "spring: free mark '' names no input"),
])
def test_a_wrong_free_mark_in_an_ssd_is_refused_by_name(tmp_path, inputs, problem):
    folder = edited(tmp_path, "oscillator", edit=spring_marked_free(inputs))
    for local in (True, False):
        with pytest.raises(ScenarioError) as error:
            load_scenario(folder, local=local)
        assert len(error.value.problems) == 1 and error.value.problems[0].startswith(problem), error.value.problems


# --- a step that does not divide the run -----------------------------------------------------------------

def test_a_step_that_does_not_divide_the_run_is_refused_before_it_runs():
    """--step 0.3 --stop 1 on the oscillator used to take 3 steps of 0.3 s and one of 0.1 s and say "ok";
    now a ValueError names step, start, stop, the count and steps and stops that fit."""
    for options in ({}, {"adaptive": "on"}, {"events": "on"}):
        with pytest.raises(ValueError) as error:
            simulate(SCENARIOS / "oscillator", local=True, step=0.3, stop=1.0, **options)
        message = str(error.value)
        assert "step 0.3 s does not divide the run from start 0 s to stop 1 s: that is 3.33333 steps" in message
        assert "the last one cut to 0.1 s" in message and "0.25 s (4 steps)" in message
        assert "0.9 s or 1.2 s" in message


def test_the_command_line_refuses_it_with_exit_code_2():
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", "scenarios/oscillator", "--local", "--step",
                           "0.3", "--stop", "1"], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert proc.returncode == 2 and "does not divide the run" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("t0, stop, step, count", [
    (0.0, 0.3, 0.1, 3),                  # 0.3 / 0.1 = 2.9999999999999996
    (0.0, 1.0, 1e-3 * (1 + 1e-15), 1000),
    (0.0, 0.35, 1e-3, 350),              # 349.99999999999994
    (1e6, 1e6 + 1.0, 1e-3, 1000),        # the span's rounding at 1e6 s: 2.3e-11 of a step
    (0.0, 1.0, 2.0, None), (0.0, 1.0, 9.7e-4, None), (0.0, 1.0, 1e-3 * (1 + 1e-8), None)])
def test_floating_point_rounding_of_a_dividing_step_is_accepted(t0, stop, step, count):
    if count is None:
        with pytest.raises(ValueError, match="does not divide the run"):
            step_count(t0, stop, step, 10**9)
    else:
        assert step_count(t0, stop, step, 10**9) == count


def test_every_dividing_step_keeps_the_step_count_it_had():
    """Over 100,000 combinations of usual steps, stops and starts, every one that divides (within DIVIDES)
    and has at most 1e6 steps takes as many steps as before (ceil(steps - 1e-9)), so results stay bit for
    bit; every other one is refused."""
    steps = [a * 10.0 ** -e for a in (1, 2, 2.5, 5, 1.25, 3.125, 4, 8) for e in range(1, 7)]
    accepted = 0
    for h in steps:
        for t0 in (0.0, 0.1, 1.0):
            for n in range(1, 1001):
                stop = t0 + round(n * 0.01, 2)
                exact = (stop - t0) / h
                if exact > 1e6:
                    continue
                try:
                    count = step_count(t0, stop, h, 10**8)
                except ValueError:
                    assert abs(exact - round(exact)) > DIVIDES * exact or round(exact) < 1
                    continue
                accepted += 1
                assert count == max(1, math.ceil(exact - 1e-9)), (h, t0, stop)
    assert accepted > 10_000


# --- a source that does not exist ------------------------------------------------------------------------

def test_a_missing_source_is_an_error_naming_component_source_and_path(tmp_path):
    """A scenario without <mechfmu:Sources fallback="built"/> whose source path is wrong no longer runs the
    built FMU of that name silently."""
    folder = edited(tmp_path, "oscillator", absolute=False, edit=lambda t: SOURCES.sub("", t))
    with pytest.raises(ScenarioError) as error:
        load_scenario(folder)
    looked = (folder / "../../fmus/Mass.fmu").resolve()
    assert [p for p in error.value.problems if p.startswith(
        f"mass: FMU not found: {looked} (source '../../fmus/Mass.fmu'); correct the source, or, if it names a "
        "mechfmu model, let the built Mass.fmu stand in for it: built_fmus=True (command line --built-fmus)")]
    assert len(error.value.problems) == 3  # ground, spring, mass
    with pytest.raises(ScenarioError, match="mass: FMU not found"):
        simulate(folder)


def test_the_built_fmus_stand_in_when_asked_and_it_is_said(tmp_path):
    folder = edited(tmp_path, "oscillator", absolute=False, edit=lambda t: SOURCES.sub("", t))
    scenario = load_scenario(folder, built_fmus=True)
    (note,) = scenario.warnings
    assert note.startswith("source(s) not found, mechfmu's built FMUs used instead (built_fmus=True): ")
    assert f"mass: ../../fmus/Mass.fmu -> {(ROOT / 'fmus' / 'Mass.fmu').resolve()}" in note
    copied = simulate(folder, stop=0.05, built_fmus=True)
    original = simulate(SCENARIOS / "oscillator", stop=0.05)
    assert copied.ok and copied.warnings[0] == note
    assert all((copied.data[n] == original.data[n]).all() for n in original.data.dtype.names)


def test_a_copied_shipped_scenario_runs_on_the_built_fmus(tmp_path):
    """The shipped scenarios say their sources are mechfmu's built FMUs, so a copied folder runs (as an
    installed mechfmu does with the FMUs in its cache), and says which FMUs it took."""
    folder = tmp_path / "elsewhere" / "oscillator"
    shutil.copytree(SCENARIOS / "oscillator", folder)
    (note,) = load_scenario(folder).warnings
    assert note.startswith("source(s) not found, mechfmu's built FMUs used instead (the SSD's <mechfmu:Sources "
                           'fallback="built"/>): ground: ../../fmus/Fixed.fmu -> ')
    assert simulate(folder, stop=0.01).ok
    with pytest.raises(ScenarioError, match="spring: FMU not found"):
        load_scenario(folder, built_fmus=False)


def test_a_run_in_process_needs_no_fmu_file(tmp_path):
    folder = edited(tmp_path, "oscillator", absolute=False, edit=lambda t: SOURCES.sub("", t))
    result = simulate(folder, local=True, stop=0.01)
    assert result.ok and result.warnings == []


def test_a_wrong_sources_annotation_is_refused(tmp_path):
    folder = edited(tmp_path, "oscillator", edit=lambda t: t.replace('fallback="built"', 'fallback="yes"'))
    with pytest.raises(ScenarioError, match="mechfmu:Sources fallback='yes': the one value is 'built'"):
        load_scenario(folder, local=True)


def test_the_command_line_says_the_warnings_before_the_run_and_once(tmp_path):
    folder = edited(tmp_path, "oscillator", drop=("mass.flange_a.v -> spring.flange_b.v",))
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", str(folder), "--local", "--stop", "0.01"],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.startswith("warning: spring.flange_b.v is not connected")
    assert "spring.flange_b.v" not in proc.stdout  # not repeated in the summary


@pytest.mark.slow
def test_the_command_line_lets_the_built_fmus_stand_in_only_when_asked(tmp_path):
    folder = edited(tmp_path, "oscillator", absolute=False, edit=lambda t: SOURCES.sub("", t))
    run = [sys.executable, "-m", "mechfmu.cli", "run", str(folder), "--stop", "0.01"]
    refused = subprocess.run(run, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert refused.returncode == 2 and "mass: FMU not found" in refused.stderr
    assert "--built-fmus" in refused.stderr  # the cure is named
    asked = subprocess.run(run + ["--built-fmus"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert asked.returncode == 0, asked.stderr
    assert "warning: source(s) not found, mechfmu's built FMUs used instead (built_fmus=True)" in asked.stderr
