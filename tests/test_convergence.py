"""Coupled scenarios against closed-form solutions (in-process slaves; FMU == in-process is
shown bit for bit in test_fmus.py)."""
import math
import re

import numpy as np
import pytest
from fmpy.util import read_csv

from mechfmu.master.simulate import simulate

STEPS = (1e-3, 5e-4, 2.5e-4, 1.25e-4)


def damped_step_response(t, m=5.0, k=5000.0, d=80.0, F=1.0):
    """x(t) of m x'' + d x' + k x = F, x(0) = x'(0) = 0 (underdamped)."""
    wn = math.sqrt(k / m)
    zeta = d / (2 * math.sqrt(k * m))
    wd = wn * math.sqrt(1 - zeta**2)
    return F / k * (1 - np.exp(-zeta * wn * t) * (np.cos(wd * t) + zeta / math.sqrt(1 - zeta**2) * np.sin(wd * t)))


def oscillator_error(algorithm, h):
    result = simulate("scenarios/oscillator_linear", algorithm=algorithm, step=h, local=True)
    assert result.ok, result.message
    x = damped_step_response(result.data["time"])
    return np.abs(result.data["mass.s"] - x).max() / np.abs(x).max()


@pytest.mark.parametrize("algorithm", ["jacobi", "gauss-seidel"])
@pytest.mark.slow
def test_oscillator_first_order_convergence(algorithm):
    errors = [oscillator_error(algorithm, h) for h in STEPS]
    ratios = [a / b for a, b in zip(errors, errors[1:])]
    print(f"\n{algorithm}: relative max errors {errors}, ratios {ratios}")
    assert all(r >= 1.8 for r in ratios)  # first order: 2 per halving, minus higher-order terms
    # zero-order-hold phase error ~ ωh per period: ω = 31.6 rad/s, h = 1e-4 s -> ~3e-3 of the amplitude
    # after the step response settles (0.1 s), measured 1.0e-3
    assert oscillator_error(algorithm, 1e-4) < 2e-3


def two_mass(h, **options):
    result = simulate("scenarios/two_mass_oscillator", step=h, local=True, **options)
    assert result.ok, result.message
    d = result.data
    t = d["time"]
    x1 = 0.5 * np.cos(2 * np.pi * t) + 0.5 * np.cos(6 * np.pi * t)
    k, K = 4 * np.pi**2, 16 * np.pi**2
    energy = (0.5 * (d["mass1.v"]**2 + d["mass2.v"]**2) + 0.5 * k * d["mass1.s"]**2
              + 0.5 * K * (d["mass2.s"] - d["mass1.s"])**2 + 0.5 * k * d["mass2.s"]**2)
    return np.abs(d["mass1.s"] - x1).max(), energy


@pytest.mark.slow
def test_two_mass_oscillator_against_closed_form():
    errors = [two_mass(h)[0] for h in STEPS]
    ratios = [a / b for a, b in zip(errors, errors[1:])]
    error, energy = two_mass(1e-4)
    drift = (energy[-1] - 10 * np.pi**2) / (10 * np.pi**2)
    print(f"\ntwo-mass: max |x1 error| {errors} ratios {ratios}; at h=1e-4 {error:.3e}, "
          f"relative energy drift over 2 s {drift:+.3e}")
    assert energy[0] == pytest.approx(10 * np.pi**2, rel=1e-14)  # the initial state, round-off only
    assert all(r >= 1.8 for r in ratios)  # first order: 2 per halving, minus higher-order terms
    # explicit coupling: phase error ~ (ωh)·(ωt)/2 with ω = 6π rad/s, h = 1e-4 s, t = 2 s: 0.7e-2 of
    # the amplitude 1 m
    assert error < 2e-2


def test_strict_exchange_lags_and_is_less_accurate():
    ordered = oscillator_error("jacobi", 1e-4)
    result = simulate("scenarios/oscillator_linear", step=1e-4, local=True, exchange="strict")
    x = damped_step_response(result.data["time"])
    strict = np.abs(result.data["mass.s"] - x).max() / np.abs(x).max()
    print(f"\nordered {ordered:.3e} strict {strict:.3e} ratio {strict / ordered:.2f}")
    assert strict > 1.5 * ordered  # measured 3.0x: the strict order lags the spring force a full step


def _cli(*args):
    import subprocess
    import sys
    proc = subprocess.run([sys.executable, "-m", "mechfmu.cli", "run", *args, "--local"], capture_output=True, text=True,
                          timeout=600)
    return proc.returncode, proc.stdout + proc.stderr


def _newton_stall(scenario: str, stop: str, step: str, tmp_path) -> tuple[str, np.ndarray, np.ndarray]:
    """newton (coupling=implicit) at ``step``: without step reductions it stops, and the message advises
    h/10 first (the residual stalled); a run with that step completes (the fine reference); by default
    the run completes by halving the steps that do not converge. Returns the message and the data of
    the fine and of the default run."""
    base = [f"scenarios/{scenario}", "--algorithm", "newton", "--option", "coupling=implicit", "--stop", stop]
    code, out = _cli(*base, "--step", step, "--option", "step_reductions=0")
    assert code == 1, out
    message = out[out.index("newton coupling did not converge"):]
    advised = re.search(r"What to do: \(1\) reduce the step: --step (\S+) \(h/10", message)
    assert advised and "the residual stalled" in message, message
    assert float(advised.group(1)) == pytest.approx(float(step) / 10, rel=1e-12)
    code, out = _cli(*base, "--step", advised.group(1), "--out", str(tmp_path / "fine.csv"))
    assert code == 0, out
    code, out = _cli(*base, "--step", step, "--out", str(tmp_path / "recovered.csv"))
    assert code == 0, out
    reductions = int(re.search(r"step_reductions (\d+)", out).group(1))
    assert reductions >= 1, out
    fine, recovered = (read_csv(str(tmp_path / name)) for name in ("fine.csv", "recovered.csv"))
    return message, fine, recovered


