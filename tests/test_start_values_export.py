"""An export writes each FMU's start_values.json with components/start_values.py's writer, which refuses what the
FMUs' readers would refuse: a value that cannot be written (not finite, a lone surrogate in a string, which
Python's json.dumps writes as NaN and "\\udc80", both no JSON the C reader takes) stops the export at once,
naming the component, the parameter and the value, and leaves the target as it was."""
import json
import math

import pytest

from mechfmu.crosscheck import export as crosscheck_export
from mechfmu.ssp import export as ssp_export

UNWRITABLE = [("mass", "m", math.nan, "m = nan is not finite"),
              ("spring", "springForceUserFunction", "u\udc80", "a NUL character or a lone surrogate")]


def with_value(monkeypatch, component: str, name: str, value) -> None:
    """The SSP export's load_scenario gives ``component`` the parameter ``name`` = ``value`` (a value no SSD can
    hold: a Python caller's)."""
    load = ssp_export.load_scenario

    def loaded(*args, **kwargs):
        scenario = load(*args, **kwargs)
        if component in scenario.components:
            scenario.components[component].parameters[name] = value
        return scenario
    monkeypatch.setattr(ssp_export, "load_scenario", loaded)


@pytest.mark.parametrize("component, name, value, words", UNWRITABLE)
def test_an_archive_with_a_value_that_cannot_be_written_is_refused(fmus, tmp_path, monkeypatch, component, name,
                                                                    value, words):
    assert "NaN" in json.dumps({name: value}) or "\\udc80" in json.dumps({name: value})  # what json.dumps wrote
    target = tmp_path / "oscillator.ssp"
    target.write_bytes(b"the user's own file")
    with_value(monkeypatch, component, name, value)
    with pytest.raises(ValueError) as info:
        ssp_export.export_ssp("scenarios/oscillator", target)
    assert f"component {component!r}" in str(info.value) and words in str(info.value), str(info.value)
    assert target.read_bytes() == b"the user's own file"


@pytest.mark.slow
@pytest.mark.parametrize("component, name, value, words", UNWRITABLE)
def test_a_crosscheck_fmu_with_a_value_that_cannot_be_written_is_refused(fmus, tmp_path, monkeypatch, component,
                                                                         name, value, words):
    simulate = crosscheck_export.simulate

    def simulated(scenario, **kwargs):  # the run as given; the value given to the FMU's file afterwards
        result = simulate(scenario, **kwargs)
        scenario.components[component].parameters[name] = value
        return result
    monkeypatch.setattr(crosscheck_export, "simulate", simulated)
    with pytest.raises(ValueError) as info:
        crosscheck_export.export_crosscheck("scenarios/oscillator", tmp_path)
    assert f"component {component!r}" in str(info.value) and words in str(info.value), str(info.value)
    model = {"mass": "Mass", "spring": "CoordinateSpringDamper"}[component]
    assert not list(tmp_path.glob(f"**/{model}.fmu"))  # the models before it are written: this one is not
