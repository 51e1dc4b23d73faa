"""Connections that change their value: ``ssc:LinearTransformation`` (factor, offset) and unit conversion
between connection ends are applied in every coupling, and what cannot be applied is refused by name.

Independent expectations: a force wire times 2 is the same system as a spring-damper whose every
coefficient is doubled (scaling by 2 is exact in binary floating point, so the runs agree bit for bit);
an offset on the ground's position wire is a ground at that position; a signal in kN is the signal
times 1000 in N.
"""
import re
import time
from pathlib import Path

import numpy as np
import pytest
from test_ssp_constructs import oscillator, refused, with_child

from mechfmu.master.simulate import simulate
from mechfmu.ssp import write_scenario
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
DOUBLED = ("<ssv:Parameter name=\"stiffness\"><ssv:Real value=\"10000.0\"/></ssv:Parameter>",
           "<ssv:Parameter name=\"damping\"><ssv:Real value=\"160.0\"/></ssv:Parameter>")
ALGORITHMS = [("jacobi", {}), ("gauss-seidel", {}), ("linear-implicit", {}), ("fixed-point", {}),
              ("newton", {"coupling": "implicit"})]


def doubled_spring(text: str) -> str:
    text = text.replace('<ssv:Parameter name="stiffness"><ssv:Real value="5000.0"/></ssv:Parameter>', DOUBLED[0])
    return text.replace('<ssv:Parameter name="damping"><ssv:Real value="80.0"/></ssv:Parameter>', DOUBLED[1])


def mass_columns(result) -> dict[str, np.ndarray]:
    return {n: result.data[n] for n in result.data.dtype.names if n == "time" or n.startswith("mass.")}


@pytest.mark.parametrize("algorithm, options", ALGORITHMS)
@pytest.mark.slow
def test_a_force_wire_times_two_is_a_spring_damper_of_twice_the_coefficients(fmus, tmp_path, algorithm, options):
    """Fixed-step couplings agree bit for bit (linear-implicit through the tangents c, d and the force rate,
    each times the factor); the iterative ones converge on the source values (f, not 2f), so they agree to
    their tolerance (1e-10 relative per iteration: a few 1e-10 m over the run)."""
    transformed = oscillator(tmp_path, with_child('<ssc:LinearTransformation factor="2"/>'))
    stiffer = oscillator(tmp_path / "stiffer", doubled_spring)
    mine = simulate(transformed, algorithm, stop=0.2, local=True, **options)
    expected = simulate(stiffer, algorithm, stop=0.2, local=True, **options)
    assert mine.ok and expected.ok, (mine.message, expected.message)
    assert np.ptp(expected.data["mass.flange_a.s"]) > 1e-4  # the spring moves the mass
    for name, column in mass_columns(expected).items():
        if algorithm in ("fixed-point", "newton"):
            np.testing.assert_allclose(mine.data[name], column, rtol=0, atol=1e-8 * (1 + np.ptp(column)))
        else:
            assert np.array_equal(mine.data[name], column), name


def test_through_the_fmus_and_with_the_energy_audit(fmus, tmp_path):
    """The FMU path transfers through the same plan; the audit compares the body's force with what the wire
    delivers (2·f), so the transformed scenario injects what the stiffer one does."""
    transformed = oscillator(tmp_path, with_child('<ssc:LinearTransformation factor="2"/>'))
    stiffer = oscillator(tmp_path / "stiffer", doubled_spring)
    mine = simulate(transformed, "jacobi", stop=0.1, energy_audit="on")
    expected = simulate(stiffer, "jacobi", stop=0.1, energy_audit="on")
    for name, column in mass_columns(expected).items():
        assert np.array_equal(mine.data[name], column), name
    assert list(mine.energy.values()) == list(expected.energy.values())
    assert abs(next(iter(expected.energy.values()))["injected"]) > 0


