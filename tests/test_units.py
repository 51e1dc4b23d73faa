"""Units in every built FMU's modelDescription.xml: declared types are the Modelica Standard Library 4 types
(``Modelica.Units.SI.*``, not MSL 3's), each with MSL's unit and quantity; every unit, display unit and declared type
a variable names is defined and consistent with it; display units convert by the right factors (1 mm = 0.001 m,
180 deg = pi rad); fmpy reads them; OpenModelica's OMSimulator (``MECHFMU_OMSIMULATOR``) accepts such an FMU."""
import math
import xml.etree.ElementTree as ET
import zipfile
from pathlib import Path

import pytest
from conftest import omsimulator_program
from fmpy import read_model_description
from mechfmu.components import COMPONENTS

from mechfmu.crosscheck.omsimulator import run_omsimulator

ROOT = Path(__file__).resolve().parent.parent
MSL4 = "Modelica.Units.SI."
#: MSL 4's Modelica.Units.SI types: name -> (final unit, quantity or None, default display unit or None)
MSL4_TYPES = {
    "Time": ("s", "Time", None), "Mass": ("kg", "Mass", None), "Position": ("m", "Length", None),
    "Length": ("m", "Length", None), "Velocity": ("m/s", "Velocity", None),
    "Acceleration": ("m/s2", "Acceleration", None), "Frequency": ("Hz", "Frequency", None),
    "Force": ("N", "Force", None), "TranslationalSpringConstant": ("N/m", "TranslationalSpringConstant", None),
    "TranslationalDampingConstant": ("N.s/m", "TranslationalDampingConstant", None),
    "Angle": ("rad", "Angle", "deg"), "AngularVelocity": ("rad/s", "AngularVelocity", None),
    "AngularAcceleration": ("rad/s2", "AngularAcceleration", None), "Torque": ("N.m", "Torque", None),
    "RotationalSpringConstant": ("N.m/rad", "RotationalSpringConstant", None),
    "RotationalDampingConstant": ("N.m.s/rad", "RotationalDampingConstant", None),
    "Inertia": ("kg.m2", "MomentOfInertia", None), "Power": ("W", "Power", None), "Energy": ("J", "Energy", None),
    "ModulusOfElasticity": ("Pa", None, None),
}
#: display units: (unit, display unit) -> how many display units one unit is, from their definitions
DISPLAY = {("m", "mm"): 1 / 0.001, ("rad", "deg"): 180 / math.pi, ("rad/s", "deg/s"): 180 / math.pi,
           ("rad/s", "rpm"): 60 / (2 * math.pi)}
BASE = ("kg", "m", "s", "A", "K", "mol", "cd", "rad")


def model_description(fmu: Path) -> ET.Element:
    with zipfile.ZipFile(fmu) as zf:
        return ET.fromstring(zf.read("modelDescription.xml"))


def units(root: ET.Element) -> dict[str, tuple[dict[str, int], dict[str, tuple[float, float]]]]:
    """Each unit: its BaseUnit exponents and its display units (name -> (factor, offset))."""
    found = {}
    for unit in root.iterfind("UnitDefinitions/Unit"):
        base = unit.find("BaseUnit")
        exponents = {k: int(v) for k, v in (base.attrib if base is not None else {}).items() if k in BASE}
        assert base is None or float(base.get("factor", "1")) == 1.0 and float(base.get("offset", "0")) == 0.0
        displays = {d.get("name"): (float(d.get("factor", "1")), float(d.get("offset", "0")))
                    for d in unit.iterfind("DisplayUnit")}
        assert unit.get("name") not in found
        found[unit.get("name")] = (exponents, displays)
    return found


