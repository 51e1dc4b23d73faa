"""SSP parameter handling as the standard says: external .ssv files, .ssm mappings, units converted
exactly through the file's unit definitions (or refused naming component, parameter and unit), typed
values without silent coercion, and files that pass the SSP 1.0 schema."""
import shutil
from pathlib import Path

import numpy as np
import pytest

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parent.parent
SSV = "http://ssp-standard.org/SSP1/SystemStructureParameterValues"
SSC = "http://ssp-standard.org/SSP1/SystemStructureCommon"
SSM = "http://ssp-standard.org/SSP1/SystemStructureParameterMapping"
MASS_INLINE = '''<ssv:Parameter name="m"><ssv:Real value="5.0"/></ssv:Parameter>
                  <ssv:Parameter name="f_drive"><ssv:Real value="1.0"/></ssv:Parameter>'''
SI_MASS = MASS_INLINE + '<ssv:Parameter name="s_start"><ssv:Real value="0.0123"/></ssv:Parameter>'
EXTERNAL = '<ssd:ParameterBinding source="{file}"{extra}/>'


def ssv(parameters: str, units: str = "") -> str:
    return (f'<?xml version="1.0" encoding="UTF-8"?>\n<ssv:ParameterSet xmlns:ssv="{SSV}" xmlns:ssc="{SSC}" '
            f'version="1.0" name="set"><ssv:Parameters>{parameters}</ssv:Parameters>'
            f'{f"<ssv:Units>{units}</ssv:Units>" if units else ""}</ssv:ParameterSet>\n')


UNITS = ('<ssc:Unit name="g"><ssc:BaseUnit kg="1" factor="0.001"/></ssc:Unit>'
         '<ssc:Unit name="mm"><ssc:BaseUnit m="1" factor="0.001"/></ssc:Unit>'
         '<ssc:Unit name="N/mm"><ssc:BaseUnit kg="1" s="-2" factor="1000"/></ssc:Unit>'
         '<ssc:Unit name="N.s/mm"><ssc:BaseUnit kg="1" s="-1" factor="1000"/></ssc:Unit>')


def scenario_copy(tmp_path: Path, name: str, mass_binding: str | None = None, spring_binding: str | None = None,
                  files: dict[str, str] | None = None) -> Path:
    """scenarios/oscillator copied to tmp_path/name (sources resolve to the built FMUs), with the mass's
    and the spring's inline parameter sets replaced, and extra files beside the SSD."""
    folder = tmp_path / name
    shutil.copytree(ROOT / "scenarios" / "oscillator", folder)
    text = (folder / "SystemStructure.ssd").read_text()
    mass_start = text.index('<ssd:ParameterBinding>', text.index('name="mass"'))
    mass_end = text.index('</ssd:ParameterBinding>', mass_start) + len('</ssd:ParameterBinding>')
    if mass_binding is not None:
        text = text[:mass_start] + mass_binding + text[mass_end:]
    if spring_binding is not None:
        start = text.index('<ssd:ParameterBinding>', text.index('name="spring"'))
        end = text.index('</ssd:ParameterBinding>', start) + len('</ssd:ParameterBinding>')
        text = text[:start] + spring_binding + text[end:]
    (folder / "SystemStructure.ssd").write_text(text)
    for file, content in (files or {}).items():
        (folder / file).write_text(content)
    return folder


def si_reference(tmp_path: Path) -> Path:
    folder = scenario_copy(tmp_path, "si")
    text = (folder / "SystemStructure.ssd").read_text().replace(MASS_INLINE, SI_MASS)
    (folder / "SystemStructure.ssd").write_text(text)
    return folder


def test_external_ssv_in_other_units_equals_the_inline_si_scenario(fmus, tmp_path):
    """m = 5000 g, s_start = 12.3 mm, stiffness 5 N/mm, damping 0.08 N.s/mm from .ssv files give the
    SI scenario (5 kg, 0.0123 m, 5000 N/m, 80 N.s/m) bit for bit: the conversion is exact."""
    mass = ssv('<ssv:Parameter name="m"><ssv:Real value="5000" unit="g"/></ssv:Parameter>'
               '<ssv:Parameter name="f_drive"><ssv:Real value="1.0"/></ssv:Parameter>'
               '<ssv:Parameter name="s_start"><ssv:Real value="12.3" unit="mm"/></ssv:Parameter>', UNITS)
    spring = ssv('<ssv:Parameter name="stiffness"><ssv:Real value="5" unit="N/mm"/></ssv:Parameter>'
                 '<ssv:Parameter name="damping"><ssv:Real value="0.08" unit="N.s/mm"/></ssv:Parameter>'
                 '<ssv:Parameter name="springForceUserFunction"><ssv:String value="0.1*k*u + k*u**3 + v*d"/>'
                 '</ssv:Parameter>', UNITS)
    folder = scenario_copy(tmp_path, "units", EXTERNAL.format(file="mass.ssv", extra=""),
                           EXTERNAL.format(file="parameters/spring.ssv", extra=""), {"mass.ssv": mass})
    (folder / "parameters").mkdir()
    (folder / "parameters" / "spring.ssv").write_text(spring)
    loaded = load_scenario(folder)
    assert loaded.components["mass"].parameters == {"m": 5.0, "f_drive": 1.0, "s_start": 0.0123}
    assert loaded.components["spring"].parameters["stiffness"] == 5000.0
    runs = [simulate(f, stop=0.05) for f in (folder, si_reference(tmp_path))]
    assert all(r.ok for r in runs), [r.message for r in runs]
    assert all(np.array_equal(runs[0].data[n], runs[1].data[n]) for n in runs[1].data.dtype.names)
    from fmpy.ssp.ssd import read_ssv
    read_ssv(str(folder / "mass.ssv"), validate=True)  # the .ssv files pass the SSP 1.0 schema
    read_ssv(str(folder / "parameters" / "spring.ssv"), validate=True)


