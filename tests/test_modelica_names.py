"""Our components by the Modelica Standard Library 4 names a Modelica user looks for: each equivalence names real
parameters, its law and signs are MSL's (CoordinateSpringDamper's ``offset`` is MSL's ``s_rel0``; the worked
example's 80 N preload), ``mechfmu info`` answers to MSL names and lists the names it knows, and the component
reference and every FMU's documentation show the same mapping."""
import html
import math
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from mechfmu.components import COMPONENTS, CoordinateSpringDamper, CoordinateSpringDamperExt, Fixed, Mass

from mechfmu.fmu.modelica_names import locate, lookup, modelica_names

ROOT = Path(__file__).resolve().parent.parent
TRANSLATIONAL = "Modelica.Mechanics.Translational.Components."
#: what a Modelica user looks for -> our model and MSL parameter -> ours
EXPECTED = {
    "Spring": ("CoordinateSpringDamper", {"c": "stiffness", "s_rel0": "offset"}),
    "Damper": ("CoordinateSpringDamper", {"d": "damping"}),
    "SpringDamper": ("CoordinateSpringDamper", {"c": "stiffness", "d": "damping", "s_rel0": "offset"}),
    "ElastoGap": ("ElastoGap", {"c": "c", "d": "d", "s_rel0": "s_rel0", "n": "n", "f_ref": "f_ref", "s_ref": "s_ref"}),
    "MassWithStopAndFriction": ("MassWithStopAndFriction", {
        "smin": "smin", "smax": "smax", "F_Coulomb": "F_Coulomb", "F_Stribeck": "F_Stribeck", "F_prop": "F_prop",
        "fexp": "fexp", "m": "m", "L": "L"}),
}


def cli(*argv: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "mechfmu.cli", *argv], capture_output=True, text=True, cwd=ROOT,
                          timeout=300)


ROTATIONAL = "Modelica.Mechanics.Rotational.Components."
#: short names of more than one MSL class: (class, our model) each
SHARED = {"SpringDamper": ((ROTATIONAL + "SpringDamper", "RotationalSpringDamper"),
                           (TRANSLATIONAL + "SpringDamper", "CoordinateSpringDamper"))}


@pytest.mark.parametrize("short", sorted(EXPECTED))
def test_the_msl_classes_map_to_our_components(short):
    model, mapping = EXPECTED[short]
    names = ("Translational.Components." + short, TRANSLATIONAL + short) if short in SHARED else ()
    for name in names or (short, TRANSLATIONAL + short, short.lower()):
        found = lookup(name)
        assert found is not None, name
        assert found[0] == model and found[1].name == TRANSLATIONAL + short
        assert mapping.items() <= dict(found[1].parameters).items(), name
    assert lookup("Stop") == lookup("Modelica.Mechanics.Translational.Stop")  # MSL 2's: the Ext composition
    assert lookup("Stop")[0] == "CoordinateSpringDamperExt"


@pytest.mark.parametrize("short", sorted(SHARED))
def test_a_short_name_of_several_msl_classes_names_them_all(short):
    """MSL's Translational and Rotational SpringDamper: the short name is refused, naming both and how to pick one;
    each from its package down is found."""
    assert lookup(short) is None
    with pytest.raises(FileNotFoundError) as error:
        locate(short, ROOT / "fmus")
    for full, model in SHARED[short]:
        assert f"{full} (mechfmu's {model})" in str(error.value)
        assert lookup(".".join(full.split(".")[-3:]))[0] == model
    assert "name one from its package down, e.g. " in str(error.value)


def test_every_equivalence_names_real_parameters():
    """Ours are parameters of the component (``Mass.x``: of the Mass the equivalent needs); MSL's side is
    an MSL parameter or an expression in them."""
    for model, cls in COMPONENTS.items():
        own = {p.name for p in cls.parameters}
        for equivalent in cls.modelica:
            assert equivalent.name.startswith("Modelica.Mechanics."), (model, equivalent.name)
            for ours in [o for _, o in equivalent.parameters] + [o for o, _ in equivalent.settings]:
                where, _, name = ours.rpartition(".")
                assert name in ({p.name for p in COMPONENTS[where].parameters} if where else own), (model, ours)
            assert equivalent.line() == (f"Modelica equivalent: {equivalent.name} ({equivalent.mapping()})")
    assert "Spring" in modelica_names() and "Fixed" not in modelica_names()  # our Fixed keeps its name


