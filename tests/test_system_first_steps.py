"""A new user's first steps with ``System``: a placed component back by name, one default experiment, Ctrl-C
that stops a script, messages that name the system and print numbers as written, a table checked where it is
given and its file found where ``run(folder)`` says, steps that divide the run suggested as round numbers."""
import os
import re
import signal
import tempfile
from fractions import Fraction

import numpy as np
import pytest

from mechfmu import Fixed, Mass, System, Table
from mechfmu.components.number_text import measured, number, with_unit
from mechfmu.master.interrupt import INTERRUPT, RunInterrupted
from mechfmu.master.simulate import step_count
from mechfmu.ssp.scenario import ScenarioError, load_scenario


def falling_mass(name: str = "drop") -> System:
    """A 2 kg mass pushed by 4 N from rest: s(t) = t², v(t) = 2t."""
    s = System(name)
    s.add("mass", Mass(m=2.0, f_drive=4.0))
    return s


def test_a_placed_component_is_given_back_by_name():
    s = System("car")
    wheel = s.add("wheel", Mass(m=20.0))
    s.add("ground", Fixed())
    assert s.components["wheel"] is wheel and "wheel" in s.components and "tyre" not in s.components
    assert s.components[1] == ("ground", "Fixed", {})  # still the list write_scenario takes
    with pytest.raises(KeyError, match="no component 'whel' .*did you mean 'wheel'"):
        s.components["whel"]


def test_the_default_experiment_is_what_a_scenario_without_one_runs(tmp_path):
    """experiment() without a step (or no call at all) is the run of an SSD without a DefaultExperiment."""
    s = falling_mass()
    ssd = s.write(tmp_path / "written")
    text = ssd.read_text()
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "SystemStructure.ssd").write_text(re.sub(r"<ssd:DefaultExperiment.*?</ssd:DefaultExperiment>", "", text,
                                                     flags=re.S).replace(os.path.relpath(ssd.parent, bare), "."))
    read = load_scenario(bare, local=True, built_fmus=True)
    assert "DefaultExperiment" not in (bare / "SystemStructure.ssd").read_text()
    assert (s.stop_time, s.step_size) == (read.stop_time, read.step_size)
    s.experiment()
    assert (s.stop_time, s.step_size) == (read.stop_time, read.step_size)
    s.experiment(stop_time=2.0)
    assert (s.stop_time, s.step_size) == (2.0, read.step_size)


def test_write_scenario_without_an_experiment_writes_the_one_default(tmp_path):
    """write_scenario without stop or step writes the run of an SSD without a DefaultExperiment, System's."""
    from mechfmu.ssp.writer import write_scenario
    ssd = write_scenario(tmp_path / "written", "drop", [("mass", "Mass", {"m": 2.0})], [])
    bare = tmp_path / "bare"
    bare.mkdir()
    (bare / "SystemStructure.ssd").write_text(re.sub(r"<ssd:DefaultExperiment.*?</ssd:DefaultExperiment>", "",
                                                     ssd.read_text(), flags=re.S))
    written, default = load_scenario(ssd, local=True), load_scenario(bare, local=True)
    assert "DefaultExperiment" in ssd.read_text() and "DefaultExperiment" not in (bare / ssd.name).read_text()
    assert (written.stop_time, written.step_size) == (default.stop_time, default.step_size)
    assert (written.stop_time, written.step_size) == (System("s").stop_time, System("s").step_size)


def test_ctrl_c_in_a_script_raises_keyboard_interrupt_with_the_result_kept(monkeypatch):
    """A loop of three runs stops at the first Ctrl-C (sent at the run's 10th step): KeyboardInterrupt, its
    ``result`` the run's rows up to there, t_n = n·h; no later run starts."""
    from mechfmu.master import simulate as simulate_module
    from mechfmu.master.exchange import VARIABLE
    count, record = [0], simulate_module.record_point

    def record_point(run, observers, t):
        count[0] += 1
        if count[0] == 10:
            os.kill(os.getpid(), signal.SIGINT)
        record(run, observers, t)
    monkeypatch.setattr(simulate_module, "record_point", record_point)
    monkeypatch.setenv(VARIABLE, "python")  # call by call: every point passes record_point
    s = falling_mass()
    finished = []
    try:
        with pytest.raises(KeyboardInterrupt) as raised:
            for _ in range(3):
                finished.append(s.run(local=True))
    finally:
        INTERRUPT.requested = False
    assert finished == [] and isinstance(raised.value, RunInterrupted)
    result = raised.value.result
    assert result.status == "interrupted"
    assert np.array_equal(result.data["time"], np.arange(11) * 1e-3)
    assert np.allclose(result.data["mass.s"], result.data["time"] ** 2, rtol=0, atol=1e-12)


def test_messages_name_the_system_not_its_temporary_folder():
    s = falling_mass("quarter_car")
    with pytest.raises(ScenarioError) as refused:
        s.run(local=True, step=0.3)
    message = str(refused.value)
    assert "system 'quarter_car'" in message and tempfile.gettempdir() not in message, message


