"""Other tools' results at their true times (mechfmu/crosscheck/tool_results.py)."""
import numpy as np

from mechfmu.crosscheck.tool_results import fmpy_columns, values_at


def test_fmpy_rows_go_to_the_end_of_their_step_and_bodies_come_from_their_flanges():
    rows = np.array([(0.0, 1.05, 2.0, 0.5), (0.1, 1.15, 2.5, 0.6)],
                    dtype=[("time", float), ("cart.flange_a.s", float), ("cart.flange_a.v", float),
                           ("wheel.flange_b.phi", float)])
    columns = fmpy_columns(rows, 0.1, {"cart": 0.1, "wheel": 0.0, "absent": 1.0})
    np.testing.assert_allclose(columns["time"], [0.1, 0.2])
    np.testing.assert_allclose(columns["cart.s"], [1.1, 1.2])  # the flange is L/2 behind the centre
    np.testing.assert_array_equal(columns["cart.v"], [2.0, 2.5])
    np.testing.assert_array_equal(columns["wheel.phi"], [0.5, 0.6])
    assert not any(name.startswith("absent") for name in columns)


def test_an_element_between_two_recorded_flanges_gets_its_relative_position():
    rows = np.array([(0.0, 1.0, 1.5, 0.2)], dtype=[("time", float), ("gap.flange_a.s", float),
                                                    ("gap.flange_b.s", float), ("gap.flange_a.v", float)])
    columns = fmpy_columns(rows, 1e-3, {})
    assert columns["gap.s_rel"][0] == 0.5 and "gap.v_rel" not in columns


def test_a_body_column_fmpy_recorded_is_kept():
    rows = np.array([(0.0, 3.0, 1.0)], dtype=[("time", float), ("m.s", float), ("m.flange_b.s", float)])
    assert fmpy_columns(rows, 1e-3, {"m": 2.0})["m.s"][0] == 3.0


def test_values_at_take_the_row_after_an_event_and_interpolate_between_rows_elsewhere():
    tool_times = np.array([0.0, 0.1, 0.2, 0.2, 0.4])
    values = np.array([0.0, 1.0, 2.0, 5.0, 7.0])
    wanted = np.array([0.1 + 1e-12, 0.2, 0.3, 0.05, 0.5, -0.1])
    at, between = values_at(wanted, tool_times, values)
    np.testing.assert_allclose(at[:4], [1.0, 5.0, 6.0, 0.5])  # 0.3: from the row after the event at 0.2
    assert np.isnan(at[4]) and np.isnan(at[5])  # outside the tool's rows
    assert between.tolist() == [False, False, True, True, False, False]