def test_an_offset_on_the_grounds_position_wire_is_a_ground_there(fmus, tmp_path):
    ground_wire = ('<ssd:Connection startElement="ground" startConnector="flange.s" endElement="spring" '
                   'endConnector="flange_a.s"/>')
    moved = oscillator(tmp_path, lambda t: t.replace(ground_wire, ground_wire[:-2] + '><ssc:LinearTransformation '
                                                     'offset="0.01"/></ssd:Connection>'))
    there = oscillator(tmp_path / "there", lambda t: t.replace('<ssv:Parameter name="s0"><ssv:Real value="0.0"/>',
                                                               '<ssv:Parameter name="s0"><ssv:Real value="0.01"/>'))
    for algorithm in ("jacobi", "linear-implicit"):
        mine, expected = (simulate(f, algorithm, stop=0.2, local=True) for f in (moved, there))
        for name, column in mass_columns(expected).items():
            assert np.array_equal(mine.data[name], column), (algorithm, name)
    assert abs(expected.final["mass.flange_a.s"] - simulate(ROOT / "scenarios/oscillator", stop=0.2, local=True)
               .final["mass.flange_a.s"]) > 1e-3  # the offset moves the mass


KILONEWTON = '<ssc:Unit name="kN"><ssc:BaseUnit kg="1" m="1" s="-2" factor="1000"/></ssc:Unit>'


def define_units(folder: Path, *units: str) -> None:
    """Add ``units`` to the scenario's ``ssd:Units`` (made after its system, as the schema orders, if none)."""
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text()
    if "</ssd:Units>" in text:
        ssd.write_text(text.replace("</ssd:Units>", f"{''.join(units)}</ssd:Units>", 1))
    else:
        ssd.write_text(text.replace("</ssd:System>", f"</ssd:System><ssd:Units>{''.join(units)}</ssd:Units>", 1))


def force_on_mass(tmp_path: Path, amplitude: float, unit: str | None = None, name: str = "signal") -> Path:
    """A sine force (Sine -> Force) on a free mass; ``unit``: declared on the sine's output connector (kN
    defined in the SSD's units)."""
    folder = tmp_path / name
    write_scenario(folder, name, [("sine", "Sine", {"amplitude": amplitude, "f": 3.0}), ("force", "Force", {}),
                                  ("mass", "Mass", {"m": 2.0})],
                   ["sine.y -> force.f", "force.flange <-> mass.flange_a"], stop_time=0.3, step_size=1e-3,
                   fmu_folder=(ROOT / "fmus").as_posix())
    if unit is not None:
        ssd = folder / "SystemStructure.ssd"
        text = ssd.read_text()
        declared = re.sub(r'(<ssd:Connector name="y" kind="output">\s*)<ssc:Real\s*/>', rf'\1<ssc:Real unit="{unit}"/>',
                          text)
        assert declared != text
        ssd.write_text(declared)
        define_units(folder, KILONEWTON)
    return folder


@pytest.mark.parametrize("algorithm", ["jacobi", "linear-implicit"])
def test_a_signal_in_kN_drives_a_force_in_N_times_1000(fmus, tmp_path, algorithm):
    """The conversion factor is exact (1000); the force differs from the sine of amplitude 1000 by the rounding
    of one product (and its rate, which linear-implicit integrates, likewise): relative 1e-15."""
    converted = force_on_mass(tmp_path, 1.0, "kN")
    assert [(c.factor, c.offset) for c in load_scenario(converted).connections if c.source == "sine"] == [(1000.0, 0)]
    mine = simulate(converted, algorithm, local=True)
    expected = simulate(force_on_mass(tmp_path, 1000.0, name="plain"), algorithm, local=True)
    for name, column in mass_columns(expected).items():
        np.testing.assert_allclose(mine.data[name], column, rtol=1e-13, atol=1e-15 * np.ptp(column))
    assert np.ptp(expected.data["mass.flange_a.s"]) > 1e-2


def test_a_unit_the_ssd_defines_converts_exactly(fmus, tmp_path):
    folder = force_on_mass(tmp_path, 1.0, "lbf")
    define_units(folder, '<ssc:Unit name="lbf"><ssc:BaseUnit kg="1" m="1" s="-2" factor="4.4482216152605"/></ssc:Unit>')
    (connection,) = [c for c in load_scenario(folder).connections if c.source == "sine"]
    assert (connection.factor, connection.offset) == (4.4482216152605, 0.0)


def suppressing(folder: Path, value: str) -> Path:
    """``folder``'s sine -> force connection with ``suppressUnitConversion="value"``."""
    ssd = folder / "SystemStructure.ssd"
    text = re.sub(r'<ssd:Connection (startElement="sine")', rf'<ssd:Connection suppressUnitConversion="{value}" \1',
                  ssd.read_text())
    assert 'suppressUnitConversion' in text
    ssd.write_text(text)
    return folder


