"""Safe evaluator for user-function expressions (Exudyn user functions as String parameters).

The grammar (docs/components.md#user-functions, the C evaluator components/native/expression.c keeps the same):
Python's expression grammar (``ast.parse(text.strip(), mode="eval")``) restricted to numbers, the argument names
the component declares, ``pi`` and ``e``; operators ``+ - * / // % **``, comparisons (chained allowed),
``and``/``or``/``not``, conditional expressions ``a if cond else b``; calls of the whitelisted math functions in
``FUNCTIONS`` only. Everything else (attributes, subscripts, imports, lambdas, comprehensions, other names or
calls, strings) is rejected when the expression is parsed. An expression is one line: a line break or a
backslash in the stripped text is refused (a comment runs to its end). Names are ASCII letters, digits and
underscores, or the fullwidth forms of them, which read as the ASCII ones (Python's NFKC normalisation of names);
any other character in a name is a syntax error. Integer literals of any size and base are their exact value
rounded to the nearest float, as ``float(int)``.

Cost is bounded: at most ``MAX_LENGTH`` characters, ``MAX_NODES`` syntax nodes (so the tree is at most about 200
levels deep) and ``MAX_BRACKETS`` brackets open at once (Python's own limit), no loops, and every number is a
float (literals, argument values such as the integer ``itemNumber``, and the results of ``floor``/``ceil``), so
``**`` cannot build huge integers (it overflows instead). The result must be a finite real number; anything else
raises ``ExpressionError``. ``Expression.derivative`` gives the exact derivative with respect to one argument
(forward-mode automatic differentiation, components/dual.py).
"""
from __future__ import annotations

import ast
import math
import warnings
from collections.abc import Callable, Iterable

from .dual import DUAL_FUNCTIONS, Dual
from .number_text import measured

MAX_LENGTH = 2000
MAX_NODES = 400
MAX_BRACKETS = 200  # Python's tokenizer refuses more ("too many nested parentheses")
SHOWN_NAME = 60  # a longer name is abbreviated in messages


def _sign(x: float) -> float:
    return 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)


FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs, "min": min, "max": max, "sign": _sign,
    "sqrt": math.sqrt, "exp": math.exp, "log": math.log, "log10": math.log10,
    "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "asin": math.asin, "acos": math.acos, "atan": math.atan, "atan2": math.atan2,
    "sinh": math.sinh, "cosh": math.cosh, "tanh": math.tanh,
    "floor": lambda x: float(math.floor(x)), "ceil": lambda x: float(math.ceil(x)), "fmod": math.fmod,
    "hypot": math.hypot, "copysign": math.copysign,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}
assert set(DUAL_FUNCTIONS) == set(FUNCTIONS), "every function needs its derivative rule (components/dual.py)"

_ALLOWED_NODES = (
    ast.Expression, ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Call,
    ast.Name, ast.Load, ast.Constant,
    ast.Add, ast.Sub, ast.Mult, ast.Div, ast.FloorDiv, ast.Mod, ast.Pow,
    ast.UAdd, ast.USub, ast.Not, ast.And, ast.Or,
    ast.Eq, ast.NotEq, ast.Lt, ast.LtE, ast.Gt, ast.GtE,
)


class ExpressionError(ValueError):
    """An expression that cannot be parsed, is not allowed, or cannot be evaluated."""


def _shown(name: str) -> str:
    """A name as messages quote it: whole up to ``SHOWN_NAME`` characters, else its first 40 and last 10."""
    return repr(_plain(name))


def _dotted(node: ast.AST) -> str | None:
    """A called name or dotted name (``os.system``) as messages show it, or None for another expression."""
    if isinstance(node, ast.Name):
        return _plain(node.id)
    if isinstance(node, ast.Attribute):
        owner = _dotted(node.value)
        return None if owner is None else _plain(f"{owner}.{node.attr}")
    return None


def _plain(name: str) -> str:
    return name if len(name) <= SHOWN_NAME else f"{name[:40]}...{name[-10:]}"


def _fullwidth(character: str) -> bool:
    """A fullwidth ASCII letter, digit or underscore (NFKC reads it as the ASCII one)."""
    return "\uff10" <= character <= "\uff19" or "\uff21" <= character <= "\uff3a" or character == "\uff3f" \
        or "\uff41" <= character <= "\uff5a"