def test_ssm_mapping_renames_and_transforms(fmus, tmp_path):
    """A parameter set written for another naming (mass_g in g) mapped onto m with a linear
    transformation (factor 0.001), its names prefixed as SSP says (``prefix`` prepended before the mapping: the
    mapping's source is ``body.mass_g``... for a component, a prefix that names its port): the same mass as the
    inline scenario."""
    mass = ssv('<ssv:Parameter name="mass_g"><ssv:Real value="5000"/></ssv:Parameter>'
               '<ssv:Parameter name="f_drive"><ssv:Real value="1.0"/></ssv:Parameter>'
               '<ssv:Parameter name="s_start"><ssv:Real value="0.0123"/></ssv:Parameter>')
    mapping = (f'<?xml version="1.0" encoding="UTF-8"?>\n<ssm:ParameterMapping xmlns:ssm="{SSM}" xmlns:ssc="{SSC}" '
               'version="1.0"><ssm:MappingEntry source="mass_g" target="m">'
               '<ssc:LinearTransformation factor="0.001"/></ssm:MappingEntry></ssm:ParameterMapping>')
    binding = ('<ssd:ParameterBinding source="mass.ssv"><ssd:ParameterMapping source="mass.ssm"/>'
               '</ssd:ParameterBinding>')
    folder = scenario_copy(tmp_path, "mapped", binding, None, {"mass.ssv": mass, "mass.ssm": mapping})
    assert load_scenario(folder).components["mass"].parameters == {"m": 5.0, "f_drive": 1.0, "s_start": 0.0123}
    without_target = mapping.replace(' target="m"', "")
    folder = scenario_copy(tmp_path, "unmapped", binding, None, {"mass.ssv": mass, "mass.ssm": without_target})
    with pytest.raises(ScenarioError, match="an ssm:MappingEntry needs both source and target"):
        load_scenario(folder)
    prefixed = binding.replace('source="mass.ssv"', 'source="mass.ssv" prefix="body."')  # body.mass_g: no entry
    folder = scenario_copy(tmp_path, "prefixed", prefixed, None, {"mass.ssv": mass, "mass.ssm": mapping})
    with pytest.raises(ScenarioError, match="mass: unknown variable 'body.mass_g' in parameter bindings"):
        load_scenario(folder)


@pytest.mark.parametrize("parameter, problem", [
    ('<ssv:Parameter name="m"><ssv:Real value="5" unit="mm"/></ssv:Parameter>',
     "mass: parameter m = '5' mm: unit 'mm' cannot be converted to 'kg' (different dimensions)"),
    ('<ssv:Parameter name="m"><ssv:Real value="5" unit="stone"/></ssv:Parameter>',
     "mass: parameter m = '5' stone: unit 'stone' is not defined"),
    ('<ssv:Parameter name="m"><ssv:Real value="heavy"/></ssv:Parameter>',
     "mass: parameter m = 'heavy': not a Real"),
])
def test_values_that_cannot_be_converted_are_refused(fmus, tmp_path, parameter, problem):
    folder = scenario_copy(tmp_path, "bad", EXTERNAL.format(file="mass.ssv", extra=""), None,
                           {"mass.ssv": ssv(parameter, UNITS)})
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert problem in str(info.value), str(info.value)


@pytest.mark.parametrize("parameter, problem", [
    ('<ssv:Parameter name="activeConnector"><ssv:Boolean value="yes"/></ssv:Parameter>',
     "spring: parameter activeConnector = 'yes': 'yes' is not a Boolean (true, false, 1 or 0)"),
    ('<ssv:Parameter name="itemNumber"><ssv:Integer value="1.5"/></ssv:Parameter>',
     "spring: parameter itemNumber = '1.5': not an Integer"),
    ('<ssv:Parameter name="activeConnector"><ssv:Real value="0"/></ssv:Parameter>',
     "spring: activeConnector is a Boolean; an ssv:Real value (0.0) is not converted"),
])
def test_typed_values_are_not_coerced(fmus, tmp_path, parameter, problem):
    folder = scenario_copy(tmp_path, "typed", None, EXTERNAL.format(file="spring.ssv", extra=""),
                           {"spring.ssv": ssv(parameter)})
    with pytest.raises(ScenarioError) as info:
        load_scenario(folder)
    assert problem in str(info.value), str(info.value)


def test_a_missing_parameter_file_is_named(fmus, tmp_path):
    folder = scenario_copy(tmp_path, "missing", EXTERNAL.format(file="nowhere.ssv", extra=""))
    with pytest.raises(ScenarioError, match="mass: parameter binding nowhere.ssv: .*No such file"):
        load_scenario(folder)
