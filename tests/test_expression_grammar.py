"""One grammar for user functions (docs/components.md#user-functions), held in both evaluators: the Python one
(components/expressions.py, on Python's own ``ast``) and the C one (components/native/expression.c, in the FMUs).
Each edge of the grammar is a test against an independent expectation (Python's ``int``/``float``, ``ast`` of the
same text, the arithmetic written out), and a seeded generated corpus holds the two evaluators to each other:
the same float bit for bit, or the same refusal (every syntax error is one kind: CPython's wording is not copied).
Deep nesting runs on a 256 KiB thread stack: the deepest accepted expressions evaluate, one level more is refused."""
import ast
import ctypes
import math
import random
import subprocess
import sys
import textwrap
import warnings

import pytest
from test_native_expressions import NAMES, agree, build_library, in_c, in_python

from mechfmu.components.expressions import MAX_BRACKETS, MAX_LENGTH, MAX_NODES, Expression, ExpressionError

ARGS = (0.5, -1.25, 3.0, 2.0)  # t, u, v, k
VALUES = dict(zip(NAMES, ARGS))


@pytest.fixture(scope="module")
def library(tmp_path_factory):
    """The C evaluator as a shared library (tests/test_native_expressions.py builds it)."""
    return build_library(tmp_path_factory.mktemp("expression_grammar"))


def both(lib, text: str, seed: int | None = None) -> tuple[tuple[str, object], tuple[str, object]]:
    return in_python(text, ARGS, seed), in_c(lib, text, ARGS, seed)


def reference(text: str) -> float:
    """Python's own evaluation of the same text (plain eval of its ast, floats for the names)."""
    with warnings.catch_warnings():  # "1if u else 2": a number touching a keyword warns
        warnings.simplefilter("ignore")
        tree = ast.parse(text.strip(), mode="eval")
    return float(eval(compile(tree, "<reference>", "eval"),  # noqa: S307
                      {"__builtins__": {}, "sin": math.sin, "pi": math.pi}, dict(VALUES)))


def test_integer_literals_of_any_size_and_base_are_their_exact_value_as_a_float(library):
    """2**64 and more in hex, octal and binary were 1.8446744073709552e19 in C (saturated): float(int) rounds the
    exact value to the nearest double, ties to even, as Python's float(int)."""
    rng = random.Random(7)
    texts = ["0x10000000000000000", "0o2000000000000000000000", "0b1" + "0" * 64, "0xFFFFFFFFFFFFFFFF",
             "0x1FFFFFFFFFFFFF", "0x20000000000001", "0x20000000000003", "0x1" + "0" * 255, "0x_1_0",
             "0x" + "f" * 255, "0b" + "1" * 1000, "0o7" + "7" * 340, "18446744073709551617", "9007199254740993"]
    texts += ["0x" + "".join(rng.choice("0123456789abcdefABCDEF") for _ in range(rng.randint(15, 250)))
              for _ in range(60)]
    texts += ["0b1" + "".join(rng.choice("01") for _ in range(rng.randint(52, 300))) for _ in range(60)]
    for text in texts:
        expected = float(int(text.replace("_", ""), 0))
        python, native = both(library, text)
        assert python == ("ok", expected) and native[0] == "ok", (text, python, native)
        assert math.copysign(1.0, native[1]) * native[1] == expected and native[1] == expected, (text, native)


def test_integer_literals_beyond_the_largest_float_are_refused_alike(library):
    for text in ("0x1" + "0" * 256, "0x" + "f" * 256, "0b1" + "0" * 1024, "0o1" + "0" * 342, "1" + "0" * 309):
        with pytest.raises(OverflowError):
            float(int(text, 0))
        python, native = both(library, text)
        assert python == native == ("parse", "integer literal beyond the largest real number (1.8e308)"), text


@pytest.mark.parametrize("text", ["0x", "0o", "0b", "0x_", "1__0", "1_", "1_.5", "1._5", "1e_5", "1e", "0_7", "07",
                                  "0b2", "0o8", "0xg", "1.5_", "5j_", "0x1.5", "1e+", "2abc"])