def _parse(text: str) -> ast.Expression:
    """The stripped text parsed as one line of Python's expression grammar; ExpressionError otherwise."""
    for column, character in enumerate(text, 1):
        if character in "\n\r\\":
            what = "backslash" if character == "\\" else "line break"
            raise ExpressionError(f"{what} at column {column}: an expression is one line")
        if character == "\0":
            raise ExpressionError(f"syntax error at column {column}: a null character")
    try:
        with warnings.catch_warnings():  # "1if x else 2" warns (a number touching a keyword): the grammar takes it
            warnings.simplefilter("ignore")
            tree = ast.parse(text, mode="eval")
    except SyntaxError as exc:
        limit = f" (at most {MAX_BRACKETS})" if exc.msg == "too many nested parentheses" else ""
        raise ExpressionError(f"syntax error at column {exc.offset}: {exc.msg}{limit}") from None
    except (MemoryError, RecursionError):  # beyond the parser's own stack: only trees beyond the node limit
        raise ExpressionError(f"expression has more than {MAX_NODES} syntax nodes (nested beyond Python's "
                              "parser)") from None
    encoded = text.encode()
    for node in ast.walk(tree):  # names in ASCII, or fullwidth ASCII (NFKC gave their ASCII form)
        if isinstance(node, ast.Name):
            written = encoded[node.col_offset:node.end_col_offset].decode()
            if any(c >= "\x80" and not _fullwidth(c) for c in written):
                column = len(encoded[:node.col_offset].decode()) + 1
                raise ExpressionError(f"syntax error at column {column}: invalid character in a name "
                                      "(names are ASCII letters, digits and '_')")
    return tree


class _FloatLiterals(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"literal {_plain(repr(node.value))} is not a real number")
        try:
            return ast.copy_location(ast.Constant(float(node.value)), node)
        except OverflowError:  # an integer literal beyond the largest double (1.8e308)
            raise ExpressionError("integer literal beyond the largest real number (1.8e308)") from None


class Expression:
    """A parsed expression over the argument names ``arguments``; call with keyword values."""

    def __init__(self, text: str, arguments: Iterable[str]):
        self.text = text
        self.arguments = tuple(arguments)
        if not isinstance(text, str) or not text.strip():
            raise ExpressionError("empty expression")
        if len(text) > MAX_LENGTH:
            raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
        tree = _parse(text.strip())
        nodes = list(ast.walk(tree))
        known = set(self.arguments) | set(CONSTANTS)
        called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        for node in nodes:
            if not isinstance(node, _ALLOWED_NODES):
                raise ExpressionError(f"{type(node).__name__} is not allowed")
            if isinstance(node, ast.Call):
                if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                    name = _dotted(node.func)
                    raise ExpressionError(f"call of {'an expression' if name is None else _shown(name)} is not "
                                          "allowed; allowed functions: "
                                          + ", ".join(sorted(FUNCTIONS)))
                if node.keywords:
                    raise ExpressionError("keyword arguments are not allowed")
            elif (isinstance(node, ast.Name) and node.id in FUNCTIONS and node.id not in known
                  and id(node) not in called):
                raise ExpressionError(f"{_shown(node.id)} is a function: call it, e.g. {node.id}(x)")
            elif isinstance(node, ast.Name) and node.id not in known and node.id not in FUNCTIONS:
                raise ExpressionError(f"unknown name {_shown(node.id)}; allowed names: "
                                      + ", ".join(self.arguments + tuple(CONSTANTS)))
        if len(nodes) > MAX_NODES:  # after the walk: what is not allowed is named, however large
            raise ExpressionError(f"expression has more than {MAX_NODES} syntax nodes")
        tree = ast.fix_missing_locations(_FloatLiterals().visit(tree))
        self._code = compile(tree, "<user function>", "eval")
        self._globals = {"__builtins__": {}, **FUNCTIONS, **CONSTANTS}
        self._dual_globals = {"__builtins__": {}, **DUAL_FUNCTIONS, **CONSTANTS}

    def __call__(self, **values: float) -> float:
        return self._evaluate(self._globals, values)

    def derivative(self, name: str, **values: float) -> float:
        """The exact derivative with respect to the argument ``name`` at ``values`` (every operation
        carries its derivative, components/dual.py: no difference quotient); errors as ``__call__``."""
        result = self._evaluate(self._dual_globals, values, name)
        return self._real(result.slope if isinstance(result, Dual) else 0.0, values)

    def _evaluate(self, namespace: dict, values: dict, seed: str | None = None):
        try:
            values = {k: float(v) for k, v in values.items()}  # no integer arithmetic: bounded cost
            local = {k: Dual(v, 1.0) if k == seed else v for k, v in values.items()}
            result = eval(self._code, namespace, local)  # noqa: S307 - AST whitelisted above
            if seed is not None:
                return result
        except (ArithmeticError, ValueError, TypeError) as exc:
            raise ExpressionError(f"evaluation failed ({exc}) for "
                                  + ", ".join(f"{k}={measured(v)}" for k, v in values.items())) from None
        return self._real(result, values)

    @staticmethod
    def _real(result, values: dict) -> float:
        try:
            result = float(result)
        except (TypeError, ValueError):
            raise ExpressionError(f"result {result!r} is not a real number") from None
        if not math.isfinite(result):
            raise ExpressionError("result is not finite for "
                                  + ", ".join(f"{k}={measured(v)}" for k, v in values.items()))
        return result
