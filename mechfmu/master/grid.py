"""The grid of a run: how many macro steps (``step_count``: the step must divide the run, else round steps that do
are suggested, ``dividing_steps``), and which of them are recorded (``output_every``)."""
from __future__ import annotations

import math

from mechfmu.components.number_text import number


def output_every(interval: float | None, h: float) -> int:
    """Steps between recorded points for an output interval (None: every step); it must be a
    positive multiple of the step h."""
    if interval is None:
        return 1
    if not (interval > 0 and math.isfinite(interval / h)):  # round() of an infinite ratio would fail unnamed
        raise ValueError(f"output interval {number(interval)} s must be a positive multiple of the step {number(h)} s")
    every = round(interval / h)
    if not (every >= 1 and abs(interval - every * h) <= 1e-9 * interval):
        raise ValueError(f"output interval {number(interval)} s must be a positive multiple of the step {number(h)} s")
    return every


#: most macro steps a run may take unless the caller allows more (``max_steps``, ``--max-steps``)
MAX_STEPS = 100_000_000
#: a step divides the run if (stop − start)/step is within this fraction of a whole number of steps: the
#: rounding of the division and of the times, as the FMUs' own check of a step's time (relative 1e-9)
DIVIDES = 1e-9
#: a recorded output beyond this multiple of the run's scale (max(1, largest |output| at the start),
#: SI units) is divergence; the shipped scenarios stay below 1e4 (limit_stops' stiff stops)
DIVERGENCE_FACTOR = 1e8


def step_count(t0: float, t_stop: float, h: float, max_steps: int) -> int:
    """Macro steps from t0 to t_stop with step h; refused beyond ``max_steps`` and unless h divides the run
    (to ``DIVIDES``). A run ends at t_stop, on a uniform grid: a step that does not divide the run is refused,
    not cut short at the end (a last step shortened to a sliver is a different step for the coupling, which
    can turn a stable explicit run unstable, and a non-uniform grid is not what co-simulation tools expect)."""
    if not all(map(math.isfinite, (t0, t_stop, h))) or not h > 0 or not t_stop > t0:
        raise ValueError(f"step {number(h)} s must be positive and finite, and stop {number(t_stop)} s finite "
                         f"and after start {number(t0)} s")
    steps = (t_stop - t0) / h
    if not steps <= max_steps:
        raise ValueError(f"the run needs {steps:.3g} steps (from {number(t0)} s to {number(t_stop)} s with step "
                         f"{number(h)} s), "
                         f"more than max_steps = {max_steps}; use a larger step or a shorter run, or allow it "
                         f"with max_steps=N (command line: --max-steps N)")
    whole = round(steps)
    if whole < 1 or abs(steps - whole) > DIVIDES * steps:
        fewer, more = math.floor(steps), math.floor(steps) + 1
        stops = [f"{t0 + n * h:.12g} s" for n in (fewer, more) if n >= 1]
        raise ValueError(f"step {number(h)} s does not divide the run from start {number(t0)} s to stop "
                         f"{number(t_stop)} s: that is {steps:.6g} steps, the {'last' if fewer else 'only'} one cut "
                         f"to {(t_stop - t0) - fewer * h:.6g} s; use a step that divides it, e.g. "
                         f"{' or '.join(dividing_steps(t_stop - t0, h))}, or a stop the steps reach, e.g. "
                         f"{' or '.join(stops)}")
    return whole


#: the leading digits of a round step (times a power of 10): 1, 2, 2.5, 4, 5 (1 ms, 2 ms, 2.5 ms, 4 ms, 5 ms, ...)
ROUND_STEPS = ("1", "2", "2.5", "4", "5")


def dividing_steps(span: float, h: float) -> list[str]:
    """Round steps near ``h`` [s] that divide ``span`` [s] (``ROUND_STEPS`` times a power of 10; the two below ``h``
    and the one above, as text with their counts), else the steps span/n next to ``h``."""
    steps = [float(f"{lead}e{power}") for power in range(math.floor(math.log10(h)) - 3, math.floor(math.log10(h)) + 3)
             for lead in ROUND_STEPS]
    dividing = [x for x in steps if x <= span and abs(span / x - round(span / x)) <= DIVIDES * span / x]
    chosen = [x for x in dividing if x < h][-2:] + [x for x in dividing if x > h][:1]
    if not chosen:
        n = math.floor(span / h)
        chosen = [span / k for k in (n + 1, n) if k >= 1]
    return [f"{x:.12g} s ({round(span / x)} step{'s' if round(span / x) > 1 else ''})" for x in chosen]
