"""Nested SSP systems are flattened: their components run as components named by their path (``body/mass``),
connections through a system's connectors join the producing output to every consuming input. FMU and
parameter sources are URI references: ``%XX`` is decoded, ``file:`` URIs are confined like paths, other
schemes are refused."""
import re
from pathlib import Path

import numpy as np
import pytest

from mechfmu.master.simulate import simulate
from mechfmu.ssp.overrides import parse_assignments
from mechfmu.ssp.scenario import Connection, ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
FLAT = ROOT / "scenarios/oscillator/SystemStructure.ssd"
GROUND_TO_SPRING = ('<ssd:Connection startElement="ground" startConnector="flange.{0}" endElement="spring" '
                    'endConnector="flange_a.{0}"/>')


def block(text: str, name: str) -> str:
    """The ``ssd:Component`` element ``name`` of the SSD ``text``, sources made absolute."""
    found = re.search(rf'<ssd:Component name="{name}".*?</ssd:Component>', text, re.S)
    assert found is not None
    return re.sub(r'source="(\.\./)+fmus/', f'source="{(ROOT / "fmus").as_posix()}/', found.group(0))


def connection(start: str, start_connector: str, end: str, end_connector: str) -> str:
    return (f'<ssd:Connection startElement="{start}" startConnector="{start_connector}" endElement="{end}" '
            f'endConnector="{end_connector}"/>')


def connector(name: str, kind: str) -> str:
    return f'<ssd:Connector name="{name}" kind="{kind}"><ssc:Real/></ssd:Connector>'


def system(name: str, connectors: list[str], elements: list[str], connections: list[str]) -> str:
    return (f'<ssd:System name="{name}"><ssd:Connectors>{"".join(connectors)}</ssd:Connectors>'
            f'<ssd:Elements>{"".join(elements)}</ssd:Elements>'
            f'<ssd:Connections>{"".join(connections)}</ssd:Connections></ssd:System>')


def scenario(tmp_path: Path, elements: list[str], connections: list[str], name: str = "nested") -> Path:
    """The oscillator's SSD with its top system's elements and connections replaced."""
    text = FLAT.read_text()
    text = re.sub(r"<ssd:Connections>.*</ssd:Connections>",
                  lambda _: f"<ssd:Connections>{''.join(connections)}</ssd:Connections>", text, flags=re.S)
    text = re.sub(r"<ssd:Elements>.*</ssd:Elements>", lambda _: f"<ssd:Elements>{''.join(elements)}</ssd:Elements>",
                  text, flags=re.S)
    folder = tmp_path / name
    folder.mkdir()
    (folder / "SystemStructure.ssd").write_text(text)
    return folder


def body_system(tmp_path: Path, spring_extra: str = "") -> Path:
    """The oscillator with mass and spring inside the system ``body``, fed by the ground through the body's
    connectors ``ground.s`` and ``ground.v``."""
    text = FLAT.read_text()
    inner = [connection("mass", "flange_a.s", "spring", "flange_b.s"),
             connection("mass", "flange_a.v", "spring", "flange_b.v"),
             connection("spring", "flange_b.f", "mass", "flange_a.f"),
             connection("", "ground.s", "spring", "flange_a.s"), connection("", "ground.v", "spring", "flange_a.v")]
    body = system("body", [connector("ground.s", "input"), connector("ground.v", "input")],
                  [block(text, "spring"), block(text, "mass"), spring_extra], inner + ([
                      connection("", "ground.s", "spring2", "flange_a.s"),
                      connection("", "ground.v", "spring2", "flange_a.v"),
                      connection("mass", "flange_a.s", "spring2", "flange_b.s"),
                      connection("mass", "flange_a.v", "spring2", "flange_b.v")] if spring_extra else []))
    return scenario(tmp_path, [block(text, "ground"), body],
                    [connection("ground", "flange.s", "body", "ground.s"),
                     connection("ground", "flange.v", "body", "ground.v")])