@pytest.mark.parametrize("model", sorted(COMPONENTS))
def test_declared_types_are_msl4_and_units_consistent(fmus, model):
    root = model_description(fmus[model])
    text = ET.tostring(root, encoding="unicode")
    assert "Modelica.SI" + "units" not in text  # MSL 3's package
    defined = units(root)
    types = {}
    for simple in root.iterfind("TypeDefinitions/SimpleType"):
        name, real = simple.get("name"), simple.find("Real")
        assert name.startswith(MSL4) and name[len(MSL4):] in MSL4_TYPES, name
        unit, quantity, display = MSL4_TYPES[name[len(MSL4):]]
        assert (real.get("unit"), real.get("quantity"), real.get("displayUnit")) == (unit, quantity, display), name
        assert unit in defined and (display is None or display in defined[unit][1]), name
        types[name] = real
    for variable in root.iterfind("ModelVariables/ScalarVariable"):
        real = variable.find("Real")
        if real is None:
            continue
        declared = real.get("declaredType")
        unit = real.get("unit") or (types[declared].get("unit") if declared else None)
        name = variable.get("name")
        if declared is not None:
            assert declared in types and unit == types[declared].get("unit"), (name, declared, unit)
        if unit is not None:
            assert unit in defined, (name, unit)
            assert declared is not None or not any(t.get("unit") == unit for t in types.values()), (name, unit)
        display = real.get("displayUnit") or (types[declared].get("displayUnit") if declared else None)
        assert display is None or display in defined[unit][1], (name, display)


def test_display_units_convert_by_their_definitions(fmus):
    """In FMI 2.0 a value in a display unit is factor*value + offset: 1 mm is 0.001 m, 180 deg pi rad."""
    defined = units(model_description(fmus["RotationalSpringDamperExt"]))
    shown = {(unit, name): factor_offset for unit, (_, displays) in defined.items()
             for name, factor_offset in displays.items()}
    assert set(shown) == set(DISPLAY)
    for (unit, name), (factor, offset) in shown.items():
        assert offset == 0.0 and factor == pytest.approx(DISPLAY[unit, name], rel=1e-15), (unit, name)
    assert 1.0 / shown["m", "mm"][0] == 0.001  # 1 mm = 0.001 m
    assert 180.0 / shown["rad", "deg"][0] == pytest.approx(math.pi, rel=1e-15)
    assert 60.0 / shown["rad/s", "rpm"][0] == pytest.approx(2 * math.pi, rel=1e-15)  # 60 rpm = 1 rev/s
    assert (defined["m"][0], defined["rad"][0], defined["rad/s"][0]) == ({"m": 1}, {"rad": 1}, {"rad": 1, "s": -1})
    md = read_model_description(str(fmus["RotationalSpringDamperExt"]))  # as a tool reads it
    rad = next(u for u in md.unitDefinitions if u.name == "rad")
    assert [(d.name, d.factor) for d in rad.displayUnits] == [("deg", 180 / math.pi)]
    angle = next(t for t in md.typeDefinitions if t.name == MSL4 + "Angle")
    assert (angle.unit, angle.displayUnit) == ("rad", "deg")
    limit = next(v for v in md.modelVariables if v.name == "limitStopsUpper")
    assert limit.declaredType.name == MSL4 + "Angle"


def test_no_msl3_unit_names_are_left():
    """Neither code, docs nor scenarios name MSL 3's package (the test files are left out: this one names it)."""
    old = "Modelica.SI" + "units"
    found = [str(path.relative_to(ROOT)) for folder in ("mechfmu", "components", "docs", "scenarios")
             for path in (ROOT / folder).rglob("*") if path.suffix in (".py", ".md", ".ssd", ".c", ".h", ".xml")
             and "_build" not in path.parts and old in path.read_text(encoding="utf-8", errors="replace")]
    assert found == []


def test_omsimulator_accepts_the_units(fmus, tmp_path):
    """An FMU with display units and a display-unit default (Angle: deg) runs in OMSimulator."""
    program = omsimulator_program()
    run = run_omsimulator(program, fmus["RotationalSpringDamperExt"], tmp_path, ["--stopTime=0.01"], timeout=120)
    assert run.returncode == 0 and run.errors == [], run.output[-2000:]
    assert "time" in run.signals and len(run.signals["time"]) > 1
