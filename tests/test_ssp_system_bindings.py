"""Parameter bindings of SSP systems (the top ``ssd:System`` and nested ones) applied as SSP 1.0 says: names
hierarchical (``mass.m``, ``body.mass.m``), inline or from ``.ssv`` files with ``prefix`` and ``.ssm`` mappings,
an enclosing system's binding over a nested one's and over the component's own, a later binding over an earlier
one at one level; a name that matches nothing refused by name. The expectation is the analytic motion of a free
mass under a constant force from rest, s(t) = F t^2 / (2 m): with F = 2 N, s(1 s) = 1/m metres."""
import zipfile
from pathlib import Path

import pytest

from mechfmu.master.simulate import simulate
from mechfmu.ssp.export import export_ssp
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
HEAD = ('<?xml version="1.0" encoding="UTF-8"?>\n<ssd:SystemStructureDescription version="1.0" name="{name}" '
        'xmlns:ssd="http://ssp-standard.org/SSP1/SystemStructureDescription" '
        'xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon" '
        'xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" '
        'xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping" '
        'xmlns:osp="http://opensimulationplatform.com/SSP/OSPAnnotations">')
EXPERIMENT = ('<ssd:DefaultExperiment startTime="0" stopTime="1"><ssd:Annotations><ssc:Annotation '
              'type="com.opensimulationplatform"><osp:FixedStepAlgorithm baseStepSize="0.001"/></ssc:Annotation>'
              '</ssd:Annotations></ssd:DefaultExperiment></ssd:SystemStructureDescription>\n')


def values(*pairs: tuple[str, str], prefix: str = "", kind: str = "Real") -> str:
    """One inline ssd:ParameterBinding of (name, value) pairs."""
    parameters = "".join(f'<ssv:Parameter name="{n}"><ssv:{kind} value="{v}"/></ssv:Parameter>' for n, v in pairs)
    return (f'<ssd:ParameterBinding{f" prefix={chr(34)}{prefix}{chr(34)}" if prefix else ""}><ssd:ParameterValues>'
            f'<ssv:ParameterSet version="1.0" name="set"><ssv:Parameters>{parameters}</ssv:Parameters>'
            '</ssv:ParameterSet></ssd:ParameterValues></ssd:ParameterBinding>')


def bindings(*binding: str) -> str:
    return f"<ssd:ParameterBindings>{''.join(binding)}</ssd:ParameterBindings>" if binding else ""


def mass(own: str = "", attributes: str = "") -> str:
    """The component ``mass`` (Mass, driven by f_drive = 2 N) with ``own`` bindings besides its force."""
    fmu = (ROOT / "fmus" / "Mass.fmu").as_uri()
    return (f'<ssd:Component name="mass" source="{fmu}"{attributes}><ssd:Connectors><ssd:Connector '
            'name="flange_a.s" kind="output"><ssc:Real/></ssd:Connector></ssd:Connectors>'
            f'{bindings(values(("f_drive", "2.0")), own)}</ssd:Component>')


def scenario(tmp_path: Path, top: str = "", body: str | None = None, own: str = "", files: dict | None = None,
             connectors: str = "") -> Path:
    """A system ``rig`` holding the mass (``body`` None) or a nested system ``body`` holding it, with the
    bindings ``top`` of ``rig``, ``body`` of the nested system and ``own`` of the mass."""
    inner = mass(own) if body is None else (f'<ssd:System name="body">{connectors}{body}<ssd:Elements>{mass(own)}'
                                            '</ssd:Elements></ssd:System>')
    folder = tmp_path / "rig"
    folder.mkdir()
    (folder / "SystemStructure.ssd").write_text(HEAD.format(name="rig") + f'<ssd:System name="rig">{top}'
                                                f"<ssd:Elements>{inner}</ssd:Elements></ssd:System>" + EXPERIMENT)
    for name, text in (files or {}).items():
        (folder / name).write_text(text)
    return folder


def end_position(folder: Path | str, component: str = "mass") -> float:
    result = simulate(folder)
    assert result.ok, result.message
    return float(result.data[f"{component}.flange_a.s"][-1])