@pytest.mark.parametrize("value", ["true", "1"])
def test_suppressed_unit_conversion_delivers_the_number_unconverted(fmus, tmp_path, value):
    """SSP's suppressUnitConversion: 1 kN of the sine arrives at the force as 1 (N), not 1000; the force
    equals the plain (unit-free) sine of amplitude 1, bit for bit."""
    folder = suppressing(force_on_mass(tmp_path, 1.0, "kN"), value)
    assert [(c.factor, c.offset) for c in load_scenario(folder).connections if c.source == "sine"] == [(1.0, 0.0)]
    mine = simulate(folder, "jacobi", local=True)
    expected = simulate(force_on_mass(tmp_path, 1.0, name="plain"), "jacobi", local=True)
    for name, column in mass_columns(expected).items():
        np.testing.assert_array_equal(mine.data[name], column)
    assert [(c.factor, c.offset) for c in load_scenario(suppressing(force_on_mass(tmp_path, 1.0, "kN", "off"),
                                                                   "false")).connections
            if c.source == "sine"] == [(1000.0, 0.0)]


def test_a_suppress_that_is_not_a_boolean_is_refused(fmus, tmp_path):
    refused(suppressing(force_on_mass(tmp_path, 1.0, "kN"), "yes"),
            "connection sine.y -> force.f: suppressUnitConversion = 'yes' is not an xs:boolean")


def test_a_unit_defined_twice_is_refused(fmus, tmp_path):
    """Two definitions of kN: the last one was taken silently."""
    folder = force_on_mass(tmp_path, 1.0, "kN")
    define_units(folder, KILONEWTON.replace('factor="1000"', 'factor="10"'))
    with pytest.raises(ScenarioError, match="unit 'kN' is defined twice"):
        load_scenario(folder)
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace('</ssc:Unit><ssc:Unit name="kN">', '</ssc:Unit></ssd:Units><ssd:Units>'
                                           '<ssc:Unit name="kN">'))  # a second ssd:Units
    with pytest.raises(ScenarioError, match=r"ssd:Units appears more than once"):
        load_scenario(folder)


@pytest.mark.parametrize("unit, problem", [
    ("kg", "connection sine.y -> force.f: unit mismatch kg -> N (different dimensions)"),
    ("furlong", "connection sine.y -> force.f: unit 'furlong' is not defined"),
])
def test_ends_that_cannot_convert_are_refused(fmus, tmp_path, unit, problem):
    refused(force_on_mass(tmp_path, 1.0, unit), problem)


def test_a_transformation_between_ends_in_different_units_is_refused(fmus, tmp_path):
    folder = force_on_mass(tmp_path, 1.0, "kN")
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(re.sub(r'(<ssd:Connection startElement="sine"[^>]*?)/>',
                          r'\1><ssc:LinearTransformation factor="2"/></ssd:Connection>', ssd.read_text()))
    refused(folder, "connection sine.y -> force.f: its ends are in different units (kN -> N) and it has a "
                    "ssc:LinearTransformation")


@pytest.mark.parametrize("attributes, problem", [
    ('factor="0"', "factor = '0' is 0 as a double and would deliver the offset alone"),
    ('factor="1e-330"', "factor = '1e-330' is 0 as a double and would deliver the offset alone"),
    ('factor="-2e-324"', "factor = '-2e-324' is 0 as a double"),
    ('factor="two"', "factor = 'two' is not a finite xs:double number"),
    ('offset="1e400"', "offset = '1e400' is not a finite xs:double number"),
    ('offset="NaN"', "offset = 'NaN' is not a finite xs:double number"),
])
def test_a_transformation_with_a_bad_number_is_refused_by_name(fmus, tmp_path, attributes, problem):
    folder = oscillator(tmp_path, with_child(f"<ssc:LinearTransformation {attributes}/>"))
    refused(folder, f"connection spring.flange_b.f -> mass.flange_a.f: ssc:LinearTransformation {problem}")


def test_a_huge_exponent_is_refused_in_bounded_time(fmus, tmp_path):
    folder = oscillator(tmp_path, with_child('<ssc:LinearTransformation factor="1e999999999"/>'))
    started = time.perf_counter()
    with pytest.raises(ScenarioError, match="factor = '1e999999999'"):
        load_scenario(folder, local=True)
    assert time.perf_counter() - started < 5  # unbounded exact arithmetic took minutes to never


