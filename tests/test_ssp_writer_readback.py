"""``write_scenario`` reads back the SSD it writes: every value as a run reads it, or the file is not written."""
import pytest

from mechfmu.ssp import writer
from mechfmu.ssp.scenario import load_scenario

TABLE = "0, 0;\n1,\t2.5; 2, 1e-300"
FILE = "a name with \"quotes\", <tags> & ümlaute.csv"  # not read: the table is given as text


def components():
    return [("road", "Table", {"table": TABLE, "columns": 2, "tableOnFile": False, "fileName": FILE,
                                "offset": 0.1}),
            ("mass", "Mass", {"m": 1 / 3, "s_start": -0.0, "v_start": 5e-324})]


def test_every_written_value_reads_back_as_written(tmp_path):
    """Text with line breaks, tabs, quotes and markup, an Integer, a Boolean, a Real that needs 17 digits, a
    negative zero and the smallest subnormal: the loader reads each as the Python value given."""
    ssd = writer.write_scenario(tmp_path / "s", "s", components(), [], stop_time=1.0, step_size=0.1)
    loaded = load_scenario(ssd, check=False)
    assert loaded.components["road"].parameters == {"table": TABLE, "columns": 2, "tableOnFile": False,
                                                    "fileName": FILE, "offset": 0.1}
    mass = loaded.components["mass"].parameters
    assert mass == {"m": 1 / 3, "s_start": 0.0, "v_start": 5e-324} and str(mass["s_start"]) == "-0.0"


def test_a_value_that_does_not_read_back_is_refused_and_nothing_written(tmp_path, monkeypatch):
    monkeypatch.setattr(writer, "repr", lambda value: f"{value:.3g}", raising=False)  # a writer losing digits
    with pytest.raises(ValueError, match=r"component 'mass': m = 0.3333333333333333 does not read back from the "
                                         r"written SSD \(it reads 0.333\)"):
        writer.write_scenario(tmp_path / "s", "s", components(), [], stop_time=1.0, step_size=0.1)
    assert not (tmp_path / "s" / "SystemStructure.ssd").exists()