def test_a_binding_of_the_top_system_sets_the_mass(tmp_path):
    """mass.m = 4 at the system: s(1) = 0.25 m (OMSimulator 2.1.3 gives 0.25 on the same archive), not the
    1 m of the default mass."""
    folder = scenario(tmp_path, top=bindings(values(("mass.m", "4.0"))))
    assert load_scenario(folder).components["mass"].parameters["m"] == 4.0
    assert end_position(folder) == pytest.approx(0.25, rel=1e-12)


@pytest.mark.parametrize("name, problem", [
    ("nosuch.m", "system 'rig': parameter binding: 'nosuch.m' names no element of the system (its elements: "
                 "'mass')"),
    ("m", "'m' names no element of the system"),
    ("mass.nosuch", "mass: unknown variable 'nosuch' in parameter bindings"),
])
def test_a_system_binding_that_names_nothing_is_refused(tmp_path, name, problem):
    folder = scenario(tmp_path, top=bindings(values((name, "4.0"))))
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert problem in str(info.value), str(info.value)


def test_a_binding_of_a_system_connector_is_refused(tmp_path):
    connector = ('<ssd:Connectors><ssd:Connector name="load" kind="parameter"><ssc:Real/></ssd:Connector>'
                 '</ssd:Connectors>')
    folder = scenario(tmp_path, body=bindings(values(("load", "4.0"))), connectors=connector)
    with pytest.raises(ScenarioError, match="system 'body': parameter binding: 'load' is a connector of the system"):
        load_scenario(folder)


@pytest.mark.parametrize("top, body, own, m", [
    ("", "", "", 1.0),  # the FMU's default
    ("", "", values(("m", "2.0")), 2.0),
    ("", bindings(values(("mass.m", "3.0"))), values(("m", "2.0")), 3.0),  # the system over the component
    (bindings(values(("body.mass.m", "4.0"))), bindings(values(("mass.m", "3.0"))), values(("m", "2.0")), 4.0),
    ("", bindings(values(("mass.m", "3.0")), values(("mass.m", "5.0"))), "", 5.0),  # the later at one level
    ("", "", values(("m", "2.0")) + values(("m", "8.0")), 8.0),
    (bindings(values(("m", "4.0"), prefix="body.mass.")), "", "", 4.0),  # a component's set bound by a prefix
], ids=["default", "own", "system over own", "top over system", "later at one level", "later own",
        "prefix"])
def test_bindings_take_precedence_as_ssp_says(tmp_path, top, body, own, m):
    folder = scenario(tmp_path, top=top, body=body, own=own)
    assert load_scenario(folder).components["body/mass"].parameters.get("m", 1.0) == m
    if m in (1.0, 4.0, 5.0):  # one run per kind of expectation: the motion follows the mass given
        assert end_position(folder, "body/mass") == pytest.approx(1 / m, rel=1e-12)


def test_a_system_binding_from_an_ssv_file_with_prefix_units_and_mapping(tmp_path):
    """A set written for one component (bare names, a mass in grams under another name) bound at the system
    with prefix ``mass.`` and an .ssm mapping ``mass.mass_g`` -> ``mass.m``: m = 4 kg."""
    ssv = ('<?xml version="1.0" encoding="UTF-8"?>\n<ssv:ParameterSet version="1.0" name="body" '
           'xmlns:ssv="http://ssp-standard.org/SSP1/SystemStructureParameterValues" '
           'xmlns:ssc="http://ssp-standard.org/SSP1/SystemStructureCommon"><ssv:Parameters>'
           '<ssv:Parameter name="mass_g"><ssv:Real value="4000" unit="g"/></ssv:Parameter></ssv:Parameters>'
           '<ssv:Units><ssc:Unit name="g"><ssc:BaseUnit kg="1" factor="0.001"/></ssc:Unit></ssv:Units>'
           '</ssv:ParameterSet>\n')
    ssm = ('<?xml version="1.0" encoding="UTF-8"?>\n<ssm:ParameterMapping version="1.0" '
           'xmlns:ssm="http://ssp-standard.org/SSP1/SystemStructureParameterMapping">'
           '<ssm:MappingEntry source="mass.mass_g" target="mass.m"/></ssm:ParameterMapping>\n')
    binding = ('<ssd:ParameterBinding source="body.ssv" prefix="mass."><ssd:ParameterMapping source="body.ssm"/>'
               '</ssd:ParameterBinding>')
    folder = scenario(tmp_path, top=bindings(binding), files={"body.ssv": ssv, "body.ssm": ssm})
    assert load_scenario(folder).components["mass"].parameters["m"] == 4.0
    suppressed = ssm.replace('target="mass.m"', 'target="mass.m" suppressUnitConversion="true"')
    (folder / "body.ssm").write_text(suppressed)  # the value taken as it is, in kg
    assert load_scenario(folder).components["mass"].parameters["m"] == 4000.0


