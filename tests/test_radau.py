"""The monolithic master's Radau IIA against scipy's, bit for bit, and its kernels against scipy's functions: the
same steps, states, dense output and counters on stiff problems, with a Jacobian and by differences; a run that
does not import scipy's packages."""
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
import scipy.integrate
import scipy.linalg
import scipy.optimize

from mechfmu.master import radau, scipy_kernels

ROOT = Path(__file__).resolve().parent.parent


def van_der_pol(mu):
    def fun(t, y):
        return [y[1], mu * (1 - y[0] ** 2) * y[1] - y[0]]

    def jac(t, y):
        return [[0.0, 1.0], [-2 * mu * y[0] * y[1] - 1, mu * (1 - y[0] ** 2)]]
    return fun, jac


def robertson(t, y):
    return [-0.04 * y[0] + 1e4 * y[1] * y[2], 0.04 * y[0] - 1e4 * y[1] * y[2] - 3e7 * y[1] ** 2, 3e7 * y[1] ** 2]


def steps(solver, t_check):
    """Every step's (t, y, dense output at its nodes and at t_check when inside) until the solver stops."""
    out = []
    while solver.status == "running":
        solver.step()
        dense = solver.dense_output() if solver.t_old is not None else None
        inside = dense is not None and min(solver.t_old, solver.t) <= t_check <= max(solver.t_old, solver.t)
        out.append((solver.status, solver.t, solver.y.tobytes(),
                    dense(np.linspace(solver.t_old, solver.t, 4)).tobytes() if dense is not None else None,
                    dense(t_check).tobytes() if inside else None))
    return out, (solver.nfev, solver.njev, solver.nlu)


CASES = {
    "van der Pol, mu 1000, Jacobian": (van_der_pol(1000)[0], [2.0, 0.0], 0.0, 300.0, 1e-6, 1e-8, van_der_pol(1000)[1]),
    "van der Pol, mu 100, differences": (van_der_pol(100)[0], [2.0, 0.0], 0.0, 50.0, 1e-5, 1e-7, None),
    "Robertson, atol per state": (robertson, [1.0, 0.0, 0.0], 0.0, 1e3, 1e-6, np.array([1e-8, 1e-12, 1e-8]), None),
    "backwards in time": (van_der_pol(10)[0], [2.0, 0.0], 10.0, 0.0, 1e-7, 1e-9, van_der_pol(10)[1]),
    "no states": (lambda t, y: [], np.zeros(0), 0.0, 1.0, 1e-6, 1e-8, None),
}


@pytest.mark.parametrize("case", CASES)
def test_radau_takes_scipys_steps_bit_for_bit(case):
    fun, y0, t0, t1, rtol, atol, jac = CASES[case]
    ours = steps(radau.Radau(fun, t0, np.array(y0, dtype=float), t1, rtol=rtol, atol=atol, jac=jac), (t0 + t1) / 3)
    theirs = steps(scipy.integrate.Radau(fun, t0, np.array(y0, dtype=float), t1, rtol=rtol, atol=atol, jac=jac),
                   (t0 + t1) / 3)
    assert len(ours[0]) == len(theirs[0]) and ours == theirs
    assert ours[0][-1][0] == "finished" and (len(y0) == 0 or len(ours[0]) > 20)


def test_a_failing_integration_fails_as_scipys():
    """dy/dt = y^2 from 1 blows up at t = 1: both stop failed, at the same t."""
    def fun(t, y):
        return y ** 2
    ours = radau.Radau(fun, 0.0, np.array([1.0]), 2.0, rtol=1e-8, atol=1e-10)
    theirs = scipy.integrate.Radau(fun, 0.0, np.array([1.0]), 2.0, rtol=1e-8, atol=1e-10)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert steps(ours, 0.5) == steps(theirs, 0.5)
    assert ours.status == "failed" and abs(ours.t - 1.0) < 1e-6  # at the pole


def test_the_kernels_from_scipys_public_modules_give_the_same_bits(monkeypatch):
    """Where scipy's extension files are not found, the kernels come from its public modules: the same steps."""
    fun, jac = van_der_pol(1000)
    direct = steps(radau.Radau(fun, 0.0, np.array([2.0, 0.0]), 100.0, rtol=1e-6, atol=1e-8, jac=jac), 1.0)
    monkeypatch.setattr(scipy_kernels, "_extension", lambda name: None)
    scipy_kernels._lapack.cache_clear()
    scipy_kernels._zeros.cache_clear()
    try:
        assert scipy_kernels._lapack() is scipy.linalg.lapack and scipy_kernels._zeros() is None
        assert steps(radau.Radau(fun, 0.0, np.array([2.0, 0.0]), 100.0, rtol=1e-6, atol=1e-8, jac=jac), 1.0) == direct
        assert scipy_kernels.brentq(np.cos, 0.0, 3.0, xtol=1e-15) == scipy.optimize.brentq(np.cos, 0.0, 3.0, xtol=1e-15)
    finally:
        scipy_kernels._lapack.cache_clear()
        scipy_kernels._zeros.cache_clear()


def test_lu_and_brentq_are_scipys():
    rng = np.random.default_rng(3)
    for a in (rng.normal(size=(5, 5)), rng.normal(size=(4, 4)) + 1j * rng.normal(size=(4, 4))):
        b = rng.normal(size=a.shape[0])
        lu, piv = scipy_kernels.lu_factor(a.copy())
        expected = scipy.linalg.lu_factor(a.copy(), overwrite_a=True)
        assert np.array_equal(lu, expected[0]) and np.array_equal(piv, expected[1])
        assert np.array_equal(scipy_kernels.lu_solve((lu, piv), b.copy()),
                              scipy.linalg.lu_solve(expected, b.copy(), overwrite_b=True))
    with pytest.warns(scipy_kernels.SingularMatrixWarning, match="Diagonal number 2 is exactly zero"):
        scipy_kernels.lu_factor(np.array([[1.0, 2.0], [2.0, 4.0]]))
    with pytest.raises(ValueError, match="infs or NaNs"):
        scipy_kernels.lu_factor(np.array([[1.0, np.nan], [0.0, 1.0]]))
    with pytest.raises(ValueError, match="infs or NaNs"):
        scipy_kernels.lu_solve(scipy_kernels.lu_factor(np.eye(2)), np.array([np.inf, 0.0]))
    for f, a, b in ((np.cos, 0.0, 3.0), (lambda x: x ** 3 - 2 * x - 5, 2.0, 3.0), (np.expm1, -1.0, 0.5)):
        assert scipy_kernels.brentq(f, a, b, xtol=1e-15) == scipy.optimize.brentq(f, a, b, xtol=1e-15)
    with pytest.raises(ValueError, match="different signs"):
        scipy_kernels.brentq(np.cos, 0.0, 1.0, xtol=1e-12)
    with pytest.raises(ValueError, match="NaN"):
        scipy_kernels.brentq(lambda x: np.nan if x > 0.5 else x - 0.7, 0.0, 1.0, xtol=1e-12)


def test_a_monolithic_run_imports_none_of_scipys_packages():
    """A run of the monolithic master with state events (Radau, Brent's method) loads scipy's kernels only."""
    script = ("import sys; from mechfmu.master.simulate import simulate; "
              "r = simulate('scenarios/msl/Brake', record=False); "
              "print(r.algorithm, r.status, r.counters['state_events'] > 0, "
              "sorted(m for m in sys.modules if m.startswith('scipy')))")
    run = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split()[:3] == ["monolithic", "ok", "True"], run.stdout
    assert run.stdout.strip().endswith("[]"), run.stdout  # no scipy module stays in sys.modules
