"""Hypothesis fuzzing: the expression evaluator and the scenario loader answer every input
with a result or their own error (ExpressionError / ScenarioError, a ValueError), quickly: never
another exception, a hang or a non-finite result. Derandomized, so CI sees the same cases every run;
10,000 cases in all (5,000 + 2,000 + 3,000)."""
import html
import math
import re
import signal
from contextlib import contextmanager
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mechfmu.components.expressions import Expression, ExpressionError

from mechfmu.master.simulate import simulate
from mechfmu.ssp.scenario import Scenario, ScenarioError, load_scenario

pytestmark = pytest.mark.slow  # 10,000 cases
ROOT = Path(__file__).resolve().parent.parent
ARGS = ("u", "v", "k", "d", "t", "itemNumber")
def fuzz(examples: int) -> settings:
    return settings(derandomize=True, database=None, deadline=None, max_examples=examples,
                    suppress_health_check=list(HealthCheck))


@contextmanager
def within(seconds: int):
    """Fail instead of hanging: SIGALRM after ``seconds``."""
    def expired(*_):
        raise TimeoutError(f"took more than {seconds} s")
    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


numbers = st.one_of(st.integers(-10**12, 10**12).map(str), st.floats(allow_nan=False, allow_infinity=False).map(repr),
                    st.sampled_from(["9", "10", "400", "1e308", "0", "0.5", "1e-320"]))
leaves = st.one_of(numbers, st.sampled_from(ARGS + ("pi", "e", "x", "__import__")))
FUNCTIONS = ["floor", "ceil", "sqrt", "exp", "log", "sin", "atan2", "abs", "min", "max", "fmod", "hypot", "sign",
             "pow", "open"]


def combine(children):
    binary = st.tuples(children, st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "<", "==", " and ", " or "]),
                       children).map(lambda x: f"({x[0]}{x[1]}{x[2]})")
    unary = st.tuples(st.sampled_from(["-", "+", "not "]), children).map(lambda x: f"{x[0]}{x[1]}")
    call = st.tuples(st.sampled_from(FUNCTIONS), st.lists(children, min_size=0, max_size=3)).map(
        lambda x: f"{x[0]}({', '.join(x[1])})")
    conditional = st.tuples(children, children, children).map(lambda x: f"({x[0]} if {x[1]} else {x[2]})")
    return st.one_of(binary, unary, call, conditional)


expressions = st.recursive(leaves, combine, max_leaves=40)
values = st.fixed_dictionaries({a: st.floats(allow_nan=False, width=64) for a in ARGS})


def evaluate(text: str, arguments: dict) -> None:
    with within(5):
        try:
            expression = Expression(text, ARGS)
        except ExpressionError:
            return
        try:
            result = expression(**arguments)
        except ExpressionError:
            return
    assert isinstance(result, float) and math.isfinite(result), (text, result)


@fuzz(5000)
@given(expressions, values)
def test_expressions_evaluate_or_fail_cleanly(text, arguments):
    evaluate(text, arguments)


@fuzz(2000)
@given(st.text(max_size=300), values)
def test_arbitrary_text_is_refused_or_evaluated(text, arguments):
    evaluate(text, arguments)


# --- the scenario loader ---------------------------------------------------------------------

SSD = (ROOT / "scenarios" / "oscillator" / "SystemStructure.ssd").read_text()
ATTRIBUTES = [m.span(2) for m in re.finditer(r'(\w+(?::\w+)?)="([^"]*)"', SSD)]
LINES = SSD.splitlines(keepends=True)
hostile = st.one_of(st.text(max_size=20).map(lambda s: html.escape(s, quote=True)), numbers,
                    st.sampled_from(["", "inf", "-inf", "nan", "1e400", "-0", "true", "yes", "0x10", str(2**40 + 5),
                                     "1.5", "mass", "flange_a.s", "../../etc/passwd", "&amp;#0;", "1" * 400]))
mutation = st.one_of(
    st.tuples(st.just("attribute"), st.integers(0, len(ATTRIBUTES) - 1), hostile),
    st.tuples(st.just("delete"), st.integers(0, len(LINES) - 1), st.just("")),
    st.tuples(st.just("insert"), st.integers(0, len(LINES) - 1),
              st.sampled_from(["<x/>\n", "<ssd:Component/>\n", "&bogus;\n", "<!-- c -->\n", "<ssd:Connection "
                               'startElement="mass" startConnector="s" endElement="mass" endConnector="flange_a.f"/>\n'])),
)


def mutated(mutations) -> str:
    """The SSD with attribute values replaced (from the last, so earlier spans stay valid), then lines
    deleted or inserted."""
    text = SSD
    for _, index, value in sorted((m for m in mutations if m[0] == "attribute"), key=lambda m: -m[1]):
        a, b = ATTRIBUTES[index]
        text = text[:a] + value + text[b:]
    lines = text.splitlines(keepends=True)
    for kind, index, value in (m for m in mutations if m[0] != "attribute"):
        if index < len(lines):
            lines[index:index + 1] = [] if kind == "delete" else [value, lines[index]]
    return "".join(lines)


@fuzz(3000)
@given(st.lists(mutation, min_size=1, max_size=3))
def test_mutated_scenarios_load_and_run_or_are_refused(tmp_path_factory, mutations):
    folder = tmp_path_factory.mktemp("fuzz", numbered=True)
    (folder / "SystemStructure.ssd").write_text(mutated(mutations).replace("../../fmus/", str(ROOT / "fmus") + "/"))
    with within(20):
        try:
            scenario = load_scenario(folder, local=True)
        except ScenarioError:
            return
        assert isinstance(scenario, Scenario)
        try:
            result = simulate(scenario, local=True, stop=scenario.start_time + 3 * scenario.step_size, record=False)
        except ValueError:  # refused up front with a message (e.g. too many steps)
            return
    assert result.status in ("ok", "error") and (result.ok or result.message)
