"""``System.export_ssp`` tells a Python user what ``mechfmu export-ssp`` prints: which coupling each tool runs
with its estimated error, fmpy's first step, how to get the accurate run, in an ``Exported`` whose ``str()`` is
the command's summary; each note where a tool gives another answer is an ``ExportWarning``."""
from __future__ import annotations

import os
import warnings
import zipfile
from pathlib import Path

import pytest

import mechfmu
from mechfmu import CoordinateSpringDamper, Fixed, Mass, System
from mechfmu.cli.main import main


def weighed_oscillator() -> System:
    """A mass on a spring to ground, pushed by 10 N: preloaded at the start (fmpy's first step differs)."""
    s = System("weighed")
    ground = s.add("ground", Fixed())
    spring = s.add("spring", CoordinateSpringDamper(stiffness=5000.0, damping=20.0))
    mass = s.add("mass", Mass(m=5.0, f_drive=10.0, s_start=0.01))
    s.connect(ground.flange, spring.flange_a)
    s.connect(spring.flange_b, mass.flange_a)
    s.experiment(stop_time=0.2, step_size=1e-3)
    return s


@pytest.mark.slow
def test_export_says_what_the_command_line_says(tmp_path, capsys):
    s = weighed_oscillator()
    with pytest.warns(mechfmu.ExportWarning) as caught:
        exported = s.export_ssp(tmp_path / "weighed.ssp")
    assert os.fspath(exported) == str(tmp_path / "weighed.ssp")
    with zipfile.ZipFile(exported) as zf:  # a path-like of the archive, as the Path it was
        assert "SystemStructure.ssd" in zf.namelist()
    # the command line on the same system's folder prints the same notes (its archive is elsewhere)
    s.write(tmp_path / "weighed")
    assert main(["export-ssp", str(tmp_path / "weighed"), "-o", str(tmp_path / "cli.ssp")]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    said = str(exported).splitlines()
    assert said[0] == printed[0].replace(str(tmp_path / "cli.ssp"), str(tmp_path / "weighed.ssp"))
    assert said[1:] == printed[1:] and len(said) >= 4
    # each tool's first-order coupling with its estimated error, and fmpy's first step, are warnings
    messages = [str(w.message) for w in caught]
    assert messages == list(exported.differing) and set(messages) <= set(exported.notes)
    assert any(m.startswith("OMSimulator: ") and " m from the accurate run" in m for m in messages)
    assert any("fmpy" in m and "first step" in m for m in messages)
    assert not any("strongly_coupled=True" in m for m in messages)  # the way out is a note, not a warning
    assert any("strongly_coupled=True" in n for n in exported.notes)


@pytest.mark.slow
def test_a_strongly_coupled_export_warns_of_nothing(tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", mechfmu.ExportWarning)
        exported = weighed_oscillator().export_ssp(tmp_path / "strong.ssp", strongly_coupled=True)
    assert exported.differing == () and "strongly coupled" in str(exported)


def test_an_unconnected_system_warns_of_no_coupling(tmp_path):
    """No connection, nothing exchanged: every tool's master runs the components alike."""
    s = System("lone")
    s.add("mass", Mass(m=2.0, v_start=1.0))
    s.experiment(stop_time=0.1, step_size=0.01)
    with warnings.catch_warnings():
        warnings.simplefilter("error", mechfmu.ExportWarning)
        exported = s.export_ssp(tmp_path / "lone.ssp")
    assert exported.differing == () and not any("exchange" in note for note in exported.notes), exported


def test_the_export_warning_is_a_user_warning():
    assert issubclass(mechfmu.ExportWarning, UserWarning)
    exported = mechfmu.Exported(Path("a.ssp"), "wrote a.ssp", ("n1", "n2"), ("n2",))
    assert str(exported) == "wrote a.ssp\n  n1\n  n2" and os.fspath(exported) == "a.ssp"