def _on_the_coarse_grid(fine: np.ndarray, coarse: np.ndarray, name: str) -> float:
    """max |coarse − fine| of ``name`` at the coarse run's times (the grids are nested)."""
    k = round((coarse["time"][1] - coarse["time"][0]) / (fine["time"][1] - fine["time"][0]))
    reference = fine[name][::k]
    assert np.allclose(fine["time"][::k], coarse["time"], rtol=0, atol=1e-12)
    return float(np.max(np.abs(coarse[name] - reference)))


@pytest.mark.slow
def test_newton_at_an_impact_halves_the_step_and_agrees_with_a_fine_run(tmp_path):
    """Newton (coupling=implicit) at the ball's impact, h = 2e-3,
    stalls (the friction force flips by ~600 N per iteration). Without step reductions the message names
    the connection with the largest residual, the time, and remedies with the command line's own option
    names, the step first; the advised step completes. By default the failing step is halved instead and
    the run completes, within 5e-4 m of the run at h/10 over the bounce (measured 2.5e-4 m: the
    trapezoidal coupling's error at h = 2e-3 s through the contact, second order)."""
    message, fine, recovered = _newton_stall("ball_drop", "0.4", "2e-3", tmp_path)
    assert "did not converge at t=0.288 s (step h=0.002 s) after 20 iterations" in message
    assert "largest residuals on contact.sphere.force.x -> ball.force_a.x (" in message
    assert "(2) allow more iterations: --option max_iterations=80 (now 20); it has stalled" in message
    assert "--option tolerance=1e-08 (now 1e-10)" in message and "--algorithm fixed-point" in message
    assert _on_the_coarse_grid(fine, recovered, "ball.position.y") < 5e-4


@pytest.mark.slow
def test_newton_at_a_friction_velocity_crossing_halves_the_step_and_agrees_with_a_fine_run(tmp_path):
    """A mass dragged by a belt through
    regularized Stribeck friction (belt_friction) reaches the belt's speed at t = 1.19 s, where the
    friction force turns within a step; newton (coupling=implicit) at h = 1e-3 stalls there (residual
    23 -> 13.8 N in 20 iterations). The message names the friction connection and advises h/10 first,
    which completes; by default the step is halved and the run completes, its mass position within
    1e-2 m of the run at h/10 (the stick/slip switches act a step late, an error of order |v|·h = 4e-3 m
    per switch at 4 m/s)."""
    message, fine, recovered = _newton_stall("belt_friction", "1.25", "1e-3", tmp_path)
    assert "did not converge at t=1.191 s (step h=0.001 s) after 20 iterations" in message
    assert "largest residuals on friction.flange_a.f -> belt.flange_b.f (" in message
    assert _on_the_coarse_grid(fine, recovered, "mass.s") < 1e-2


def test_a_step_that_fails_after_every_halving_says_so():
    """A step that does not converge after step_reductions halvings (one iteration allowed, near the
    impact): the run stops, the message says how far the step was halved and offers more halvings
    first. (Earlier steps of the run were recovered by halving: the counter adds those.)"""
    r = simulate("scenarios/ball_drop", algorithm="newton", coupling="implicit", step=2e-3, stop=0.3, local=True,
                 max_iterations="1", step_reductions="3")
    assert r.status == "error" and r.counters["step_reductions"] >= 3, r.message
    assert "(step h=0.00025 s of the step 0.002 s, after 3 halvings)" in r.message, r.message
    assert "What to do: (1) allow more automatic halvings of the step: --option step_reductions=9 (now 3: the " \
           "step of 0.002 s was halved down to 0.00025 s)" in r.message, r.message


def test_iterations_advice_when_the_residual_was_still_falling():
    """A Newton that was converging but ran out of iterations is told to allow more, first; with
    the advised max_iterations the run completes."""
    r = simulate("scenarios/geared_masses", step=1e-3, stop=0.2, local=True, max_iterations="1",
                 step_reductions="0")
    assert r.status == "error"
    assert "largest residuals on spring.flange_b.f -> mass1.flange_a.f (" in r.message
    assert "constraint 'gear' constraintEquation (unknown lambda)" in r.message
    advised = re.search(r"What to do: \(1\) allow more iterations: --option max_iterations=(\d+) \(now 1\); "
                        r"the residual was still falling", r.message)
    assert advised, r.message
    r = simulate("scenarios/geared_masses", step=1e-3, stop=0.2, local=True, max_iterations=advised.group(1))
    assert r.ok, r.message


def test_fixed_point_non_convergence_names_the_relative_change():
    r = simulate("scenarios/two_mass_oscillator", algorithm="fixed-point", step=1e-3, stop=0.1, local=True,
                 parameters={"spring2": {"stiffness": 1e8}}, max_iterations="3", relaxation="none",
                 step_reductions="0")
    assert r.status == "error" and "fixed-point coupling did not converge at t=0 s" in r.message
    assert "largest relative changes on spring1.flange_b.f -> mass1.flange_a.f (1.02, allowed 1e-10)" in r.message
    assert "--option relaxation=aitken (now none)" in r.message
    assert "--algorithm newton --option coupling=implicit" in r.message