def test_a_step_that_does_not_divide_the_run_is_answered_with_round_steps_that_do():
    """2 s asked at 0.003 s: 0.002, 0.0025 and 0.004 s, each dividing 2 s exactly (as decimals)."""
    with pytest.raises(ValueError) as refused:
        step_count(0.0, 2.0, 0.003, 10 ** 9)
    message = str(refused.value)
    suggested = re.search(r"e\.g\. (.*?), or a stop", message).group(1)
    steps = re.findall(r"([0-9.e-]+) s \((\d+) steps\)", suggested)
    assert [s for s, _ in steps] == ["0.002", "0.0025", "0.004"], message
    for text, count in steps:
        assert Fraction(2) / Fraction(text) == int(count)
    assert "step 0.003 s does not divide the run from start 0 s to stop 2 s" in message


@pytest.mark.parametrize("span, h", [(2.0, 0.003), (1.0, 0.3), (5.0, 7e-4), (0.1, 3e-5), (3.7, 0.011)])
def test_each_suggested_step_divides_the_run(span, h):
    with pytest.raises(ValueError) as refused:
        step_count(0.0, span, h, 10 ** 9)
    for text, count in re.findall(r"([0-9.e-]+) s \((\d+) steps?\)", str(refused.value)):
        assert step_count(0.0, span, float(text), 10 ** 9) == int(count)


def test_numbers_in_messages_read_as_written():
    assert [number(x) for x in (1, 1.0, -40 * 9.81, 191.01500000000001, 0.1, 1e-9, 2.5e-3, "1")] == \
        ["1", "1", "-392.4", "191.015", "0.1", "1e-09", "0.0025", "'1'"]
    assert float(number(0.1 + 0.2)) == pytest.approx(0.1 + 0.2, rel=1e-12)
    assert measured(191.01500000000001) == "191.015" and with_unit("1", "1") == "1" and with_unit("2", "m") == "2 m"


@pytest.mark.parametrize("table, words", [("0, 0; 1", "row 2 has 1 values"), ("0, x; 1, 1", "is not a list of numbers"),
                                          ("1, 0; 0, 1", "not monotonic")])
def test_a_malformed_table_is_refused_where_it_is_given(table, words):
    with pytest.raises(ValueError, match=f"Table: table = '{re.escape(table)}' is not a valid table: .*{words}"):
        Table(table=table)


def road(folder) -> System:
    """A Table reading road.csv (rows 0, 0 and 1, 2: y(t) = 2t), its relative name found in ``folder``."""
    (folder / "road.csv").write_text("0, 0\n1, 2\n")
    s = System("road")
    s.add("road", Table(tableOnFile=True, fileName="road.csv"))
    s.experiment(stop_time=0.5, step_size=0.1)
    return s


def test_a_tables_relative_file_is_found_in_process(tmp_path, monkeypatch):
    """In the folder given to run(folder), and without one in the current directory (not the temporary folder
    the system is written to), as a script's open("road.csv") finds it."""
    s = road(tmp_path)
    assert s.run(tmp_path, local=True, estimate_error=False).final["road.y"] == pytest.approx(1.0, abs=1e-12)
    monkeypatch.chdir(tmp_path)
    assert s.run(local=True, estimate_error=False).final["road.y"] == pytest.approx(1.0, abs=1e-12)


def test_a_tables_relative_file_is_found_in_the_folder_given_to_run_through_the_fmus(fmus, tmp_path, monkeypatch):
    s = road(tmp_path)
    assert s.run(tmp_path, estimate_error=False).final["road.y"] == pytest.approx(1.0, abs=1e-12)
    monkeypatch.chdir(tmp_path)  # without a folder: the current directory
    assert s.run(estimate_error=False).final["road.y"] == pytest.approx(1.0, abs=1e-12)
    monkeypatch.chdir(tmp_path / "..")
    with pytest.raises(ValueError, match=r"Table 'road': fileName = 'road.csv' is not a file in "):
        s.run(estimate_error=False)
    (tmp_path / "inner").mkdir()
    with pytest.raises(ValueError, match=r"Table 'outside': fileName = '../road.csv' leads out of "):
        s2 = System("out")
        s2.add("outside", Table(tableOnFile=True, fileName="../road.csv"))
        s2.run(tmp_path / "inner", estimate_error=False)


def test_an_extras_install_command_works_in_the_checkout_it_is_installed_from(monkeypatch, tmp_path):
    """In a checkout (this one: pyproject.toml above the package) an extra comes from the checkout, not from the
    package index, which has no such mechfmu: pip's -e with the checkout's folder, "." from inside it."""
    from pathlib import Path

    from mechfmu.fmu.extras import install_command
    root = Path(__file__).resolve().parent.parent
    assert (root / "pyproject.toml").is_file()
    monkeypatch.chdir(tmp_path)
    assert install_command("studies") == f'pip install -e "{root}[studies]"'
    monkeypatch.chdir(root)
    assert install_command("cross") == 'pip install -e ".[cross]"'
