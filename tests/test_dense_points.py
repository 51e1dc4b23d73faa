"""The monolithic master's communication points, compiled (mechfmu.master.dense_points): the dense output at a
point is the Python one's to the bit, and the path is refused where a probe differs."""
import numpy as np
import pytest
from conftest import unavailable

from mechfmu.master import dense_points, exchange, integrators


@pytest.fixture
def compiled():
    if exchange.library() is None or dense_points.numpy_blas() is None:
        unavailable("no compiled exchange (a C compiler), or numpy without its bundled OpenBLAS")
    found = dense_points.compiled()
    assert found is not None, "numpy's BLAS is there but the probes refused the compiled points"
    return found


@pytest.mark.parametrize("size", [1, 2, 3, 7, 33, 64])
def test_the_dense_output_is_numpys_to_the_bit(compiled, size):
    """States of mixed magnitudes at points across the step, and at its ends: the same bytes as
    ``integrators.dense_at``, which is numpy's ``np.dot`` and ``+=``."""
    generator = np.random.default_rng(size)
    for _ in range(20):
        q = generator.standard_normal((size, 3)) * 10.0 ** generator.integers(-9, 9, (size, 3))
        parts = (100 * generator.random(), 10.0 ** generator.integers(-7, 0), q, generator.standard_normal(size))
        python = integrators.dense_at(*parts)
        for t in (parts[0], parts[0] + parts[1], *(parts[0] + parts[1] * generator.random(8))):
            assert compiled.at(parts, float(t)).tobytes() == python(float(t)).tobytes()


def test_the_points_stop_where_the_master_must_act(compiled):
    """Grid t0 + k h from point n on: not past the integrator's time, not at or past a pending event, the last
    point at the stop; at the integrator's own time its states, not the dense output's."""
    q, y_old = np.array([[1.0, 0.5, 0.25], [2.0, 0.0, -1.0]]), np.array([3.0, 4.0])
    parts = (0.0, 0.01, q, y_old)
    solver_y = np.array([-1.0, -2.0])
    points = np.zeros((20, 2))
    fill = compiled.fill
    assert fill(0.0, 1e-3, 1.0, 0, 20, 1000, np.inf, 0.0105, False, solver_y, parts, points) == 10
    assert fill(0.0, 1e-3, 1.0, 0, 20, 1000, 0.005, 0.0105, False, solver_y, parts, points) == 4  # before 5e-3
    assert fill(0.0, 1e-3, 1.0, 0, 4, 1000, np.inf, 0.0105, False, solver_y, parts, points) == 4  # at most 4
    assert fill(0.0, 1e-3, 0.0095, 0, 20, 10, np.inf, 0.0095, False, solver_y, parts, points) == 10
    assert points[9].tolist() == solver_y.tolist()  # the stop, 9.5e-3 s, is where the integrator is
    dense = integrators.dense_at(*parts)
    assert points[3].tobytes() == dense(0.004).tobytes()
    assert fill(0.0, 1e-3, 1.0, 0, 20, 1000, np.inf, 0.0095, True, solver_y, parts, points) == 9


def test_a_probe_that_differs_refuses_the_compiled_path(compiled, monkeypatch):
    """Where numpy's product is not the one the compiled points call (another BLAS), the loop stays Python's."""
    exact = integrators.dense_at

    def one_ulp_off(*parts):
        at = exact(*parts)
        return lambda t: np.nextafter(at(t), np.inf)
    monkeypatch.setattr(integrators, "dense_at", one_ulp_off)
    assert dense_points._checked() is None