def test_offset_is_msl_s_rel0_with_the_same_sign():
    """MSL SpringDamper: s_rel = flange_b.s - flange_a.s, f = c*(s_rel - s_rel0) + d*v_rel, flange_b.f = +f."""
    c, d, s_rel0 = 120.0, 3.0, 0.25
    spring = CoordinateSpringDamper("sd")
    for name, value in {"stiffness": c, "damping": d, "offset": s_rel0}.items():
        spring.set(name, value)
    spring.initialize()
    for s_a, s_b, v_a, v_b in ((0.0, 1.0, 0.5, -0.5), (2.0, 1.5, 0.0, 1.0), (0.25, 0.5, 0.0, 0.0)):
        for name, value in {"flange_a.s": s_a, "flange_b.s": s_b, "flange_a.v": v_a, "flange_b.v": v_b}.items():
            spring.set(name, value)
        f = c * ((s_b - s_a) - s_rel0) + d * (v_b - v_a)
        assert spring.get("f") == f and spring.get("flange_b.f") == f and spring.get("flange_a.f") == -f
    assert spring.get("f") == 0.0  # relaxed where s_rel = offset = s_rel0


@pytest.mark.parametrize("offset, force", [(0.04, 0.0), (-0.04, 80.0), (0.09, -50.0)])
def test_the_worked_example_of_the_offset_sign(offset, force):
    """The docstring's example: housing at 0 on flange_a, a Mass (L = 0.1 m, s = 0.09 m) whose flange_a is on
    flange_b, 1000 N/m: offset 0.04 m is relaxed, -0.04 m an 80 N tension preload pulling the mass back."""
    housing, mass, spring = Fixed("housing"), Mass("mass"), CoordinateSpringDamper("spring")
    for component, values in ((housing, {"s0": 0.0}), (mass, {"m": 2.0, "L": 0.1, "s_start": 0.09}),
                              (spring, {"stiffness": 1000.0, "offset": offset})):
        for name, value in values.items():
            component.set(name, value)
        component.initialize()
    spring.set("flange_a.s", housing.get("flange.s"))
    spring.set("flange_b.s", mass.get("flange_a.s"))
    assert spring.get("s_rel") == pytest.approx(0.04, abs=1e-15)
    assert spring.get("f") == pytest.approx(force, abs=1e-10)
    mass.set("flange_a.f", spring.get("flange_b.f"))
    assert mass.get("a") == pytest.approx(-force / 2.0, abs=1e-10)  # +80 N: toward the housing


def test_mass_with_stop_and_friction_parameters_as_mapped():
    """MSL's sliding friction F_prop*v + F_Coulomb + F_Stribeck*exp(-fexp*|v|) and its stop smax - L/2 for the
    centre, with the mapping (MSL's Examples.Friction stop2: F_Coulomb 3, F_Stribeck 5, F_prop 1, fexp 2, L 1)."""
    F_Coulomb, F_Stribeck, F_prop, fexp, L, smax = 3.0, 5.0, 1.0, 2.0, 1.0, 0.9
    ext = CoordinateSpringDamperExt("stop")
    for name, value in {"fDynamicFriction": F_Coulomb, "fStaticFrictionOffset": F_Stribeck, "fViscousFriction": F_prop,
                        "exponentialDecayStatic": 1 / fexp, "frictionProportionalZone": 0.0, "useLimitStops": True,
                        "stickingStiffness": 1e6, "limitStopsUpper": smax - L, "limitStopsLower": -0.9,
                        "limitStopsStiffness": 1e6, "frictionMode_start": 1.0}.items():
        ext.set(name, value)
    ext.initialize()
    s = smax - L / 2  # the centre with the right end at smax: q = s - L/2 is at the upper stop
    for name, value in {"flange_b.s": s - L / 2, "flange_b.v": 0.5}.items():
        ext.set(name, value)
    assert ext.get("f_friction") == pytest.approx(F_prop * 0.5 + F_Coulomb + F_Stribeck * math.exp(-fexp * 0.5),
                                                  rel=1e-15)
    assert ext.get("indicator.upperStop") == pytest.approx(0.0, abs=1e-15)