@pytest.mark.parametrize("edit, problem", [
    (('<ssd:ParameterBinding>', '<ssd:ParameterBinding type="application/x-cdf">'),
     "an ssd:ParameterBinding of type 'application/x-cdf' is not read by mechfmu"),
    (('<ssd:ParameterBinding>', '<ssd:ParameterBinding sourceBase="component">'),
     "sourceBase='component' (a file inside the component's FMU) is not read by mechfmu"),
    (('<ssd:ParameterBinding>', '<ssd:ParameterBinding source="other.ssv">'),
     "it has both a source and inline ssd:ParameterValues (SSP 1.0 allows one)"),
    (('<ssv:Real value="4.0"/>', '<ssv:Enumeration value="4"/>'),
     "parameter 'mass.m': an ssv:Enumeration value is not applied by mechfmu"),
    (('<ssd:ParameterBinding>', '<ssd:ParameterBinding><ssd:ParameterMapping source="m.ssm" sourceBase="component"/>'),
     "an ssd:ParameterMapping with sourceBase='component'"),
])
def test_binding_attributes_mechfmu_does_not_read_are_refused_by_name(tmp_path, edit, problem):
    folder = scenario(tmp_path, top=bindings(values(("mass.m", "4.0"))).replace(*edit, 1))
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert problem in str(info.value), str(info.value)


@pytest.mark.parametrize("edit, problem", [
    (('name="mass" ', 'name="mass" implementation="ModelExchange" '),
     "component 'mass': implementation='ModelExchange' is not honoured by mechfmu"),
    (('name="mass" ', 'name="mass" type="application/x-other" '),
     "component 'mass' has type 'application/x-other': mechfmu runs FMUs"),
    (('version="1.0" name="rig"', 'version="2.0" name="rig"'), "the SSD is version '2.0' of SSP"),
])
def test_ssd_attributes_mechfmu_does_not_honour_are_refused_by_name(tmp_path, edit, problem):
    folder = scenario(tmp_path)
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace(*edit, 1))
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert problem in str(info.value), str(info.value)


@pytest.mark.slow
@pytest.mark.parametrize("shared", [False, True])
def test_an_exported_archive_carries_the_system_bindings_in_its_components(tmp_path, shared):
    """The export folds the systems' values into each component's one set (no system keeps bindings, so no
    tool applies them twice or misses an .ssv file) and fmpy's runner, which applies no system binding,
    gets m = 4: s(1) = 0.25 m within its first-order coupling of a single body (exact here: no coupling)."""
    from fmpy.ssp.simulation import simulate_ssp
    folder = scenario(tmp_path, body=bindings(values(("mass.m", "4.0"))))
    archive = export_ssp(folder, tmp_path / "rig.ssp", shared_fmus=shared)
    with zipfile.ZipFile(archive) as zf:
        text = zf.read("SystemStructure.ssd").decode()
    assert text.count("<ssd:ParameterBindings>") == 1, text  # the mass's, none of a system
    assert load_scenario(archive).components["body/mass"].parameters == {"f_drive": 2.0, "m": 4.0}
    if not shared:
        rows = simulate_ssp(str(archive), stop_time=1.0, step_size=1e-3)
        assert rows["body.mass.flange_a.s"][-1] == pytest.approx(0.25, rel=1e-9)


