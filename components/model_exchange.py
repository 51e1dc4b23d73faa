"""Model Exchange (FMI 2.0 §3) of a component: continuous states, their derivatives, event indicators, time
events and the discrete update at an event.

A component is an ODE in its ``continuous_states`` (entries of ``state``, ``name`` or ``name[i]`` of a list, in
this order):
``derivatives()`` is d/dt of them at ``time``, ``state`` and the inputs; the outputs are ``compute_outputs`` at
the same point. A solver evaluates these at trial points it may reject, so none of them changes anything (no
side effect). Hidden modes (friction, contact) change only in ``update_discrete_states`` (event mode), which
the importer calls after initialization, at every zero of an ``event_indicators`` entry (the ``indicator.*``
outputs) and at ``next_time_event``; it says whether the continuous states were set anew.

Time: ``set_time`` moves the model's time for the next evaluations; it may not go before the last event or
completed integrator step (``completed_integrator_step``, ``update_discrete_states``): the states were
accepted there. A call of ``set_time`` puts the component in Model Exchange use (``in_model_exchange``): at a
time event not yet handled in event mode (also after ``completed_integrator_step`` there) its outputs are the left
limits there (components/signals.py), as
FMI 2.0 has a model keep its values until the event is handled; co-simulation never calls it.

A component without an ODE form (an algebraic constraint between bodies) says why in ``co_simulation_only``
and offers Co-Simulation only.
"""
from __future__ import annotations

import bisect
import math
from typing import TYPE_CHECKING, Any, ClassVar

from .number_text import number
from .partials import derivative_variable, state_variable

#: a saved time that is none (-inf, which a state's JSON cannot hold)
NO_TIME = -1e308