def test_malformed_number_literals_are_syntax_errors_in_both(library, text):
    with pytest.raises(SyntaxError):
        ast.parse(text, mode="eval")
    python, native = both(library, text)
    assert python[0] == native[0] == "parse", (python, native)
    assert str(python[1]).startswith("syntax error") and str(native[1]).startswith("syntax error"), (python, native)


@pytest.mark.parametrize("text", ["1_000.5", "0_0", "00", "0x_f", "1e1_0", "1_0e-1_0", ".5", "5.", "1E+3", "0e0",
                                  "1if u else 2", "1 if u else 2", "0x1for"])
def test_well_formed_number_literals_agree_with_python(library, text):
    python, native = both(library, text)
    if text == "0x1for":  # 0x1f or: a number touching a keyword, as Python's tokenizer reads it
        assert python[0] == native[0] == "parse"
        return
    assert python == native == ("ok", reference(text)), (python, native)


@pytest.mark.parametrize("text, column, what", [("u\n+ 1", 2, "line break"), ("(u\n+ 1)", 3, "line break"),
                                                ("u \\\n+ 1", 3, "backslash"), ("u\r+1", 2, "line break"),
                                                ("u # a\nb", 6, "line break"), ("u + 'a\\b'", 7, "backslash")])
def test_a_line_break_or_a_backslash_is_refused_alike(library, text, column, what):
    """An expression is one line (a parameter value): refused by both with the same words, where Python's parser
    would take some of them (inside brackets, after a backslash)."""
    python, native = both(library, "  " + text + "\n")
    assert python == native == ("parse", f"{what} at column {column}: an expression is one line"), (python, native)


@pytest.mark.parametrize("text", ["u # comment", "u#", "u + 1 # ü, é and 'quotes'", "\vu\v", "\x0c u \x1c",
                                  "\u3000u + 1\u2003", "\xa0u\x85", "u\x0c+\t1", "ｕ + ｓｉｎ(ｕ)", "ｐｉ * u",
                                  "u_１ + 1" .replace("u_１", "ｕ"), "sin(u)＿".replace("＿", "")])
def test_comments_whitespace_and_fullwidth_names_are_read_as_python_reads_them(library, text):
    """Comments run to the end; str.strip's whitespace (vertical tab, U+3000, ...) is stripped; fullwidth letters
    are their ASCII letters (NFKC): the value of Python's own evaluation of the text, in both."""
    expected = reference(text)
    assert both(library, text) == (("ok", expected), ("ok", expected))


@pytest.mark.parametrize("text", ["é + 1", "ué", "ℯ * u", "u\u00a0+ 1", "u € 1", "u\x0b+1", "u\x01", "ｕé"])
def test_other_characters_outside_comments_are_syntax_errors_in_both(library, text):
    python, native = both(library, text)
    assert python[0] == native[0] == "parse", (python, native)
    assert str(python[1]).startswith("syntax error") and str(native[1]).startswith("syntax error"), (python, native)


