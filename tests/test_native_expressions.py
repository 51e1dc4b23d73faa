"""The C user-function evaluator (components/native/expression.c) against the Python one (components/expressions.py):
on every expression of a corpus and thousands of random ones, at random arguments, the same value and derivative
bit for bit, or both refuse; the same words for what is refused, but for the wording of syntax errors and the
documented difference (a negative number to a fractional power: Python computes a complex number)."""
import ctypes
import math
import random
import shutil
import subprocess
from pathlib import Path

import fmpy
import pytest

from mechfmu.components.expressions import Expression, ExpressionError
from mechfmu.fmu import native_tables
from mechfmu.fmu.native import NATIVE_SOURCES

NAMES = ("t", "u", "v", "k")
CORPUS = [
    "0.1*k*u + k*u**3 + v*d", "0.1*k*u + k*u**3 + v + sin(t)", "-u**2", "(-u)**2", "u**-1", "2**u**2",
    "u // v", "u % v", "-u % v", "u % -v", "u // -v", "abs(u) + max(u, v, t) - min(k, u)",
    "u if u > v else v", "u < v < t", "u < v and t or k", "not u", "not u and v", "u or v", "(u > v) + (t > k)",
    "sqrt(abs(u))", "sqrt(u)", "exp(u*100)", "exp(u)", "log(u)", "log(abs(u) + 1, 2)", "log10(abs(u) + 1)",
    "sin(u) + cos(v) + tan(t)", "asin(u/10)", "acos(u)", "atan(u) + atan2(u, v)", "sinh(u) + cosh(v) + tanh(t)",
    "floor(u) + ceil(v)", "fmod(u, v)", "hypot(u, v)", "hypot(u)", "copysign(u, v)", "sign(u) * pi + e",
    "u ** 0.5", "u ** v", "1e308 * 10 * u", "u / 0", "u // 0", "u % 0", "0.0 ** -1", "10.0 ** 400",
    "1_000.5 * u", "0x10 + 0o7 + 0b11 + u", ".5 + 5. + 1e-3", "u ** 2 ** 0.5", "min(u)", "max()", "sin(u, v)",
    "atan2(u)", "abs(u, v)", "floor(u, v)", "sign(u, v)", "log(u, v, t)", "fmod(1e308*10, 1)", "floor(1e308*10)",
    "u == v != t", "u >= v <= t", "-(-u)", "+u", "--u", "(u)", "((u + v) * (t - k))", "u if v else t if k else 1",
    "k*u + mbs", "sqrt", "u * exp", "os.system(1)", "u[0]", "[u]", "(u, v)", "{u}", "{u: v}", "lambda: 1",
    "u | v", "u & v", "u ^ v", "u << 1", "~u", "u @ v", "u in v", "u is v", "u not in v", "u is not v",
    "'abc'", "b'x' + u", "True + u", "None", "...", "1j * u", "foo(u)", "sin(x=u)", "sin(*u)", "(x := 1)",
    "u +", "sin(", "(u", "u v", "", "   ", "u if v", "1" * 400, "u.real", "f'{u}'", "u + " * 150 + "u",
]


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The evaluator and the native runtime as one shared library (visible symbols), for ctypes."""
    return build_library(tmp_path_factory.mktemp("native_expression"))


def build_library(folder: Path) -> ctypes.CDLL:
    """The evaluator and the native runtime compiled into ``folder`` as one shared library, its functions typed."""
    generated = native_tables.write(folder)
    sources = [p for p in NATIVE_SOURCES if p.suffix == ".c"] + generated + native_tables.law_sources()
    compiler = shutil.which("cc") or shutil.which("gcc")
    headers = Path(fmpy.__file__).parent / "c-code"
    target = folder / "libexpression.so"
    subprocess.run([compiler, "-O2", "-shared", "-fPIC", "-ffp-contract=off", "-DMECHFMU_NATIVE", f"-I{headers}",
                    f"-I{NATIVE_SOURCES[0].parent}", f"-I{folder}", f"-I{native_tables.NATIVE_DIR}", "-o", str(target),
                    *map(str, sources), "-lm"], check=True)
    lib = ctypes.CDLL(str(target))
    lib.expression_parse.restype = ctypes.c_void_p
    lib.expression_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                     ctypes.c_char_p, ctypes.c_size_t]
    for name in ("expression_value", "expression_derivative"):
        getattr(lib, name).restype = ctypes.c_int
    lib.expression_value.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double),
                                     ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_size_t]
    lib.expression_derivative.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_size_t]
    lib.expression_free.argtypes = [ctypes.c_void_p]
    return lib


def in_c(lib, text: str, args: tuple[float, ...], seed: int | None) -> tuple[str, object]:
    """("parse", message), ("error", message) or ("ok", value) from the C evaluator."""
    names = (ctypes.c_char_p * len(NAMES))(*(n.encode() for n in NAMES))
    why = ctypes.create_string_buffer(4096)
    parsed = lib.expression_parse(text.encode(), names, len(NAMES), why, len(why))
    if not parsed:
        return "parse", why.value.decode()
    values, result = (ctypes.c_double * len(NAMES))(*args), ctypes.c_double()
    if seed is None:
        status = lib.expression_value(parsed, values, ctypes.byref(result), why, len(why))
    else:
        status = lib.expression_derivative(parsed, values, seed, ctypes.byref(result), why, len(why))
    lib.expression_free(parsed)
    return ("error", why.value.decode()) if status else ("ok", result.value)


def in_python(text: str, args: tuple[float, ...], seed: int | None) -> tuple[str, object]:
    try:
        expression = Expression(text, NAMES)
    except ExpressionError as exc:
        return "parse", str(exc)
    values = dict(zip(NAMES, args))
    try:
        return "ok", expression(**values) if seed is None else expression.derivative(NAMES[seed], **values)
    except ExpressionError as exc:
        return "error", str(exc)


def agree(python: tuple[str, object], native: tuple[str, object], text: str) -> bool:
    if python[0] == "ok":
        if native[0] == "error" and "complex" in str(native[1]):
            return True  # Python went on with a complex number (e.g. abs of it): the C evaluator refuses
        if native[0] != "ok":
            return False
        if "hypot" in text:  # C's hypot: within an ulp of Python's (correctly rounded) one
            return abs(native[1] - python[1]) <= 2 * math.ulp(python[1])
        return math.copysign(1.0, native[1]) == math.copysign(1.0, python[1]) and native[1] == python[1]
    if native[0] != python[0]:
        return python[0] == "error" and "not a real number" in str(python[1]) and "complex" in str(native[1])
    if python[0] == "parse" and str(python[1]).endswith("(nested beyond Python's parser)"):
        return True  # more than 400 nodes 150+ brackets deep: CPython's parser stops before naming what C names
    if python[0] == "parse" and str(python[1]).startswith("syntax error"):
        return str(native[1]).startswith("syntax error")  # CPython's own wording of syntax errors is not copied
    if "complex" in str(native[1]):
        return True
    return native[1] == python[1]


ARGUMENTS = [(0.5, -1.25, 3.0, 2.0), (0.0, 0.0, 0.0, 0.0), (1.0, 2.0, -0.5, 1e3), (-3.5, 0.75, 1e-9, -2.0),
             (7.0, -7.0, 2.5, 0.1)]


@pytest.mark.slow
def test_corpus_agrees_value_and_derivative(library):
    differing = []
    for text in CORPUS:
        for args in ARGUMENTS:
            for seed in (None, 0, 1):
                python, native = in_python(text, args, seed), in_c(library, text, args, seed)
                if not agree(python, native, text):
                    differing.append((text, args, seed, python, native))
    assert not differing, "\n".join(map(str, differing[:20]))


def random_expression(rng: random.Random, depth: int = 0) -> str:
    if depth > 3 or rng.random() < 0.3:
        return rng.choice([*NAMES, "pi", "e", repr(rng.uniform(-3, 3)), str(rng.randint(0, 4)), "0.0", "1e300"])
    kind = rng.randrange(6)
    a, b = random_expression(rng, depth + 1), random_expression(rng, depth + 1)
    if kind == 0:
        return f"({a} {rng.choice(['+', '-', '*', '/', '//', '%', '**'])} {b})"
    if kind == 1:
        return f"{rng.choice(['-', '+', 'not '])}{a}"
    if kind == 2:
        return f"({a} {rng.choice(['<', '<=', '>', '>=', '==', '!='])} {b})"
    if kind == 3:
        return f"({a} if {b} else {random_expression(rng, depth + 1)})"
    if kind == 4:
        return f"({a} {rng.choice(['and', 'or'])} {b})"
    function = rng.choice(["abs", "sqrt", "exp", "log", "log10", "sin", "cos", "tan", "asin", "acos", "atan",
                           "sinh", "cosh", "tanh", "floor", "ceil", "sign", "min", "max", "atan2", "fmod", "hypot",
                           "copysign"])
    two = function in ("min", "max", "atan2", "fmod", "hypot", "copysign")
    return f"{function}({a}, {b})" if two else f"{function}({a})"


def test_random_expressions_agree_value_and_derivative(library):
    rng = random.Random(20261128)
    differing, compared = [], 0
    for _ in range(3000):
        text = random_expression(rng)
        args = tuple(rng.choice([rng.uniform(-5, 5), 0.0, -0.0, 1.0, rng.uniform(-1, 1)]) for _ in NAMES)
        for seed in (None, rng.randrange(len(NAMES))):
            python, native = in_python(text, args, seed), in_c(library, text, args, seed)
            compared += python[0] == "ok"
            if not agree(python, native, text):
                differing.append((text, args, seed, python, native))
    assert not differing, "\n".join(map(str, differing[:20]))
    assert compared > 2000  # most random expressions evaluate: the values were compared, not only errors
