"""Safe evaluator for user-function expressions (Exudyn user functions as String parameters).

Grammar: numbers, the argument names the component declares, ``pi`` and ``e``; operators
``+ - * / // % **``, comparisons (chained allowed), ``and``/``or``/``not``, conditional
expressions ``a if cond else b``; calls of the whitelisted math functions in ``FUNCTIONS`` only.
Everything else (attributes, subscripts, imports, lambdas, comprehensions, other names or calls,
strings) is rejected when the expression is parsed.

Cost is bounded: at most ``MAX_LENGTH`` characters and ``MAX_NODES`` syntax nodes, no loops,
and every number is a float (literals, argument values such as the integer ``itemNumber``, and the
results of ``floor``/``ceil``), so ``**`` cannot build huge integers (it overflows instead).
The result must be a finite real number; anything else raises ``ExpressionError``.
``Expression.derivative`` gives the exact derivative with respect to one argument (forward-mode
automatic differentiation, components/dual.py).
"""
from __future__ import annotations

import ast
import math
from collections.abc import Callable, Iterable

from .dual import DUAL_FUNCTIONS, Dual

MAX_LENGTH = 2000
MAX_NODES = 400


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


class _FloatLiterals(ast.NodeTransformer):
    def visit_Constant(self, node: ast.Constant) -> ast.Constant:
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExpressionError(f"literal {node.value!r} is not a real number")
        try:
            return ast.copy_location(ast.Constant(float(node.value)), node)
        except OverflowError:  # an integer literal beyond the largest double (1.8e308)
            raise ExpressionError(f"literal of {len(str(node.value))} digits is beyond the largest real number "
                                  "(1.8e308)") from None


class Expression:
    """A parsed expression over the argument names ``arguments``; call with keyword values."""

    def __init__(self, text: str, arguments: Iterable[str]):
        self.text = text
        self.arguments = tuple(arguments)
        if not isinstance(text, str) or not text.strip():
            raise ExpressionError("empty expression")
        if len(text) > MAX_LENGTH:
            raise ExpressionError(f"expression longer than {MAX_LENGTH} characters")
        try:
            tree = ast.parse(text.strip(), mode="eval")
        except SyntaxError as exc:
            raise ExpressionError(f"syntax error at column {exc.offset}: {exc.msg}") from None
        nodes = list(ast.walk(tree))
        if len(nodes) > MAX_NODES:
            raise ExpressionError(f"expression has more than {MAX_NODES} syntax nodes")
        known = set(self.arguments) | set(CONSTANTS)
        called = {id(node.func) for node in nodes if isinstance(node, ast.Call)}
        for node in nodes:
            if not isinstance(node, _ALLOWED_NODES):
                raise ExpressionError(f"{type(node).__name__} is not allowed")
            if isinstance(node, ast.Call):
                if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
                    name = getattr(node.func, "id", ast.unparse(node.func))
                    raise ExpressionError(f"call of {name!r} is not allowed; allowed functions: "
                                          + ", ".join(sorted(FUNCTIONS)))
                if node.keywords:
                    raise ExpressionError("keyword arguments are not allowed")
            elif (isinstance(node, ast.Name) and node.id in FUNCTIONS and node.id not in known
                  and id(node) not in called):
                raise ExpressionError(f"{node.id!r} is a function: call it, e.g. {node.id}(x)")
            elif isinstance(node, ast.Name) and node.id not in known and node.id not in FUNCTIONS:
                raise ExpressionError(f"unknown name {node.id!r}; allowed names: "
                                      + ", ".join(self.arguments + tuple(CONSTANTS)))
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
                                  + ", ".join(f"{k}={v!r}" for k, v in values.items())) from None
        return self._real(result, values)

    @staticmethod
    def _real(result, values: dict) -> float:
        try:
            result = float(result)
        except (TypeError, ValueError):
            raise ExpressionError(f"result {result!r} is not a real number") from None
        if not math.isfinite(result):
            raise ExpressionError("result is not finite for "
                                  + ", ".join(f"{k}={v!r}" for k, v in values.items()))
        return result