@pytest.mark.slow
def test_omsimulator_applies_the_same_system_binding_to_the_same_archive(tmp_path):
    """An archive whose top system binds mass.m = 4 (our export with the mass's own m removed and the binding put
    on the system): OMSimulator 2.1.3 and mechfmu both end at s(1) = 0.25 m."""
    from conftest import omsimulator_program

    from mechfmu.crosscheck.omsimulator import run_omsimulator
    folder = scenario(tmp_path, top=bindings(values(("mass.m", "4.0"))))
    exported = export_ssp(folder, tmp_path / "exported.ssp", shared_fmus=True)
    archive = tmp_path / "bound.ssp"
    with zipfile.ZipFile(exported) as source, zipfile.ZipFile(archive, "w") as out:
        for item in source.infolist():
            data = source.read(item)
            if item.filename == "SystemStructure.ssd":
                text = data.decode()
                own = text.index('<ssv:Parameter name="m">')
                text = text[:own] + text[text.index("</ssv:Parameter>", own) + len("</ssv:Parameter>"):]
                assert 'name="m"' not in text
                system = text.index(">", text.index("<ssd:System ")) + 1  # SSP's order: bindings first
                data = (text[:system] + bindings(values(("mass.m", "4.0"))) + text[system:]).encode()
            out.writestr(item, data)
    assert end_position(archive) == pytest.approx(0.25, rel=1e-12)
    run = run_omsimulator(omsimulator_program(), archive, tmp_path / "oms")
    assert run.returncode == 0 and not run.errors, run.output[-2000:]
    assert run.signals["mass.flange_a.s"][-1] == pytest.approx(0.25, rel=1e-9)


@pytest.mark.parametrize("mapping, problem", [
    ('<ssm:MappingEntry source="mass.mass_g" target="mass.m"/>',
     "'mass.m' is given twice in one parameter set (as 'mass.m' and as 'mass.mass_g', through its mapping)"),
    ('<ssm:MappingEntry source="mass.mass_g" target="mass.m"/><ssm:MappingEntry source="mass.mass_g" '
     'target="mass.L"/>', "'mass.mass_g' is mapped twice"),
])
def test_a_parameter_given_twice_through_a_mapping_is_refused(tmp_path, mapping, problem):
    """Which of two values a tool keeps is nowhere said: refused, as a name given twice in one set is."""
    binding = ('<ssd:ParameterBinding><ssd:ParameterValues><ssv:ParameterSet version="1.0" name="set">'
               '<ssv:Parameters><ssv:Parameter name="mass.m"><ssv:Real value="4.0"/></ssv:Parameter>'
               '<ssv:Parameter name="mass.mass_g"><ssv:Real value="3.0"/></ssv:Parameter></ssv:Parameters>'
               '</ssv:ParameterSet></ssd:ParameterValues><ssd:ParameterMapping><ssm:ParameterMapping '
               f'version="1.0">{mapping}</ssm:ParameterMapping></ssd:ParameterMapping></ssd:ParameterBinding>')
    folder = scenario(tmp_path, top=bindings(binding))
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert problem in str(info.value), str(info.value)


def test_a_component_whose_name_holds_a_dot_is_found_by_its_bindings_and_overrides(tmp_path):
    """SSP allows ``mass.1`` as an element name: the system's ``mass.1.m`` and the command line's
    ``--param mass.1.m=2`` (split at its first dot) both reach it."""
    from mechfmu.ssp.overrides import check_overrides, parse_assignments
    folder = scenario(tmp_path, top=bindings(values(("mass.1.m", "4.0"))))
    ssd = folder / "SystemStructure.ssd"
    ssd.write_text(ssd.read_text().replace('<ssd:Component name="mass"', '<ssd:Component name="mass.1"'))
    loaded = load_scenario(folder)
    assert loaded.components["mass.1"].parameters["m"] == 4.0
    assert check_overrides(loaded, parse_assignments(["mass.1.m=2"]), texts=True) == {"mass.1": {"m": 2.0}}
