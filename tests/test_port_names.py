"""The master's coupling algorithms spell no port name as a string literal: they take every name of the port
vocabulary from components/ports.py (the one place they are spelled), read here with Python's own ast."""
import ast
from pathlib import Path

import pytest
from mechfmu.components import ports

ROOT = Path(__file__).resolve().parent.parent
NAMES = {value for value in vars(ports).values() if isinstance(value, str) and value and not value.startswith("_")}
#: a port name as a literal: the name (one of a single letter only as a dict's key or value, not as text such as
#: a plural's "s"), a flange variable's suffix (".f"), and either with the rate suffix
SPELLINGS = {form for name in NAMES for form in ((name,) if len(name) > 1 else ())
             + ("." + name, name + ports.RATE, "." + name + ports.RATE)}
SINGLE = {name for name in NAMES if len(name) == 1}


def literals(source: str) -> list[tuple[int, str]]:
    """The string constants of a module outside docstrings and f-strings' text, with their lines."""
    tree = ast.parse(source)
    docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                  if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body
                  and isinstance(node.body[0], ast.Expr) and isinstance(node.body[0].value, ast.Constant)}
    texts = {id(part) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for part in node.values}
    keys = {id(k) for node in ast.walk(tree) if isinstance(node, ast.Dict) for k in [*node.keys, *node.values]}
    return [(node.lineno, node.value) for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings | texts
            and (node.value in SPELLINGS or node.value in SINGLE and id(node) in keys)]


def test_a_port_name_literal_is_found():
    assert literals('x.endswith(".f_rate")\nd = {"v": "s"}\nn = "s" if 2 else ""\n') == [(1, ".f_rate"), (2, "v"),
                                                                                          (2, "s")]


@pytest.mark.parametrize("module", sorted(p.name for p in (ROOT / "mechfmu/master/algorithms").glob("*.py")))
def test_no_algorithm_spells_a_port_name(module):
    source = (ROOT / "mechfmu/master/algorithms" / module).read_text()
    found = literals(source)
    assert not found, (module, found)