@pytest.mark.slow
def test_info_answers_to_msl_names():
    proc = cli("info", "Spring")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == (f"Spring ({TRANSLATIONAL}Spring) is mechfmu's CoordinateSpringDamper (c = stiffness, "
                        "s_rel0 = offset; set damping = 0)")
    assert lines[1].startswith("CoordinateSpringDamper: ")
    assert (f"Modelica equivalent: {TRANSLATIONAL}SpringDamper (c = stiffness, d = damping, s_rel0 = offset)"
            in lines)
    assert any(re.match(r"\s+parameter\s+Real\s+offset = 0(\.0)? m\s", line) for line in lines)
    stop = cli("info", "Stop")
    assert stop.returncode == 0 and "is mechfmu's CoordinateSpringDamperExt" in stop.stdout.splitlines()[0]
    assert f"Modelica equivalent: {TRANSLATIONAL}MassWithStopAndFriction (" in stop.stdout
    gap = cli("info", "ElastoGap")  # our name and MSL's: our FMU, with its equivalent
    assert gap.returncode == 0 and gap.stdout.startswith("ElastoGap: ")
    assert f"Modelica equivalent: {TRANSLATIONAL}ElastoGap (c = c, d = d, s_rel0 = s_rel0" in gap.stdout


def test_info_on_an_unknown_name_lists_the_known_names():
    proc = cli("info", "Sprung")
    assert proc.returncode == 2 and proc.stderr.startswith("mechfmu info: error: no FMU at Sprung; known names: ")
    for name in [*COMPONENTS, "Spring", "Damper", "SpringDamper", "MassWithStopAndFriction", "Stop"]:
        assert re.search(rf"\b{re.escape(name)}\b", proc.stderr), name
    with pytest.raises(FileNotFoundError, match="known names: Accelerate, "):
        locate("Sprung", ROOT / "fmus")


def test_reference_docs_and_fmu_pages_show_the_mapping(fmus):
    page = (ROOT / "docs" / "component-reference.md").read_text(encoding="utf-8")
    for model, cls in COMPONENTS.items():
        with zipfile.ZipFile(fmus[model]) as zf:
            documentation = zf.read("documentation/index.html").decode("utf-8")
        assert "<h2>Modelica equivalent</h2>" in documentation
        for equivalent in cls.modelica:
            assert f"| `{equivalent.name}` | `{model}` | `{equivalent.mapping()}` |" in page, equivalent.name
            assert html.escape(equivalent.line()) in documentation and html.escape(equivalent.note) in documentation
    assert "`offset = −0.04` m" in page and "80 N tension preload" in page  # the worked example of offset's sign


@pytest.mark.parametrize("name, model", [
    ("Translational.Sources.Position", "Position"), ("Modelica.Mechanics.Translational.Sources.Speed", "Speed"),
    ("Sources.Accelerate", "Accelerate"), ("Modelica.Blocks.Sources.CombiTimeTable", "Table"),
    ("CombiTimeTable", "Table"), ("Rotational.Sources.Torque", "Torque"), ("Blocks.Sources.Sine", "Sine"),
])
def test_msl_sources_are_found_by_their_names_from_any_package_down(name, model):
    """A component that is an MSL class (its ``source`` names it) answers to that class's name, in full or from any
    package down, as the components with a mapping do."""
    found = lookup(name)
    assert found is not None and found[0] == model, name
    assert found[1].name.endswith(name) and found[1].name in COMPONENTS[model].source
    assert lookup("Components.Spring") == lookup("Spring") and lookup("Sources") is None  # ends a class name only
