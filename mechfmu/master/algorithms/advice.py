"""The message of an iterative algorithm that did not converge: where, what, and what to do.

``non_convergence_message`` names the coupling variable with the largest residual (measured against
its own convergence threshold), the time and step, how the residual developed over the iterations,
and the remedies with the option names the command line accepts (``--step``, ``--option KEY=VALUE``
of the algorithm's ``Option`` schema, ``--algorithm``) and ``simulate``'s keywords. The first
remedy is the one the residual's history points to: more iterations if it was still falling fast,
a smaller step if it stalled (a stiff or switching element, such as contact or friction, whose
change over the step is too large for the iteration). When the algorithm had already halved the
step (its option ``step_reductions``), the message says so and offers more halvings first.
"""
from __future__ import annotations

import math
from collections.abc import Sequence

#: the residual fell below this fraction of its first value: more iterations are likely to help
STILL_FALLING = 1e-3
#: the suggested step: the failed step divided by this
STEP_DIVISOR = 10


def _g(x: float) -> str:
    return f"{x:.3g}"


def non_convergence_message(algorithm, t: float, h: float, labels: Sequence[str], residuals: Sequence[float],
                            thresholds: Sequence[float], history: Sequence[float], units: Sequence[str] = (),
                            alternatives: str = "", quantity: str = "residual", nominal_step: float = 0.0) -> str:
    """``labels[i]``: what residual i belongs to (a connection ``a.x -> b.y`` or a constraint),
    ``residuals[i]`` its last value, ``thresholds[i]`` what convergence required of it; ``history``:
    the largest residual of every iteration; ``alternatives``: other algorithms to suggest;
    ``quantity``: what the residual is called (fixed-point: "relative change"); ``nominal_step``: the
    macro step of which ``h`` is an automatically halved part (if ``h`` is shorter)."""
    ratios = [abs(r) / t_ if t_ > 0 else float("inf") for r, t_ in zip(residuals, thresholds)]
    order = sorted(range(len(ratios)), key=lambda i: -ratios[i])

    def unit(i: int) -> str:
        return f" {units[i]}" if i < len(units) and units[i] not in ("", "1") else ""

    worst = [f"{labels[i]} ({_g(residuals[i])}{unit(i)}, allowed {_g(thresholds[i])})"
             for i in order[:3] if ratios[i] > 1]
    name, n = algorithm.name, algorithm.max_iterations
    falling = len(history) > 1 and history[-1] < STILL_FALLING * history[0]
    trend = (f"the largest {quantity} went from {_g(history[0])} to {_g(history[-1])}" if len(history) > 1 else "")
    reduced = nominal_step > h
    halvings = round(math.log2(nominal_step / h)) if reduced else 0
    step = float(f"{(nominal_step if reduced else h) / STEP_DIVISOR:.2g}")
    more = (f"allow more iterations: --option max_iterations={4 * n} (now {n})"
            + (f"; the {quantity} was still falling" if falling else "; it has stalled, so this alone will not help"))
    stalled = "" if falling else f", and the {quantity} stalled"
    smaller = (f"reduce the step: --step {step:g} (h/{STEP_DIVISOR}; a stiff or switching element, such as contact "
               f"or friction, changes too much within h = {_g(nominal_step if reduced else h)} s for the "
               f"iteration{stalled})")
    remedies = [more, smaller] if falling else [smaller, more]
    if reduced:
        remedies.insert(0, f"allow more automatic halvings of the step: --option step_reductions={halvings + 6} "
                           f"(now {halvings}: the step of {_g(nominal_step)} s was halved down to {_g(h)} s)")
    reached = history[-1] if history else max(map(abs, residuals))
    remedies.append(f"loosen the tolerance: --option tolerance={algorithm.tolerance * 100:g} "
                    f"(now {algorithm.tolerance:g}) if a {quantity} of {_g(reached)} is acceptable")
    if alternatives:
        remedies.append(f"use an algorithm suited to the case: {alternatives}")
    part = f" of the step {nominal_step:.6g} s, after {halvings} halvings" if reduced else ""
    return (f"{name} coupling did not converge at t={t:.9g} s (step h={h:.6g} s{part}) after {n} iterations "
            f"(tolerance {algorithm.tolerance:g}): largest {quantity}{'s' if len(worst) > 1 else ''} on "
            + "; ".join(worst) + (f"; {trend}" if trend else "") + ". What to do: "
            + "; ".join(f"({k}) {r}" for k, r in enumerate(remedies, 1))
            + ". From Python: simulate(..., step=..., max_iterations=..., tolerance=..., step_reductions=...).")