def flat_copy(tmp_path: Path) -> Path:
    """The flat oscillator, sources absolute, in a folder of its own."""
    folder = tmp_path / "flat"
    folder.mkdir()
    text = re.sub(r'source="(\.\./)+fmus/', f'source="{(ROOT / "fmus").as_posix()}/', FLAT.read_text())
    (folder / "SystemStructure.ssd").write_text(text)
    return folder


def renamed(data: np.ndarray, names: dict[str, str]) -> dict[str, np.ndarray]:
    """The columns of ``data`` by name, component names replaced as ``names`` says."""
    columns = {}
    for column in data.dtype.names:
        component, dot, variable = column.partition(".")
        columns[names.get(component, component) + dot + variable] = data[column]
    return columns


def same_columns(nested: np.ndarray, flat: np.ndarray, names: dict[str, str]) -> None:
    """The columns of ``nested`` are bit for bit those of ``flat``, the flat components renamed."""
    expected = renamed(flat, names)
    got = {column: nested[column] for column in nested.dtype.names}
    assert set(got) == set(expected)
    for column, values in expected.items():
        assert np.array_equal(got[column], values, equal_nan=True), column


def refused(tmp_path: Path, old: str, new: str, fragment: str, modes: tuple[bool, ...] = (True,)) -> None:
    """The nested oscillator with ``old`` replaced by ``new`` in its SSD is refused, the message holding
    ``fragment`` (loaded in-process and/or against the FMUs: ``modes`` of ``local``)."""
    folder = body_system(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text()
    assert old in text
    ssd.write_text(text.replace(old, new, 1))
    for local in modes:
        with pytest.raises(ScenarioError) as error:
            load_scenario(folder, local=local)
        assert fragment in str(error.value), str(error.value)


@pytest.fixture(scope="module")
def flat_result():
    result = simulate(ROOT / "scenarios/oscillator")
    assert result.ok, result.message
    return result


def test_a_nested_oscillator_runs_bit_identical_to_the_flat_one(tmp_path, flat_result):
    folder = body_system(tmp_path)
    loaded = load_scenario(folder)
    assert list(loaded.components) == ["ground", "body/spring", "body/mass"]
    assert set(loaded.connections) == {
        Connection("ground", "flange.s", "body/spring", "flange_a.s"),
        Connection("ground", "flange.v", "body/spring", "flange_a.v"),
        Connection("body/mass", "flange_a.s", "body/spring", "flange_b.s"),
        Connection("body/mass", "flange_a.v", "body/spring", "flange_b.v"),
        Connection("body/spring", "flange_b.f", "body/mass", "flange_a.f")}
    assert loaded.components["body/mass"].parameters == {"m": 5.0, "f_drive": 1.0}
    result = simulate(folder)
    assert result.ok, result.message
    same_columns(result.data, flat_result.data, {"mass": "body/mass", "spring": "body/spring"})


def test_an_override_names_the_nested_component_by_its_path(tmp_path):
    folder = body_system(tmp_path)
    overrides = parse_assignments(["body/mass.m=2"])
    assert overrides == {"body/mass": {"m": "2"}}
    nested = simulate(folder, parameters={"body/mass": {"m": 2.0}})
    flat = simulate(ROOT / "scenarios/oscillator", parameters={"mass": {"m": 2.0}})
    assert nested.ok and flat.ok
    same_columns(nested.data, flat.data, {"mass": "body/mass", "spring": "body/spring"})


def test_two_levels_of_nesting(tmp_path, flat_result):
    text = FLAT.read_text()
    inner = system("inner", [connector("s", "output"), connector("v", "output"), connector("f", "input")],
                   [block(text, "mass")], [connection("mass", "flange_a.s", "", "s"),
                                           connection("mass", "flange_a.v", "", "v"),
                                           connection("", "f", "mass", "flange_a.f")])
    body = system("body", [connector("ground.s", "input"), connector("ground.v", "input")],
                  [block(text, "spring"), inner],
                  [connection("inner", "s", "spring", "flange_b.s"), connection("inner", "v", "spring", "flange_b.v"),
                   connection("spring", "flange_b.f", "inner", "f"),
                   connection("", "ground.s", "spring", "flange_a.s"),
                   connection("", "ground.v", "spring", "flange_a.v")])
    folder = scenario(tmp_path, [block(text, "ground"), body],
                      [connection("ground", "flange.s", "body", "ground.s"),
                       connection("ground", "flange.v", "body", "ground.v")])
    result = simulate(folder)
    assert result.ok, result.message
    same_columns(result.data, flat_result.data, {"mass": "body/inner/mass", "spring": "body/spring"})


def test_an_input_connector_feeds_two_inner_inputs(tmp_path, flat_result):
    """A second spring fed by the same body connectors and the same mass computes the same force."""
    spring2 = block(FLAT.read_text(), "spring").replace('name="spring"', 'name="spring2"', 1)
    folder = body_system(tmp_path, spring2)
    loaded = load_scenario(folder)
    for end in ("s", "v"):
        assert Connection("ground", f"flange.{end}", "body/spring", f"flange_a.{end}") in loaded.connections
        assert Connection("ground", f"flange.{end}", "body/spring2", f"flange_a.{end}") in loaded.connections
    result = simulate(folder)
    assert result.ok, result.message
    assert np.array_equal(result.data["body/spring2.flange_b.f"], result.data["body/spring.flange_b.f"])
    assert np.array_equal(result.data["body/mass.flange_a.s"], flat_result.data["mass.flange_a.s"])


def test_an_unfed_system_connector_is_refused_by_name(tmp_path):
    refused(tmp_path, connection("ground", "flange.v", "body", "ground.v"), "",
            "connector 'ground.v' of system 'body' is fed by nothing", modes=(True, False))


def test_an_inner_input_left_unconnected_is_seen_by_the_unconnected_check(tmp_path):
    folder = body_system(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace(connection("spring", "flange_b.f", "mass", "flange_a.f"), ""))
    warnings = "\n".join(load_scenario(folder).warnings)
    assert "body/mass" in warnings and "flange_a.f" in warnings


def test_a_name_with_the_path_separator_in_a_nested_system_is_refused(tmp_path):
    refused(tmp_path, '<ssd:Component name="mass"', '<ssd:Component name="m/ass"',
            "Component 'm/ass' in system 'body': the name of a nested system or of its element must not hold '/'")


def test_parameter_bindings_of_a_nested_system_are_applied_to_its_components(tmp_path):
    """``mass.m`` bound at the system ``body`` is the mass of ``body/mass`` (tests/test_ssp_system_bindings.py
    checks the motion and SSP's precedence); a name of no element of ``body`` is refused, naming the system."""
    folder = body_system(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    binding = ('<ssd:ParameterBindings><ssd:ParameterBinding><ssd:ParameterValues><ssv:ParameterSet version="1.0" '
               'name="body"><ssv:Parameters><ssv:Parameter name="mass.m"><ssv:Real value="7.5"/></ssv:Parameter>'
               '</ssv:Parameters></ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding>'
               '</ssd:ParameterBindings>')
    text = ssd.read_text()
    start = text.index('<ssd:System name="body">') + len('<ssd:System name="body">')
    start = text.index("</ssd:Connectors>", start) + len("</ssd:Connectors>")  # SSP's order: bindings next
    ssd.write_text(text[:start] + binding + text[start:])
    assert load_scenario(folder).components["body/mass"].parameters["m"] == 7.5
    (tmp_path / "misnamed").mkdir()
    refused(tmp_path / "misnamed", '<ssd:System name="body">', '<ssd:System name="body">' + binding.replace(
        "mass.m", "mas.m"), "system 'body': parameter binding: 'mas.m' names no element of the system")


def test_a_percent_encoded_source_is_decoded(tmp_path, flat_result):
    folder = tmp_path / "encoded"
    folder.mkdir()
    (folder / "my mass.fmu").write_bytes((ROOT / "fmus/Mass.fmu").read_bytes())
    (folder / "ground set.ssv").write_text(
        '<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" version="1.0" '
        'name="g"><ssv:Parameters><ssv:Parameter name="s0"><ssv:Real value="0.0"/></ssv:Parameter>'
        '</ssv:Parameters></ssv:ParameterSet>')
    text = re.sub(r'source="(\.\./)+fmus/', f'source="{(ROOT / "fmus").as_posix()}/', FLAT.read_text())
    text = text.replace(f'{(ROOT / "fmus").as_posix()}/Mass.fmu', "my%20mass.fmu")
    text = re.sub(r'(<ssd:Component name="ground".*?<ssd:ParameterBindings>).*?(</ssd:ParameterBindings>)',
                  r'\1<ssd:ParameterBinding source="file:ground%20set.ssv"/>\2', text, count=1, flags=re.S)
    text = text.replace('<mechfmu:Sources fallback="built"/>', "")
    (folder / "SystemStructure.ssd").write_text(text)
    loaded = load_scenario(folder)
    assert loaded.components["mass"].fmu == (folder / "my mass.fmu").resolve()
    assert loaded.components["ground"].parameters == {"s0": 0.0}
    result = simulate(folder)
    assert result.ok, result.message
    same_columns(result.data, flat_result.data, {})


def test_a_file_uri_outside_the_scenario_is_refused_unless_allowed(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "Mass.fmu").write_bytes((ROOT / "fmus/Mass.fmu").read_bytes())
    folder = flat_copy(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace(f'{(ROOT / "fmus").as_posix()}/Mass.fmu',
                                           f"file://{(outside / 'Mass.fmu').as_posix()}"))
    with pytest.raises(ScenarioError) as error:
        load_scenario(folder, built_fmus=False)
    assert f"mass: source 'file://{(outside / 'Mass.fmu').as_posix()}' is {outside / 'Mass.fmu'}, outside" \
        in str(error.value)
    assert load_scenario(folder, built_fmus=False, outside_sources=True).components["mass"].fmu == \
        outside / "Mass.fmu"


@pytest.mark.parametrize("source", ["http://example.org/Mass.fmu", "file://server/share/Mass.fmu"])
def test_a_source_that_is_not_a_local_file_is_refused_by_name(tmp_path, source):
    folder = flat_copy(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace(f'{(ROOT / "fmus").as_posix()}/Mass.fmu', source))
    for local in (True, False):
        with pytest.raises(ScenarioError) as error:
            load_scenario(folder, local=local)
        assert f"mass: source {source!r}: " in str(error.value)
        assert "is not read by mechfmu" in str(error.value)


def test_an_ssv_source_with_another_scheme_is_refused_by_name(tmp_path):
    folder = flat_copy(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    text = re.sub(r'(<ssd:Component name="ground".*?<ssd:ParameterBindings>).*?(</ssd:ParameterBindings>)',
                  r'\1<ssd:ParameterBinding source="https://example.org/g.ssv"/>\2', ssd.read_text(), count=1,
                  flags=re.S)
    ssd.write_text(text)
    with pytest.raises(ScenarioError) as error:
        load_scenario(folder, local=True)
    assert "ground: parameter binding https://example.org/g.ssv: source 'https://example.org/g.ssv': the URI " \
           "scheme 'https' is not read by mechfmu" in str(error.value)


def test_a_system_named_as_a_component_beside_it_is_refused(tmp_path):
    refused(tmp_path, '<ssd:Component name="ground"', '<ssd:Component name="body"',
            "ssd:System 'body': another element of its system has its name; rename one")


def test_a_connection_with_the_top_systems_own_connector_is_refused_by_name(tmp_path):
    refused(tmp_path, connection("ground", "flange.v", "body", "ground.v"), connection("", "speed", "body", "ground.v"),
            "connection .speed -> body/spring.flange_a.v: unknown component ''")


def test_a_nested_scenario_exports_to_an_archive_that_runs_as_the_folder(tmp_path, flat_result):
    from mechfmu.ssp import export_ssp
    folder = body_system(tmp_path)
    archive = export_ssp(folder, tmp_path / "nested.ssp")
    result = simulate(archive)
    assert result.ok, result.message
    same_columns(result.data, flat_result.data, {"mass": "body/mass", "spring": "body/spring"})