class ModelExchange:
    """The Model Exchange side of ``components.base.Component`` (which provides ``state``, ``time``,
    ``values``, ``current_outputs``, ``outputs`` and ``error``)."""

    #: names of the continuous states: entries of ``state``, in FMI order, and their units
    continuous_states: ClassVar[tuple[str, ...]] = ()
    state_units: ClassVar[tuple[str, ...]] = ()
    #: why the component has no Model Exchange form ("" if it has one)
    co_simulation_only: ClassVar[str] = ""
    #: per output, the continuous states it depends on (``output_states()``); None: the states ``partial_pattern``
    #: pairs it with
    outputs_on_states: ClassVar[dict[str, tuple[str, ...]] | None] = None
    #: per continuous state, the knowns (``state.x``, inputs) its derivative depends on (``derivative_knowns()``);
    #: None: the analytic partials' pairs where they have the derivative's row, else every state and input
    derivatives_on: ClassVar[dict[str, tuple[str, ...]] | None] = None

    state: dict[str, Any]
    time: float
    initialized: bool
    _cache: Any
    _accepted_time: float = -math.inf
    #: the time [s] of the last event mode: time events up to it are handled
    _event_time: float = -math.inf
    #: set by ``set_time``: driven through Model Exchange, not by ``do_step``
    in_model_exchange: bool = False

    def set_time(self, t: float) -> None:
        """The time of the next evaluations [s]; not before the last accepted point."""
        t = float(t)
        if not math.isfinite(t) or t < self._accepted_time:
            raise self.error("time", t, f"must be finite and not before {number(self._accepted_time)} s, the last "
                                        "event or completed integrator step")
        self.time = t
        self.in_model_exchange = True
        self._cache = None

    def saved_times(self) -> list[float]:
        """The last accepted point and the last event mode [s] as an FMU state holds them (``NO_TIME``: none)."""
        return [max(self._accepted_time, NO_TIME), max(self._event_time, NO_TIME)]

    def restore_times(self, saved: list[float]) -> None:
        """Back to the points of ``saved_times``: an importer that sets an earlier state goes on from there."""
        self._accepted_time, self._event_time = (-math.inf if t <= NO_TIME else t for t in saved)

    def pending_time_event(self) -> bool:
        """In Model Exchange use, the model's time is a time event not yet handled in event mode (whether or not
        the solver completed a step there: OMSimulator calls fmi2CompletedIntegratorStep at the event's time
        and reads the outputs before event mode); never in initialization mode, whose equations evaluate the
        relations at the start time itself, as Modelica's initial equations do."""
        if not (self.initialized and self.in_model_exchange and self.time > self._event_time):
            return False
        events = self.time_events()
        found = bisect.bisect_left(events, self.time)
        return found < len(events) and events[found] == self.time

    def time_events(self) -> list[float]:
        """Every time [s] at which the model must be in event mode (sorted: searched by bisection; none by
        default)."""
        return []

    def get_continuous_states(self) -> list[float]:
        return [float(self._slot(name)[0][self._slot(name)[1]]) for name in self.continuous_states]

    def _slot(self, name: str) -> tuple[Any, Any]:
        """(container, key) of a continuous state: ``s`` is ``state["s"]``, ``q[2]`` is ``state["q"][2]``."""
        if name.endswith("]"):
            entry, index = name[:-1].split("[")
            return self.state[entry], int(index)
        return self.state, name

    def set_continuous_states(self, values: list[float]) -> None:
        """Set every continuous state; ComponentError naming the state for a wrong count or a non-finite value."""
        names = self.continuous_states
        if len(values) != len(names):
            raise self.error("continuous states", list(values), f"must be {len(names)} values "
                                                                f"({', '.join(names) or 'none'})")
        for name, value in zip(names, values):
            if not math.isfinite(value):
                raise self.error(f"state {name}", value, "must be finite")
        for name, value in zip(names, values):
            container, key = self._slot(name)
            container[key] = float(value)
        self._cache = None

    def derivatives(self) -> list[float]:
        """d/dt of ``continuous_states`` now (no side effect)."""
        return []

    def event_indicators(self) -> list[float]:
        """The ``indicator.*`` outputs now, in declaration order (no side effect)."""
        names = self.indicator_names()
        if not names:
            return []
        outputs = self.current_outputs()
        return [float(outputs[name]) for name in names]

    @classmethod
    def state_variables(cls) -> list[str]:
        """The FMU variables of the continuous states (``state.s``) and, below, of their derivatives."""
        return [state_variable(name) for name in cls.continuous_states]

    @classmethod
    def derivative_variables(cls) -> list[str]:
        return [derivative_variable(name) for name in cls.continuous_states]

    @classmethod
    def output_states(cls) -> dict[str, tuple[str, ...]]:
        """Per output, the continuous states (names of ``continuous_states``) it depends on: FMI 2.0 counts them
        among an output's knowns (ModelStructure/Outputs lists them with its feed-through inputs). From
        ``outputs_on_states``, or else the (output, state) pairs of the analytic partials (``partial_pattern``)."""
        if cls.co_simulation_only or not cls.continuous_states:
            return {}
        if cls.outputs_on_states is not None:
            return {o.name: tuple(cls.outputs_on_states.get(o.name, ())) for o in cls.outputs}
        pattern = set(getattr(cls, "partial_pattern", ()))
        return {o.name: tuple(s for s in cls.continuous_states if (o.name, state_variable(s)) in pattern)
                for o in cls.outputs}

    @classmethod
    def derivative_knowns(cls) -> dict[str, tuple[str, ...]]:
        """Per continuous state, the knowns its derivative depends on (ModelStructure/Derivatives): from
        ``derivatives_on``, or the analytic partials' row of the derivative (``partial_pattern``), or else every
        state and input."""
        every = tuple(state_variable(s) for s in cls.continuous_states) + tuple(i.name for i in cls.inputs)
        if cls.derivatives_on is not None:
            return {s: tuple(cls.derivatives_on.get(s, ())) for s in cls.continuous_states}
        pattern = set(getattr(cls, "partial_pattern", ()))
        rows = {s: tuple(k for k in every if (derivative_variable(s), k) in pattern) for s in cls.continuous_states}
        return {s: row or every for s, row in rows.items()}

    @classmethod
    def provides_directional_derivative(cls) -> bool:
        """Every component gives its directional derivatives (components/partials.py)."""
        return True

    @classmethod
    def indicator_names(cls) -> list[str]:
        return [o.name for o in cls.outputs if o.name.startswith("indicator.")]

    def next_time_event(self) -> float | None:
        """The first of ``time_events`` after the last event mode (the current time if that is one not yet
        handled), or None."""
        events = self.time_events()
        found = bisect.bisect_right(events, self._event_time)
        return events[found] if found < len(events) else None

    def update_discrete_states(self) -> bool:
        """Event mode: commit the modes the current point implies; True if the continuous states were set anew.
        The point becomes the earliest time the model may be evaluated at."""
        self._accepted_time = self._event_time = self.time
        self._cache = None
        return False

    def completed_integrator_step(self) -> None:
        """The solver accepted the current point: it becomes the earliest time the model may be evaluated at."""
        self._accepted_time = self.time

    if TYPE_CHECKING:  # what Component provides
        inputs: ClassVar[tuple[Any, ...]]
        outputs: ClassVar[tuple[Any, ...]]

        def current_outputs(self) -> dict[str, Any]: ...

        def error(self, name: str, value: Any, problem: str) -> Exception: ...
