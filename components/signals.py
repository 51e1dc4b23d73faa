"""Signal sources y(t) (Modelica.Blocks.Sources Sine, Step, Ramp, Constant), exact at every communication point.

Laws (MSL 4.1, t the component's time, i.e. the communication point the master stepped to):

    Sine      y = offset + (if t < startTime then 0 else amplitude·sin(2·π·f·(t − startTime) + phase))
              (continuous = true: amplitude·sin(phase) before startTime instead of 0)
    Step      y = offset + (if t < startTime then 0 else height)
    Ramp      y = offset + (if t < startTime then 0 else if t < startTime + duration
                  then (t − startTime)·height/duration else height)
    Constant  y = k
    Pulse     y = offset + (if t < startTime or nperiod = 0 or (nperiod > 0 and count >= nperiod) then 0
                  else if t < T_start + T_width then amplitude else 0),
              count = the periods begun (MSL's count, 0 from startTime on), T_start = startTime + count·period,
              T_width = period·width/100

Parameters and units as in MSL: ``amplitude``, ``offset``, ``height``, ``k`` carry no unit (a signal),
``f`` [Hz], ``phase`` [rad], ``startTime`` [s], ``duration`` [s] (>= 0; 0 is a step), ``continuous``, ``width``
[%] (0 < width <= 100), ``period`` [s] (> 0), ``nperiod`` (< 0: endless). MSL's Pulse sets T_start to the time its
when-clause fires, the instant ``integer((t − startTime)/period)`` grows, which a tool locates to its tolerance;
here that instant is exact, startTime + count·period.

Exactness: the outputs are the closed form evaluated at the component's time, never a sum over steps.
After ``do_step(t, h)`` that time is ``t + h``; the master passes ``h = t_{n+1} − t_n`` with
``t_n = t0 + n·h``, and ``t_n + (t_{n+1} − t_n) == t_{n+1}`` in floating point (Sterbenz: the
difference is exact when t_n >= t_{n+1}/2, so for every step from t0 = 0 and for every one but
possibly the first from a small t0 > 0), so the value read at a communication point is the closed
form at the time the master records. A kink or jump (startTime, the end of a ramp) is exact at a point that
falls on it; between points nothing is sampled.

Derivatives: ``y_rate`` = dy/dt and ``y_rate_rate`` = d²y/dt², the right derivatives at t (the slope
over the coming step: a Ramp outputs ``height/duration`` at ``t = startTime`` and 0 at its end; a jump
has none). With them a ``Force`` or ``Position`` source downstream knows the reference's derivatives,
which an FMU cannot know of an input signal: ``linear-implicit`` wires ``y_rate -> f_rate`` (and
``_rate_rate``) by name, so a body integrates a waveform force as a first-order hold (a ramp exactly);
under other masters wire them in the scenario where needed (Position's velocity and acceleration).

Model Exchange: no state; the outputs are the closed form at the model's time, and every time where y or a
derivative jumps (``time_events``: startTime, a ramp's end, a table's rows) is a time event, so a solver
never steps over a kink; until the event is handled the outputs there are the left limits.

Units: a signal has none (``NO_UNIT``): its variables are written without a unit attribute and the
scenario loader connects them to a variable of any unit (``Force.f`` [N], ``Position.s_ref`` [m]), as a
Modelica ``RealOutput`` connects to any ``RealInput``. One Sine FMU thus serves every use; a loader
that treated a missing unit as "1" would refuse ``y -> f`` and need one Sine per unit. Real unit
mismatches (m -> N) are still refused.
"""
from __future__ import annotations

from .base import NO_UNIT, Component, Output, Param
from .native_component import NativeComponent

Y, Y_RATE, Y_RATE_RATE = "y", "y_rate", "y_rate_rate"
#: the outputs every signal source has
SIGNAL_OUTPUTS = (
    Output(Y, NO_UNIT, "Output signal (no unit: connects to an input of any unit)"),
    Output(Y_RATE, NO_UNIT, "Time derivative of y at this time, from the right (unit of y per s)"),
    Output(Y_RATE_RATE, NO_UNIT, "Second time derivative of y at this time, from the right (unit of y per s2)"),
)
OFFSET = Param("offset", 0.0, NO_UNIT, "Offset of output signal y")
START_TIME = Param("startTime", 0.0, "s", "Output y = offset for time < startTime")


class Sine(NativeComponent, Component):
    description = "Sine signal y = offset + amplitude*sin(2*pi*f*(t - startTime) + phase) from startTime on"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.Sine"
    outputs = SIGNAL_OUTPUTS
    example_parameters = {"amplitude": 10.0, "f": 4.0, "phase": 0.3, "offset": -1.0, "startTime": 0.01}
    parameters = (
        Param("amplitude", 1.0, NO_UNIT, "Amplitude of sine wave"),
        Param("f", 1.0, "Hz", "Frequency of sine wave"),
        Param("phase", 0.0, "rad", "Phase of sine wave"),
        Param("continuous", False, "1", "Make output continuous by starting at offset + amplitude*sin(phase)",
              type="Boolean"),
        OFFSET, START_TIME,
    )


class Step(NativeComponent, Component):
    description = "Step signal y = offset + (height from startTime on)"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.Step"
    outputs = SIGNAL_OUTPUTS
    example_parameters = {"height": 2.5, "offset": 0.5, "startTime": 0.02}
    parameters = (Param("height", 1.0, NO_UNIT, "Height of step"), OFFSET, START_TIME)


class Ramp(NativeComponent, Component):
    description = "Ramp signal: offset, rising linearly by height over duration from startTime on"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.Ramp"
    outputs = SIGNAL_OUTPUTS
    example_parameters = {"height": -3.0, "duration": 0.025, "offset": 1.0, "startTime": 0.01}
    parameters = (
        Param("height", 1.0, NO_UNIT, "Height of ramps"),
        Param("duration", 2.0, "s", "Duration of ramp (= 0.0 gives a Step)", min=0.0),
        OFFSET, START_TIME,
    )


class Constant(NativeComponent, Component):
    description = "Constant signal y = k"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.Constant"
    outputs = SIGNAL_OUTPUTS
    example_parameters = {"k": 1.5}
    parameters = (Param("k", 1.0, NO_UNIT, "Constant output value"),)



class Pulse(NativeComponent, Component):
    description = "Pulse signal: offset, plus amplitude for width % of each period from startTime on"
    source = "Modelica Standard Library 4.1, Modelica.Blocks.Sources.Pulse"
    outputs = SIGNAL_OUTPUTS
    example_parameters = {"amplitude": 2.0, "width": 30.0, "period": 0.02, "nperiod": 3, "offset": -0.5,
                          "startTime": 0.01}
    parameters = (
        Param("amplitude", 1.0, NO_UNIT, "Amplitude of pulse"),
        Param("width", 50.0, NO_UNIT, "Width of pulse in % of period", min=0.0, min_exclusive=True, max=100.0),
        Param("period", 1.0, "s", "Time for one period", min=0.0, min_exclusive=True),
        Param("nperiod", -1, type="Integer", description="Number of periods (< 0 means infinite number of periods)"),
        OFFSET, START_TIME,
    )
