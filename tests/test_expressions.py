import math

import pytest
from mechfmu.components.expressions import Expression, ExpressionError

ARGS = ("u", "v", "k", "d", "t")


def test_the_documented_user_law_matches_python():
    expr = Expression("0.1*k*u + k*u**3 + v*d", ARGS)
    u, v, k, d = 0.013, -0.4, 5000.0, 80.0
    assert expr(u=u, v=v, k=k, d=d, t=0.0) == 0.1 * k * u + k * u**3 + v * d


def test_conditionals_comparisons_and_math_functions():
    expr = Expression("k*u if u > 0 and not v < -1 else sqrt(abs(u))*sign(v) + atan2(u, 1) + pi", ARGS)
    assert expr(u=2.0, v=0.0, k=3.0, d=0, t=0) == 6.0
    assert expr(u=-4.0, v=-2.0, k=3.0, d=0, t=0) == -2.0 + math.atan2(-4.0, 1) + math.pi


@pytest.mark.parametrize("text, fragment", [
    ("__import__('os').system('true')", "not allowed"),
    ("u.__class__", "Attribute is not allowed"),
    ("open('x')", "call of 'open'"),
    ("[u for u in (1,2)]", "not allowed"),
    ("lambda: 1", "not allowed"),
    ("x + 1", "unknown name 'x'"),
    ("'abc'", "not a real number"),
    ("u +", "syntax error"),
    ("", "empty"),
    ("u" + "+u" * 1200, "longer than"),
    ("sqrt(x=u)", "keyword"),
    ("1" + "0" * 309 + " * u", "integer literal beyond the largest real number"),
    ("u + 2" + "0" * 400, "integer literal beyond"),
    ("sqrt", "'sqrt' is a function: call it"),  # its derivative was a silent 0.0
    ("u * exp", "'exp' is a function: call it"),
])
def test_rejected_expressions_name_the_problem(text, fragment):
    with pytest.raises(ExpressionError, match=fragment):
        Expression(text, ARGS)


def test_cost_is_bounded_and_bad_results_are_errors():
    huge = Expression("9**9**9", ARGS)  # float literals: overflows instead of building a huge integer
    with pytest.raises(ExpressionError, match="evaluation failed"):
        huge(u=0, v=0, k=0, d=0, t=0)
    with pytest.raises(ExpressionError, match="evaluation failed"):
        Expression("1/u", ARGS)(u=0.0, v=0, k=0, d=0, t=0)
    with pytest.raises(ExpressionError, match="not a real number"):
        Expression("(-8)**(1/3)", ARGS)(u=0, v=0, k=0, d=0, t=0)


@pytest.mark.parametrize("text", ["floor(9)**floor(9)**floor(9)", "itemNumber**itemNumber**itemNumber",
                                  "ceil(10)**ceil(400)", "(itemNumber + 0)**(itemNumber*1000)"])
def test_integer_towers_overflow_at_once_instead_of_hanging(text):
    """floor/ceil and integer arguments used to give Python ints, whose ** never finishes (9**9**9)."""
    import signal
    import time

    def too_slow(*_):
        raise TimeoutError(text)
    signal.signal(signal.SIGALRM, too_slow)
    signal.alarm(2)  # a bounded evaluation takes microseconds
    started = time.perf_counter()
    try:
        with pytest.raises(ExpressionError, match="evaluation failed|not finite"):
            Expression(text, ("itemNumber",))(itemNumber=9)
    finally:
        signal.alarm(0)
    assert time.perf_counter() - started < 0.5


@pytest.mark.parametrize("text, t, slope", [
    ("0.5*(1-cos(2*pi*0.25*t))*0.1", 1.0, 0.025 * math.pi), ("t**3 - 2**t", 2.0, 12 - 4 * math.log(2)),
    ("abs(t-1) + max(t, 2) + (t if t > 1 else 0)", 1.5, 2.0), ("sqrt(t)*exp(-t)", 4.0, math.exp(-4) * (0.25 - 2)),
    ("atan2(t, 1) + hypot(t, 3) + copysign(t, -1)", 4.0, 1 / 17 + 0.8 - 1), ("floor(t) + t % 0.3 + fmod(t, 0.3)", 1.3, 2.0),
    ("log10(t) + tanh(t) + asin(t/10)", 2.0, 1 / (2 * math.log(10)) + 1 - math.tanh(2) ** 2 + 0.1 / math.sqrt(0.96)),
    ("3.0", 1.0, 0.0)])
def test_derivative_is_exact(text, t, slope):
    """Expression.derivative: forward-mode automatic differentiation, equal to the closed form to rounding."""
    assert Expression(text, ("t",)).derivative("t", t=t) == pytest.approx(slope, rel=1e-14, abs=1e-15)


def test_derivative_that_does_not_exist_is_an_error():
    with pytest.raises(ExpressionError, match="evaluation failed"):
        Expression("sqrt(t)", ("t",)).derivative("t", t=0.0)


def test_a_huge_integer_literal_in_a_user_function_is_a_named_error_through_the_master(tmp_path):
    """It used to escape as a raw OverflowError traceback; now the run is refused naming component and parameter
    (the SSD's value, in-process: an override is refused before the run, in the same words)."""
    from test_bad_inputs import edited

    from mechfmu.master.simulate import simulate
    law = "1" + "0" * 309 + "*k*u"
    folder = edited(tmp_path, lambda text: text.replace('value="0.1*k*u + k*u**3 + v*d"', f'value="{law}"'))
    result = simulate(folder, stop=0.01, local=True)
    assert result.status == "error" and "springForceUserFunction" in result.message, result.message
    assert "integer literal beyond the largest real number" in result.message
