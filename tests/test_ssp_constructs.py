"""SSD constructs the loader does not implement are refused by name (they used to be ignored: a run "ok"
with a factor, a unit or whole components silently lost); what changes nothing is still accepted. The
constructs it applies (linear transformations, unit conversion): tests/test_connection_maps.py."""
import re
from pathlib import Path

import numpy as np
import pytest

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
SPRING_TO_MASS = ('<ssd:Connection startElement="spring" startConnector="flange_b.f" endElement="mass" '
                  'endConnector="flange_a.f"/>')


def oscillator(tmp_path: Path, edit) -> Path:
    """A copy of the oscillator (sources absolute) with ``edit`` applied to its SSD text."""
    folder = tmp_path / "oscillator"
    folder.mkdir(parents=True)
    text = (ROOT / "scenarios/oscillator/SystemStructure.ssd").read_text()
    text = re.sub(r'source="(\.\./)+fmus/', f'source="{(ROOT / "fmus").as_posix()}/', text)
    edited = edit(text)
    assert edited != text, "the edit must change the scenario"
    (folder / "SystemStructure.ssd").write_text(edited)
    return folder


def with_child(child: str):
    return lambda text: text.replace(SPRING_TO_MASS, SPRING_TO_MASS[:-2] + f">{child}</ssd:Connection>")


def refused(folder: Path, *fragments: str) -> None:
    for local in (True, False):
        with pytest.raises(ScenarioError) as error:
            load_scenario(folder, local=local)
        text = "\n".join(error.value.problems)
        assert all(f in text for f in fragments), text


@pytest.mark.parametrize("child", [
    '<ssc:MapTransformation><ssc:MapEntry source="1" target="2"/></ssc:MapTransformation>',
    '<ssc:BooleanMappingTransformation><ssc:MapEntry source="true" target="false"/>'
    '</ssc:BooleanMappingTransformation>',
])
def test_map_transformations_are_refused(fmus, tmp_path, child):
    folder = oscillator(tmp_path, with_child(child))
    name = re.match(r"<(ssc:\w+)", child).group(1)
    refused(folder, f"connection spring.flange_b.f -> mass.flange_a.f: {name} is not applied by mechfmu")


def test_the_components_of_a_nested_system_are_read_by_their_path(fmus, tmp_path):
    nested = ('<ssd:System name="sub"><ssd:Elements><ssd:Component name="extra" source="x.fmu"/>'
              '<ssd:Component name="more" source="y.fmu"/></ssd:Elements></ssd:System>\n      </ssd:Elements>')
    folder = oscillator(tmp_path, lambda t: t.replace("</ssd:Elements>", nested, 1))
    with pytest.raises(ScenarioError) as error:
        load_scenario(folder)
    assert "sub/extra: FMU not found" in str(error.value) and "sub/more: FMU not found" in str(error.value)
    assert "nested ssd:System" not in str(error.value)


def test_a_component_that_is_a_system_package_is_refused(fmus, tmp_path):
    package = '<ssd:Component name="sub" type="application/x-ssp-package" source="sub.ssp"/>\n      </ssd:Elements>'
    folder = oscillator(tmp_path, lambda t: t.replace("</ssd:Elements>", package, 1))
    refused(folder, "component 'sub' is a system (application/x-ssp-package, 'sub.ssp'), not an FMU")


def test_a_connector_in_another_unit_than_its_variable_is_refused(fmus, tmp_path):
    """The FMU's values are in m whatever its connector declares: mm there is a mistake, not a conversion."""
    folder = oscillator(tmp_path, lambda t: t.replace(
        '<ssd:Connector name="flange_a.s" kind="input"><ssc:Real/>',
        '<ssd:Connector name="flange_a.s" kind="input"><ssc:Real unit="mm"/>', 1))
    refused(folder, "spring: connector 'flange_a.s' is declared in 'mm', but the variable is in 'm' (the FMU's "
                    "values are in 'm' whatever the connector says): declare unit='m' or no unit")


def test_a_connector_declared_with_another_type_is_refused(fmus, tmp_path):
    folder = oscillator(tmp_path, lambda t: t.replace(
        '<ssd:Connector name="flange_a.s" kind="input"><ssc:Real/>',
        '<ssd:Connector name="flange_a.s" kind="input"><ssc:Integer/>', 1))
    refused(folder, "spring: connector 'flange_a.s' is declared ssc:Integer, but the variable is a Real")


def test_what_changes_nothing_is_accepted_and_runs_as_before(fmus, tmp_path):
    """A connector declared in its variable's own unit and a connection's geometry change no value."""
    folder = oscillator(tmp_path, lambda t: with_child('<ssd:ConnectionGeometry pointsX="0 1" pointsY="0 1"/>')(
        t.replace('<ssd:Connector name="flange_a.s" kind="input"><ssc:Real/>',
                  '<ssd:Connector name="flange_a.s" kind="input"><ssc:Real unit="m"/>', 1)))
    mine = simulate(folder, stop=0.05, local=True)
    shipped = simulate(ROOT / "scenarios/oscillator", stop=0.05, local=True)
    assert mine.ok and all(np.array_equal(mine.data[n], shipped.data[n]) for n in shipped.data.dtype.names)


def test_a_connector_declared_twice_is_refused(fmus, tmp_path):
    declared = '<ssd:Connector name="flange_a.f" kind="input"><ssc:Real/></ssd:Connector>'
    folder = oscillator(tmp_path, lambda t: t.replace(declared, declared + declared, 1))
    refused(folder, "component 'mass': ssd:Connector 'flange_a.f' declared twice; declare each once")
