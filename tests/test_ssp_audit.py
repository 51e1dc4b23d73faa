"""The audit of SSP 1.0 (docs/scenarios.md, "Every SSP element and attribute"): what changes a run is honoured or
refused by name; what cannot change one (graphics, descriptions, annotations of other tools, enumerations and
signal dictionaries nothing refers to) is read past, and the run is bit for bit the one without it.

The system: a free mass (m = 4 kg bound at the system, f_drive = 2 N at the mass): s(1 s) = 0.25 m.
Constructs of connections are audited in tests/test_ssp_constructs.py and tests/test_connection_maps.py, units in
tests/test_ssp_parameters.py, sources in tests/test_nested_systems.py and tests/test_ssp_archive.py.
"""
import numpy as np
import pytest
from test_ssp_system_bindings import bindings, end_position, scenario, values

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import ScenarioError, load_scenario

TOP = bindings(values(("mass.m", "4.0")))
GEOMETRY = '<ssd:ElementGeometry x1="0" y1="0" x2="1" y2="1"/>'
ANNOTATION = ('<ssd:Annotations><ssc:Annotation type="com.example.tool"><x xmlns="urn:example">1</x>'
              '</ssc:Annotation></ssd:Annotations>')

#: (what, text replaced, replacement, a fragment of the refusal)
REFUSED = [
    ("SystemStructureDescription version", 'version="1.0" name="rig"', 'version="2.0" name="rig"',
     "the SSD is version '2.0' of SSP"),
    ("Component type", '<ssd:Component name="mass"', '<ssd:Component type="application/x-ssp-package" name="mass"',
     "is a system (application/x-ssp-package"),
    ("Component type (other)", '<ssd:Component name="mass"', '<ssd:Component type="text/plain" name="mass"',
     "has type 'text/plain': mechfmu runs FMUs"),
    ("Component implementation", '<ssd:Component name="mass"',
     '<ssd:Component implementation="CoSimulation" name="mass"', "implementation='CoSimulation' is not honoured"),
    ("SignalDictionaryReference", "</ssd:Elements>",
     '<ssd:SignalDictionaryReference name="bus" dictionary="d"/></ssd:Elements>',
     "ssd:SignalDictionaryReference 'bus' is not read"),
    ("ParameterBinding type", "<ssd:ParameterBinding><ssd:ParameterValues><ssv:ParameterSet version=\"1.0\" "
     "name=\"set\"><ssv:Parameters><ssv:Parameter name=\"mass.m\"",
     "<ssd:ParameterBinding type=\"text/csv\"><ssd:ParameterValues><ssv:ParameterSet version=\"1.0\" "
     "name=\"set\"><ssv:Parameters><ssv:Parameter name=\"mass.m\"", "of type 'text/csv' is not read"),
    ("ParameterValues without an ssv:ParameterSet", '<ssv:ParameterSet version="1.0" name="set"><ssv:Parameters>'
     '<ssv:Parameter name="mass.m"><ssv:Real value="4.0"/></ssv:Parameter></ssv:Parameters></ssv:ParameterSet>',
     '<other xmlns="urn:x"/>', "no ssv:ParameterSet"),
    ("ssv:Binary", '<ssv:Real value="4.0"/>', '<ssv:Binary value="00"/>', "an ssv:Binary value is not applied"),
    ("a system parameter that names nothing", 'name="mass.m"', 'name="mass_m"', "'mass_m' names no element"),
]

#: (what, text replaced, replacement): read past, the run unchanged
NO_EFFECT = [
    ("descriptions and ids (ssc:ABaseElement)", '<ssd:Component name="mass"',
     '<ssd:Component description="the body" id="c1" name="mass"'),
    ("SSD information attributes", 'version="1.0" name="rig"',
     'version="1.0" name="rig" generationTool="x" generationDateAndTime="2024-01-01T00:00:00Z" author="a" '
     'fileversion="3" copyright="c" license="l"'),
    ("ElementGeometry", "<ssd:Connectors>", GEOMETRY + "<ssd:Connectors>"),
    ("ConnectorGeometry", "<ssc:Real/></ssd:Connector>", '<ssc:Real/><ssd:ConnectorGeometry x="0" y="0"/>'
     "</ssd:Connector>"),
    ("SystemGeometry and GraphicalElements", "</ssd:System>",
     '<ssd:SystemGeometry x1="0" y1="0" x2="1" y2="1"/><ssd:GraphicalElements><ssd:Note x1="0" y1="0" x2="1" '
     'y2="1" text="a note"/></ssd:GraphicalElements></ssd:System>'),
    ("Annotations of another tool", "</ssd:System>", ANNOTATION + "</ssd:System>"),
    ("Enumerations nothing refers to", "<ssd:DefaultExperiment",
     '<ssd:Enumerations><ssc:Enumeration name="mode"><ssc:Item name="a" value="1"/></ssc:Enumeration>'
     "</ssd:Enumerations><ssd:DefaultExperiment"),
    ("SignalDictionaries nothing refers to", "</ssd:System>",
     '<ssd:SignalDictionaries><ssd:SignalDictionary name="d"><ssd:DictionaryEntry name="x"><ssc:Real/>'
     "</ssd:DictionaryEntry></ssd:SignalDictionary></ssd:SignalDictionaries></ssd:System>"),
    ("a ParameterBinding's Annotations", "</ssd:ParameterValues></ssd:ParameterBinding></ssd:ParameterBindings>"
     "<ssd:Elements>", "</ssd:ParameterValues>" + ANNOTATION + "</ssd:ParameterBinding></ssd:ParameterBindings>"
     "<ssd:Elements>"),
    ("the Component's type written out", '<ssd:Component name="mass"',
     '<ssd:Component type="application/x-fmu-sharedlibrary" implementation="any" name="mass"'),
]


def edited(tmp_path, old: str, new: str):
    folder = scenario(tmp_path, top=TOP)
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text()
    assert old in text, old
    ssd.write_text(text.replace(old, new, 1))
    return folder


@pytest.mark.parametrize("what, old, new, problem", REFUSED, ids=[r[0] for r in REFUSED])
def test_what_mechfmu_does_not_honour_is_refused_by_name(tmp_path, what, old, new, problem):
    with pytest.raises(ScenarioError) as info:
        load_scenario(edited(tmp_path, old, new))
    assert problem in str(info.value), str(info.value)


@pytest.mark.parametrize("what, old, new", NO_EFFECT, ids=[r[0] for r in NO_EFFECT])
def test_what_cannot_change_a_run_is_read_past(tmp_path, what, old, new):
    folder = edited(tmp_path, old, new)
    assert load_scenario(folder).components["mass"].parameters == {"f_drive": 2.0, "m": 4.0}


@pytest.mark.slow
def test_a_run_with_every_construct_read_past_is_the_run_without(tmp_path):
    (tmp_path / "plain").mkdir()
    (tmp_path / "all").mkdir()
    plain = simulate(scenario(tmp_path / "plain", top=TOP))
    folder = scenario(tmp_path / "all", top=TOP)
    ssd = folder / "SystemStructure.ssd"
    text = ssd.read_text()
    for _, old, new in NO_EFFECT:
        text = text.replace(old, new, 1)
    ssd.write_text(text)
    assert end_position(folder) == pytest.approx(0.25, rel=1e-12)
    every = simulate(folder)
    assert np.array_equal(every.data["mass.flange_a.s"], plain.data["mass.flange_a.s"])
