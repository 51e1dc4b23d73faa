"""Forward-mode automatic differentiation for user-function expressions (components/expressions.py).

A ``Dual(value, slope)`` carries a value and its derivative with respect to one argument; every
operator and every whitelisted function (``FUNCTIONS`` of expressions.py, here ``DUAL_FUNCTIONS``
with the same names) propagates the slope by the chain rule, so evaluating an expression with the
argument ``Dual(x, 1)`` gives the expression's value and its exact derivative at x (to rounding;
no difference quotient, no step size). Piecewise expressions (``if``/comparisons, ``abs``, ``min``,
``max``, ``floor``, ``%``, ...) give the derivative of the branch taken at x (one-sided at a kink;
0 for the step functions ``floor``, ``ceil``, ``sign``, ``//``). A derivative that does not exist
(``sqrt`` at 0, ``t**0.5`` at 0) raises ``ZeroDivisionError``. ``Dual`` has no ``__float__``: a
function without a rule here would fail instead of silently dropping the slope.
"""
from __future__ import annotations

import math
from collections.abc import Callable


class Dual:
    """A value and its derivative; comparisons and truth use the value."""
    __slots__ = ("value", "slope")

    def __init__(self, value: float, slope: float = 0.0):
        if isinstance(value, complex) or isinstance(slope, complex):
            raise ValueError("complex result")
        self.value, self.slope = value, slope

    def __repr__(self) -> str:
        return f"Dual({self.value!r}, {self.slope!r})"

    def __add__(self, other):
        o = lift(other)
        return Dual(self.value + o.value, self.slope + o.slope)

    __radd__ = __add__

    def __sub__(self, other):
        o = lift(other)
        return Dual(self.value - o.value, self.slope - o.slope)

    def __rsub__(self, other):
        return lift(other) - self

    def __mul__(self, other):
        o = lift(other)
        return Dual(self.value * o.value, self.slope * o.value + self.value * o.slope)

    __rmul__ = __mul__

    def __truediv__(self, other):
        o = lift(other)
        q = self.value / o.value
        return Dual(q, (self.slope - q * o.slope) / o.value)

    def __rtruediv__(self, other):
        return lift(other) / self

    def __floordiv__(self, other):
        return Dual(self.value // lift(other).value)

    def __rfloordiv__(self, other):
        return lift(other) // self

    def __mod__(self, other):  # x % y = x - floor(x/y)·y
        o = lift(other)
        return Dual(self.value % o.value, self.slope - math.floor(self.value / o.value) * o.slope)

    def __rmod__(self, other):
        return lift(other) % self

    def __pow__(self, other):
        o = lift(other)
        value = self.value ** o.value
        slope = 0.0
        if self.slope:
            slope += o.value * self.value ** (o.value - 1.0) * self.slope
        if o.slope:
            slope += value * math.log(self.value) * o.slope
        return Dual(value, slope)

    def __rpow__(self, other):
        return lift(other) ** self

    def __neg__(self):
        return Dual(-self.value, -self.slope)

    def __pos__(self):
        return self

    def __abs__(self):
        return _abs(self)

    def __bool__(self) -> bool:
        return bool(self.value)

    def __eq__(self, other):
        return self.value == lift(other).value

    def __ne__(self, other):
        return self.value != lift(other).value

    def __lt__(self, other):
        return self.value < lift(other).value

    def __le__(self, other):
        return self.value <= lift(other).value

    def __gt__(self, other):
        return self.value > lift(other).value

    def __ge__(self, other):
        return self.value >= lift(other).value


def lift(x) -> Dual:
    return x if isinstance(x, Dual) else Dual(float(x))


def _unary(f: Callable[[float], float], df: Callable[[float], float]) -> Callable:
    """f for floats and Duals; df(x) is evaluated only where the slope is non-zero."""
    def dual_f(x):
        if not isinstance(x, Dual):
            return f(x)
        return Dual(f(x.value), df(x.value) * x.slope if x.slope else 0.0)
    return dual_f


def _sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


_abs = _unary(abs, _sign)


def _atan2(y, x):
    y, x = lift(y), lift(x)
    r2 = x.value * x.value + y.value * y.value
    slope = (x.value * y.slope - y.value * x.slope) / r2 if (x.slope or y.slope) else 0.0
    return Dual(math.atan2(y.value, x.value), slope)


def _fmod(x, y):  # fmod(x, y) = x - n·y, n = trunc(x/y)
    x, y = lift(x), lift(y)
    value = math.fmod(x.value, y.value)
    n = round((x.value - value) / y.value) if y.slope else 0.0
    return Dual(value, x.slope - n * y.slope)


def _hypot(*args):
    args = [lift(a) for a in args]
    value = math.hypot(*(a.value for a in args))
    slope = sum(a.value * a.slope for a in args if a.slope)
    return Dual(value, slope / value if slope else 0.0)


def _copysign(x, y):
    x, y = lift(x), lift(y)
    value = math.copysign(x.value, y.value)
    same = math.copysign(1.0, x.value) == math.copysign(1.0, y.value)
    return Dual(value, x.slope if same else -x.slope)


def _step(f: Callable[[float], float]) -> Callable:
    return lambda x: Dual(f(x.value)) if isinstance(x, Dual) else f(x)


DUAL_FUNCTIONS: dict[str, Callable] = {
    "abs": _abs, "min": min, "max": max, "sign": _step(_sign),
    "sqrt": _unary(math.sqrt, lambda x: 0.5 / math.sqrt(x)),
    "exp": _unary(math.exp, math.exp),
    "log": _unary(math.log, lambda x: 1.0 / x),
    "log10": _unary(math.log10, lambda x: 1.0 / (x * math.log(10.0))),
    "sin": _unary(math.sin, math.cos), "cos": _unary(math.cos, lambda x: -math.sin(x)),
    "tan": _unary(math.tan, lambda x: 1.0 + math.tan(x) ** 2),
    "asin": _unary(math.asin, lambda x: 1.0 / math.sqrt(1.0 - x * x)),
    "acos": _unary(math.acos, lambda x: -1.0 / math.sqrt(1.0 - x * x)),
    "atan": _unary(math.atan, lambda x: 1.0 / (1.0 + x * x)), "atan2": _atan2,
    "sinh": _unary(math.sinh, math.cosh), "cosh": _unary(math.cosh, math.sinh),
    "tanh": _unary(math.tanh, lambda x: 1.0 - math.tanh(x) ** 2),
    "floor": _step(lambda x: float(math.floor(x))), "ceil": _step(lambda x: float(math.ceil(x))),
    "fmod": _fmod, "hypot": _hypot, "copysign": _copysign,
}