def test_two_transformations_on_one_connection_are_refused(fmus, tmp_path):
    folder = oscillator(tmp_path, with_child('<ssc:LinearTransformation factor="2"/>'
                                             '<ssc:LinearTransformation factor="3"/>'))
    refused(folder, "ssc:LinearTransformation (factor=2) is not applied by mechfmu")


def test_transformations_compose_through_a_nested_systems_connector(fmus, tmp_path):
    """mass.s -> (×2) body connector -> (×3, +0.5) spring: one connection of factor 6, offset 0.5."""
    text = (ROOT / "scenarios/oscillator/SystemStructure.ssd").read_text()
    text = re.sub(r'source="(\.\./)+fmus/', f'source="{(ROOT / "fmus").as_posix()}/', text)
    spring = re.search(r'<ssd:Component name="spring".*?</ssd:Component>', text, re.S).group(0)
    body = ('<ssd:System name="body"><ssd:Connectors><ssd:Connector name="s" kind="input"><ssc:Real/>'
            '</ssd:Connector></ssd:Connectors><ssd:Elements>' + spring + '</ssd:Elements><ssd:Connections>'
            '<ssd:Connection endElement="spring" endConnector="flange_b.s" startConnector="s">'
            '<ssc:LinearTransformation factor="3" offset="0.5"/></ssd:Connection></ssd:Connections></ssd:System>')
    text = text.replace(
        '<ssd:Connection startElement="mass" startConnector="flange_a.s" endElement="spring" '
        'endConnector="flange_b.s"/>',
        '<ssd:Connection startElement="mass" startConnector="flange_a.s" endElement="body" endConnector="s">'
        '<ssc:LinearTransformation factor="2"/></ssd:Connection>')
    text = re.sub(r'(startElement|endElement)="spring"', r'\1="body/spring"', text).replace(spring, body)
    (tmp_path / "SystemStructure.ssd").write_text(text)
    (con,) = [c for c in load_scenario(tmp_path, local=True).connections if c.target_variable == "flange_b.s"]
    assert (str(con), con.factor, con.offset) == ("mass.flange_a.s -> body/spring.flange_b.s", 6.0, 0.5)


@pytest.mark.slow
def test_libcosim_applies_the_same_transformation(fmus, tmp_path):
    """libcosim reads ``ssc:LinearTransformation`` from the exported archive: its run equals our strict Jacobi
    (the same algorithm) to round-off, while the transformation moves the mass by millimetres."""
    pytest.importorskip("libcosimpy")
    from mechfmu.crosscheck.tools import crosscheck

    folder = oscillator(tmp_path, with_child('<ssc:LinearTransformation factor="2" offset="0.5"/>'))
    comparisons = {c.pair: c for c in crosscheck(folder, 300)}
    assert comparisons["strict Jacobi vs libcosim"].difference < 1e-12
    assert all(c.passed for c in comparisons.values())
    plain = simulate(ROOT / "scenarios/oscillator", stop=0.3, local=True).final["mass.flange_a.s"]
    assert abs(simulate(folder, stop=0.3, local=True).final["mass.flange_a.s"] - plain) > 1e-4


@pytest.mark.slow
def test_an_exported_archive_carries_a_unit_conversion_as_a_transformation(fmus, tmp_path):
    """export-ssp writes the conversion as the connection's ssc:LinearTransformation and drops the connector's
    unit: libcosim, which applies transformations but not units, then agrees with our strict Jacobi (before: 1.0
    of the range apart), and the archive runs in mechfmu as the scenario does, bit for bit."""
    from mechfmu.ssp import export_ssp

    folder = force_on_mass(tmp_path, 1.0, "kN")
    archive = export_ssp(folder, tmp_path / "signal.ssp")
    (con,) = [c for c in load_scenario(archive).connections if c.source == "sine" and c.source_variable == "y"]
    assert (con.factor, con.offset) == (1000.0, 0.0)
    mine, exported = simulate(folder, stop=0.05), simulate(archive, stop=0.05)
    assert all(np.array_equal(mine.data[n], exported.data[n]) for n in mine.data.dtype.names)
    pytest.importorskip("libcosimpy")
    from mechfmu.crosscheck.tools import crosscheck
    assert {c.pair: c for c in crosscheck(folder, 200)}["strict Jacobi vs libcosim"].difference < 1e-12
