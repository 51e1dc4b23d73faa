"""A message about an ``.ssp`` archive names the archive the user gave and the entry in it, never the temporary
folder the archive is unpacked to: through ``load_scenario`` and through ``mechfmu run``."""
from __future__ import annotations

import re
import tempfile
import zipfile
from pathlib import Path

import pytest

from mechfmu.cli.main import main
from mechfmu.ssp.export import export_ssp
from mechfmu.ssp.scenario import ScenarioError, load_scenario

ROOT = Path(__file__).resolve().parents[1]
SSD = "SystemStructure.ssd"
MASS = "resources/mass/Mass.fmu"
#: the unpack folders of mechfmu.ssp.archive (mechfmu_<name>_* in the temporary directory)
UNPACKED = re.compile(re.escape(str(Path(tempfile.gettempdir()).resolve())) + r"/mechfmu_|"
                      + re.escape(tempfile.gettempdir()) + r"/mechfmu_")


@pytest.fixture(scope="module")
def entries(tmp_path_factory) -> dict[str, bytes]:
    """The entries of the oscillator's exported archive."""
    target = tmp_path_factory.mktemp("export") / "oscillator.ssp"
    export_ssp(ROOT / "scenarios" / "oscillator", target)
    with zipfile.ZipFile(target) as zf:
        return {name: zf.read(name) for name in zf.namelist()}


def _ssd_with(entries: dict[str, bytes], old: str, new: str) -> dict[str, bytes]:
    text = entries[SSD].decode()
    assert old in text
    return {**entries, SSD: text.replace(old, new, 1).encode()}


MASS_BINDINGS = '<ssd:Component name="mass" source="resources/mass/Mass.fmu" type="application/x-fmu-sharedlibrary">'
#: case -> (how the archive's entries change, the text the message must hold with {arc} the archive's path)
CASES = {
    "ssd not XML": (lambda e: {**e, SSD: b"<ssd:SystemStructureDescription"}, "scenario {arc}/" + SSD),
    "fmu missing": (lambda e: _ssd_with(e, f'source="{MASS}"', 'source="resources/mass/Gone.fmu"'),
                    "{arc}/resources/mass/Gone.fmu"),
    "ssv missing": (lambda e: _ssd_with(e, MASS_BINDINGS, MASS_BINDINGS.replace(">", "><ssd:ParameterBindings>"
                    '<ssd:ParameterBinding source="resources/gone.ssv"/></ssd:ParameterBindings>', 1)
                    .replace("><ssd:Param", "><ssd:Param", 1)), "{arc}/resources/gone.ssv"),
    "ssm missing": (lambda e: {**_ssd_with(e, MASS_BINDINGS, MASS_BINDINGS + "<ssd:ParameterBindings>"
                    '<ssd:ParameterBinding source="resources/m.ssv"><ssd:ParameterMapping source="resources/gone.ssm"/>'
                    "</ssd:ParameterBinding></ssd:ParameterBindings>"),
                    "resources/m.ssv": b'<ssv:ParameterSet xmlns:ssv="http://ssp-standard.org/SSP1/'
                                       b'SystemStructureParameterValues" version="1.0" name="p"><ssv:Parameters/>'
                                       b"</ssv:ParameterSet>"}, "{arc}/resources/gone.ssm"),
    "ssv outside": (lambda e: _ssd_with(e, MASS_BINDINGS, MASS_BINDINGS + "<ssd:ParameterBindings>"
                    '<ssd:ParameterBinding source="../m.ssv"/></ssd:ParameterBindings>'),
                    "'../m.ssv' leads outside the scenario's folder {arc};"),
    "fmu damaged": (lambda e: {**e, MASS: e[MASS][:300]}, "{arc}/" + MASS),
}


def _archive(tmp_path: Path, entries: dict[str, bytes], name: str = "bad.ssp") -> Path:
    target = tmp_path / name
    with zipfile.ZipFile(target, "w") as zf:
        for entry, data in entries.items():
            zf.writestr(entry, data)
    return target


@pytest.mark.parametrize("case", CASES)
def test_load_scenario_names_the_archive(case, entries, tmp_path):
    change, expected = CASES[case]
    arc = _archive(tmp_path, change(entries))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(arc)
    message = str(caught.value)
    assert expected.format(arc=arc.resolve()) in message, message
    assert not UNPACKED.search(message), message
    assert all(not UNPACKED.search(problem) for problem in caught.value.problems)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES)
def test_run_names_the_archive(case, entries, tmp_path, capsys):
    change, expected = CASES[case]
    arc = _archive(tmp_path, change(entries))
    assert main(["run", str(arc), "--stop", "0.01", "--no-error-estimate"]) == 2
    err = capsys.readouterr().err
    assert expected.format(arc=arc.resolve()) in err, err
    assert not UNPACKED.search(err), err


@pytest.mark.slow
def test_override_and_name_name_the_archive(entries, tmp_path, capsys):
    """A refused --param names the archive; a scenario without a name is named after the archive's file."""
    arc = _archive(tmp_path, _ssd_with(entries, 'version="1.0" name="oscillator"', 'version="1.0"'), "my_osc.ssp")
    assert load_scenario(arc).name == "my_osc"
    assert main(["run", str(arc), "--stop", "0.01", "--param", "mass.nosuch=1"]) == 2
    err = capsys.readouterr().err
    assert f"scenario {arc.resolve()}" in err and "nosuch" in err, err
    assert not UNPACKED.search(err), err


def _without_binaries(fmu: bytes) -> bytes:
    """The FMU ``fmu`` with no binary for any platform (its modelDescription unchanged)."""
    import io
    source, target = zipfile.ZipFile(io.BytesIO(fmu)), io.BytesIO()
    with zipfile.ZipFile(target, "w") as zf:
        for name in source.namelist():
            if not name.startswith("binaries/"):
                zf.writestr(name, source.read(name))
    return target.getvalue()


@pytest.mark.slow
def test_a_run_that_fails_in_an_archive_fmu_names_the_archive(entries, tmp_path, capsys):
    """An FMU of the archive without this machine's binary (unpacked twice: the archive, then the FMU) is named
    as the file in the archive, by ``simulate``'s result and by ``mechfmu run``."""
    from mechfmu.master.simulate import simulate
    arc = _archive(tmp_path, {**entries, MASS: _without_binaries(entries[MASS])})
    result = simulate(arc, stop=0.01, estimate_error=False)
    assert result.status == "error" and f"{arc.resolve()}/{MASS}/binaries/" in result.message, result.message
    assert not UNPACKED.search(result.message)
    assert main(["run", str(arc), "--stop", "0.01", "--no-error-estimate"]) != 0
    printed = capsys.readouterr()
    err = printed.err + printed.out
    assert f"{arc.resolve()}/{MASS}/binaries/" in err and not UNPACKED.search(err), err