def test_129_and_more_chained_comparisons_evaluate_as_python(library):
    for count, operator in ((129, "<"), (129, "<="), (132, "!="), (131, ">")):
        text = f" {operator} ".join(["u", "v"] * (count // 2 + 1))[: 4 * count]
        text = text.rstrip(f" {operator}")
        expected = reference(text)
        assert both(library, text) == (("ok", expected), ("ok", expected)), text


@pytest.mark.slow
def test_long_chains_are_taken_up_to_the_node_limit_and_refused_by_it(library):
    """`**`, `and`, `or` and if-else chains are not brackets: up to 400 syntax nodes they evaluate, beyond it both
    say so (they were "too many nested parentheses" in C)."""
    for unit, join in (("u", " ** "), ("u", " and "), ("v", " or "), ("u", " if v else "), ("u", " + "),
                       ("sin(u)", " * "), ("-u", " - ")):
        fitting = None
        for count in range(2, 400):
            text = join.join([unit] * count)
            if len(text) > MAX_LENGTH:
                break
            python, native = both(library, text)
            if python[0] == "parse":
                assert python == native == ("parse", f"expression has more than {MAX_NODES} syntax nodes"), text
                break
            fitting = count
            assert python[0] == native[0] and agree(python, native, text), (text, python, native)
        assert fitting and fitting > 50, (join, fitting)


def nested(depth: int, kind: str) -> str:
    if kind == "brackets":
        return "(" * depth + "u" + ")" * depth
    if kind == "calls":
        return "sin(" * depth + "u" + ")" * depth
    if kind == "lists":
        return "[" * depth + "u" + "]" * depth
    return "(" * (depth - 130) + "sin(" * 130 + "u" + ")" * depth  # 130 nested calls inside brackets


@pytest.mark.parametrize("kind", ["brackets", "calls", "lists", "mixed"])
def test_brackets_nest_200_deep_and_201_are_refused_by_both(library, kind):
    deepest, beyond = nested(MAX_BRACKETS, kind), nested(MAX_BRACKETS + 1, kind)
    python, native = both(library, deepest)
    if kind == "lists":
        assert python == native == ("parse", "List is not allowed")
    elif kind == "calls":  # 200 calls are 601 syntax nodes
        assert python == native == ("parse", f"expression has more than {MAX_NODES} syntax nodes")
    else:
        assert agree(python, native, deepest) and python[0] == "ok", (python, native)
    python, native = both(library, beyond)
    expected = f"too many nested parentheses (at most {MAX_BRACKETS})"
    assert python[0] == native[0] == "parse" and str(python[1]).endswith(expected), python
    assert str(native[1]).endswith(expected), native


DEEP_ON_A_SMALL_STACK = textwrap.dedent("""
    import ctypes, sys, threading
    lib = ctypes.CDLL(sys.argv[1])
    lib.expression_parse.restype = ctypes.c_void_p
    lib.expression_parse.argtypes = [ctypes.c_char_p, ctypes.POINTER(ctypes.c_char_p), ctypes.c_size_t,
                                     ctypes.c_char_p, ctypes.c_size_t]
    lib.expression_value.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double),
                                     ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_size_t]
    lib.expression_derivative.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double), ctypes.c_size_t,
                                          ctypes.POINTER(ctypes.c_double), ctypes.c_char_p, ctypes.c_size_t]
    lib.expression_free.argtypes = [ctypes.c_void_p]
    texts = [line.rstrip("\\n") for line in open(sys.argv[2], encoding="utf-8")]
    out = []
    def run():
        names = (ctypes.c_char_p * 1)(b"u")
        why, value, u = ctypes.create_string_buffer(4096), ctypes.c_double(), (ctypes.c_double * 1)(0.25)
        for text in texts:
            parsed = lib.expression_parse(text.encode(), names, 1, why, len(why))
            if not parsed:
                out.append("refused " + why.value.decode())
                continue
            lib.expression_value(parsed, u, ctypes.byref(value), why, len(why))
            lib.expression_derivative(parsed, u, 0, ctypes.byref(value), why, len(why))
            lib.expression_free(parsed)
            out.append("ok")
    threading.stack_size(256 * 1024)
    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    print("\\n".join(out))
""")


def library_path(lib) -> str:
    return lib._name


def test_the_deepest_expressions_run_on_a_256_kib_thread_stack(library, tmp_path):
    """999 nested parentheses overflowed a 1 MiB stack, 130 nested sin( a 768 KiB one: the deepest expressions the
    grammar takes (200 brackets, 130 calls inside 70 brackets, 198 unary minus, 99 if-else, chains) parse, evaluate
    and differentiate on a 256 KiB thread (a secondary thread on macOS has 512 KiB); one more is refused."""
    deepest = [nested(MAX_BRACKETS, "brackets"), nested(MAX_BRACKETS, "mixed"), "-" * 198 + "u", "not " * 198 + "u",
               "u ** " * 99 + "u", "u if u else " * 79 + "u", "(" * 200 + "-" * 190 + "u" + ")" * 200,
               "(" * 134 + "(u if u else " * 66 + "u" + ")" * 200, " < ".join(["u"] * 133),
               "(" * 200 + "u" + " and u" * 190 + ")" * 200, "(" * 199 + "1" + ")" * 199,
               "(" * 200 + "u ** " * 99 + "u" + ")" * 200, "(" * 200 + "not " * 198 + "u" + ")" * 200,
               "(" * 200 + "-" * 198 + "u" + ")" * 200, "(" * 121 + "(u if u else " * 79 + "u" + ")" * 200]
    beyond = [nested(MAX_BRACKETS + 1, "brackets"), nested(999, "brackets"), "-" * 1999 + "u", "not " * 499 + "u",
              "u**" * 666 + "u", "sin(" * 399 + "u" + ")" * 399]
    texts = tmp_path / "texts"
    texts.write_text("\n".join(deepest + beyond), encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", DEEP_ON_A_SMALL_STACK, library_path(library), str(texts)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    lines = done.stdout.splitlines()
    assert lines[:len(deepest)] == ["ok"] * len(deepest), lines[:len(deepest)]
    assert all(line.startswith("refused ") for line in lines[len(deepest):]) and len(lines) == len(texts.read_text(
        encoding="utf-8").splitlines()), lines[len(deepest):]
    for text in deepest:
        Expression(text, ["u"])(u=0.25)
    for text in beyond:
        with pytest.raises(ExpressionError):
            Expression(text, ["u"])


# --- the generated corpus ------------------------------------------------------------------------------------

NUMBERS = ["0", "1", "2.5", ".5", "5.", "1e3", "1E-3", "1_000", "0x1F", "0o17", "0b101", "0x_f", "1e1_0", "00",
           "3j", "0x", "1__0", "1_", "07", "1e", "0b2", "0x10000000000000001", "0b" + "1" * 70, "1" + "0" * 30,
           "0x1" + "0" * 256, "1" + "0" * 309, "1e400", "2.", "0.0", "True", "None", "'s'", "b'x'"]
SPACES = [" ", "", "\t", "\x0c", "  "]
ENDS = ["", " ", "\v", "\u3000", "\xa0", "\n", "\t \r\n", "\x1c"]
WIDE = str.maketrans({c: chr(ord(c) + 0xFEE0) for c in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_"})


def generated(rng: random.Random, depth: int = 0) -> str:
    space = rng.choice(SPACES)
    if depth > 4 or rng.random() < 0.25:
        return rng.choice([*NAMES, "pi", "e", rng.choice(NUMBERS), rng.choice(NAMES).translate(WIDE)])
    a, b = generated(rng, depth + 1), generated(rng, depth + 1)
    kind = rng.randrange(10)
    if kind == 0:
        return f"{a}{space}{rng.choice(['+', '-', '*', '/', '//', '%', '**', '@', '|'])}{space}{b}"
    if kind == 1:
        return f"{rng.choice(['-', '+', 'not ', '~', '--', 'not not '])}{a}"
    if kind == 2:
        operators = [rng.choice(["<", "<=", ">", ">=", "==", "!=", "is", "in"]) for _ in range(rng.randint(1, 140))]
        return " ".join(x for pair in zip([a, *[generated(rng, 5) for _ in operators]], [*operators, ""])
                        for x in pair).strip()
    if kind == 3:
        return f"{a} if {b} else {generated(rng, depth + 1)}"
    if kind == 4:
        return f" {rng.choice(['and', 'or'])} ".join([a, b] * rng.randint(1, 40))
    if kind == 5:
        return f"({a})" * rng.choice([1, 1, 2]) if rng.random() < 0.8 else "(" * 60 + a + ")" * 60
    if kind == 6:
        return f"{a} ** {b}" + f" ** {a}" * rng.randint(0, 30)
    if kind == 7:
        return f"{a} # {b} ü \\ ' {space}" if depth == 0 else f"{a}{space}"
    if kind == 8:
        return rng.choice([f"{a}.real", f"{a}[0]", f"[{a}]", f"({a}, {b})", f"{{{a}}}", f"lambda: {a}", f"f({a})",
                           f"sin(x={a})", f"sin({a}", f"{a})", f"{a} {b}", "é", f"{a}\x01", f"(yield {a})",
                           f"await {a}", f"{a}.if", "'a' \"b\"", "'''x'''", "b'x' 'y'", "'it''s'", "Rb'z'",
                           "'" + "s" * 90 + "'", "n" * 90, f"{a}[{b}:{a}, ::2]", f"{{**{a}}}", "{}", f"{a}[]",
                           "(" * 200 + "-" * 1500 + "u" + ")" * 200])
    function = rng.choice(["abs", "sqrt", "exp", "log", "sin", "cos", "atan", "floor", "sign", "min", "max",
                           "atan2", "fmod", "hypot", "copysign", "log10"])
    two = function in ("min", "max", "atan2", "fmod", "hypot", "copysign")
    return f"{function}({a},{space}{b})" if two else f"{function}({a})"


@pytest.mark.slow
def test_a_generated_corpus_agrees_in_both_evaluators(library):
    """2,000 expressions from a seeded generator over the grammar and its edges (number forms, whitespace and
    line ends, comments, fullwidth names, long chains, deep brackets, refused constructs): value and derivative
    bit for bit, or the same refusal."""
    rng = random.Random(20261129)
    differing, counts = [], {"ok": 0, "parse": 0, "error": 0}
    for _ in range(2000):
        text = rng.choice(ENDS) + generated(rng) + rng.choice(ENDS)
        if len(text) > MAX_LENGTH + 50:
            text = text[:MAX_LENGTH + 50]
        for seed in (None, rng.randrange(len(NAMES))):
            python, native = both(library, text, seed)
            counts[python[0]] += 1
            if not agree(python, native, text):
                differing.append((text[:200], seed, python, native))
    assert not differing, "\n".join(map(str, differing[:10]))
    assert counts["ok"] > 800 and counts["parse"] > 800 and counts["error"] > 20, counts  # all three compared


def test_a_message_near_2_kb_keeps_its_reason(library):
    """A 2,000-character expression quoted whole left a 2 KB message no room for why it is invalid: the FMU's
    message quotes it abbreviated (first 120 and last 30 characters, its length), then the reason, whole."""
    text = "u + " * 480 + "nosuch + u"
    assert len(text) <= MAX_LENGTH
    out = ctypes.create_string_buffer(1024)
    library.expression_repr.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_size_t]
    library.expression_repr(text.encode(), out, len(out))
    shown = out.value.decode()
    assert shown == repr(text[:120] + " ... " + text[-30:]) + f" ({len(text)} characters)"
    library.expression_repr(b"u + 1", out, len(out))
    assert out.value.decode() == repr("u + 1")


@pytest.mark.slow
def test_an_fmu_message_on_a_2000_character_expression_keeps_its_reason(fmus, tmp_path):
    """Through the master and the native FMU (the SSD's value: an override is refused before the run, with the
    component's own words): the message names component and parameter, quotes the expression abbreviated and ends
    with the whole reason (it was cut at 2 KB inside the quoted expression)."""
    from test_bad_inputs import edited

    from mechfmu.master.simulate import simulate
    law = "k*u + " * 331 + "nosuch"
    assert 1990 < len(law) <= MAX_LENGTH
    folder = edited(tmp_path, lambda text: text.replace('value="0.1*k*u + k*u**3 + v*d"', f'value="{law}"'))
    result = simulate(folder, stop=0.01)
    assert result.status == "error" and "springForceUserFunction" in result.message, result.message
    assert f"{repr(law[:120] + ' ... ' + law[-30:])} ({len(law)} characters) is invalid: unknown name 'nosuch'; " \
           "allowed names: " in result.message, result.message
    assert result.message.rstrip().endswith("pi, e"), result.message[-200:]


@pytest.mark.slow
def test_a_user_function_of_whitespace_only_is_no_user_function_in_the_fmu():
    """Empty is what str.strip leaves empty (a vertical tab, U+3000): the law without a user function, as for ""
    (the FMU stripped only space, tab, CR and LF, and refused the rest as an empty expression)."""
    from mechfmu.master.simulate import simulate
    runs = [simulate("scenarios/oscillator", stop=0.05, local=True,
                     parameters={"spring": {"springForceUserFunction": text}}) for text in ("", "\u3000\v \x0c")]
    assert [run.status for run in runs] == ["ok", "ok"], [run.message for run in runs]
    assert len(runs[0].data) > 10 and runs[0].data.tobytes() == runs[1].data.tobytes()  # bit for bit
