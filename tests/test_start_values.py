"""resources/start_values.json, read strictly by the same rules on both sides: the native runtime's reader
(components/native/text.c native_json_object, compiled here with AddressSanitizer and UBSan into
tests/start_values_reader.c) held to Python's own ``json`` on a generated corpus (valid objects as ``json.dumps``
writes them, with and without ASCII escapes, astral characters as surrogate pairs, NULs, every truncation and
byte flip of some, non-JSON that a lax reader takes); the Python-embedding FMU's reader
(components/start_values.py) on the same corpus; and the native FMU applying such files."""
import json
import os
import random
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import unavailable
from mechfmu.components import COMPONENTS
from mechfmu.components.base import ComponentError
from mechfmu.components.start_values import LIMIT, apply_start_values, read_start_values, start_values_text

ROOT = Path(__file__).resolve().parent.parent
SOURCES = [f"components/native/{name}" for name in ("runtime.c", "model.c", "text.c", "platform.c", "expression.c")]


@pytest.fixture(scope="module")
def reader(tmp_path_factory):
    import fmpy
    compiler = shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if not compiler:
        unavailable("a C compiler is needed to build tests/start_values_reader.c")
    target = tmp_path_factory.mktemp("reader") / "start_values_reader"
    subprocess.run([compiler, "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all",
                    "-DMECHFMU_NATIVE", f"-I{Path(fmpy.__file__).parent / 'c-code'}", f"-I{ROOT / 'mechfmu/fmu'}",
                    f"-I{ROOT / 'components/native'}", "-o", str(target), str(ROOT / "tests/start_values_reader.c"),
                    *(str(ROOT / s) for s in SOURCES), "-lm", "-ldl", "-lpthread"], check=True)
    return target


def native(reader: Path, cases: list[bytes], tmp_path: Path, environment: dict | None = None) -> list[str]:
    """The reader's line for each case (module docstring of tests/start_values_reader.c)."""
    corpus = tmp_path / "cases.bin"
    corpus.write_bytes(b"".join(struct.pack("<Q", len(c)) + c for c in cases))
    proc = subprocess.run([str(reader), str(corpus)], capture_output=True, timeout=600,
                          env={**os.environ, "LC_ALL": "C", **(environment or {})})
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")[-3000:]
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == len(cases)
    return lines


class _Pairs(list):
    pass


def _no_constant(name):
    raise ValueError(name)


def expected(data: bytes) -> str:
    """What a strict reader must answer, from Python's json: "refused", or the members as the reader prints them."""
    try:
        pairs = json.loads(data.decode("utf-8"), object_pairs_hook=_Pairs, parse_constant=_no_constant)
    except (ValueError, RecursionError):
        return "refused"
    if not isinstance(pairs, _Pairs) or len({n for n, _ in pairs}) != len(pairs):
        return "refused"
    line = ["object"]
    for name, value in pairs:
        try:
            field = name.encode("utf-8").hex() + ":"
            if isinstance(value, bool):
                field += "t:" if value else "f:"
            elif isinstance(value, int):
                number = float(value) if abs(value) < 2**1024 - 2**970 else float("inf") * (1 if value > 0 else -1)
                field += "i:" + (0.0 if number == 0 else number).hex()
            elif isinstance(value, float):
                field += "n:" + value.hex()
            elif isinstance(value, str):
                field += "s:" + value.encode("utf-8").hex()
            else:
                return "refused"  # null, an array, an object
        except UnicodeEncodeError:  # a lone surrogate: no UTF-8 holds it
            return "refused"
        line.append(field)
    return "\t".join(line)


def normalized(line: str) -> str:
    """The reader's line with C's %a as Python's float.hex (and -0 of an integer as 0)."""
    if not line.startswith("object"):
        return "refused" if line.startswith("refused ") else line
    fields = line.split("\t")
    for k, field in enumerate(fields[1:], 1):
        name, kind, value = field.split(":")
        if kind in "tf":
            fields[k] = f"{name}:{kind}:"
        elif kind in "ni":
            number = struct.unpack("<d", int(value, 16).to_bytes(8, "little"))[0]
            fields[k] = f"{name}:{kind}:{(0.0 if kind == 'i' and number == 0 else number).hex()}"
    return "\t".join(fields)


NAMED = [b'{"m": 0x10}', b'{"m": true}', b'{"m": 1} garbage', b'{"m": 1', b'{"m": 1,}', b'{"a\\u0000b": 1}',
         b'{"m": 01}', b'{"m": 1.}', b'{"m": .5}', b'{"m": +1}', b'{"m": 1e}', b'{"m": NaN}', b'{"m": -Infinity}',
         b'{"m": null}', b'{"m": [1]}', b'{"m": {"a": 1}}', b'{"m": 1, "m": 2}', b"{'m': 1}", b'{"m": "\\ud800"}',
         b'{"m": "\\udc00\\ud800"}', b'{"\\ud83d\\ude00": 1}', b'{"m": "\\u00e9\\u4e2d\\ud834\\udd1e"}',
         b'\xef\xbb\xbf{"m": 1}', b'{"m": "\xff"}', b'{"m": "\xed\xa0\x80"}', b'{"m": "\xc0\xaf"}',
         b'{"m": "a\tb"}', b'{"m": "\\u12"}', b'{"m": "\\u+123"}', b'{"m": "\\u 123"}', b'{"m": "\\x41"}',
         b"{}", b"  {  }  ", b"[]", b'"text"', b"1", b"", b" ", b'{"m": 1e400}', b'{"m": -0}', b'{"m": -0.0}',
         b'{"m": 1E+2}', b'{"m": 123456789012345678901234567890}', b'{"m": 4.9e-324}', b'{"m": 2.5e-324}',
         b'{"m":1}\x00', b'{"m"\n:\r1\t}', b'{"m": 1}\x0c', b'{"m": "' + b"x" * 5000 + b'"}']


def generated(seed: int = 7, count: int = 300) -> list[bytes]:
    """Objects as json.dumps writes them (random names and values: astral characters, NULs, controls, numbers
    at the edges of a double), with ensure_ascii on and off, and truncations, byte flips and insertions of some."""
    rng = random.Random(seed)
    alphabet = "abcxyz_.[]0 é中\"\\/\n\t\x00\x01\x7f" + "".join(map(chr, (0x1d11e, 0x1f600, 0xffff, 0x10ffff)))

    def text():
        return "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))

    def value():
        return rng.choice([text(), rng.uniform(-1e6, 1e6), rng.randint(-2**63, 2**63), True, False,
                           rng.choice([0.0, -0.0, 5e-324, 1.7976931348623157e308, 2.2250738585072014e-308, 0.1]),
                           struct.unpack("<d", rng.randbytes(8))[0]])
    cases = []
    for _ in range(count):
        members = {text(): value() for _ in range(rng.randint(0, 5))}
        members = {k: v for k, v in members.items() if not (isinstance(v, float) and v != v)}
        data = json.dumps(members, ensure_ascii=rng.random() < 0.5,
                          allow_nan=True, indent=rng.choice([None, 1])).encode("utf-8", "surrogatepass")
        cases.append(data)
        mutation = rng.randrange(3)
        if data and mutation == 0:
            cases.append(data[:rng.randrange(len(data))])
        elif data and mutation == 1:
            i = rng.randrange(len(data))
            cases.append(data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:])
        elif data:
            i = rng.randrange(len(data))
            cases.append(data[:i] + rng.choice([b",", b"}", b"\\", b'"', b"\\u", b"-", b"e", b"\xf0"]) + data[i:])
    small = b'{"a": "\\ud83d\\ude00", "b": -1.5e-3, "c": true}'
    cases += [small[:k] for k in range(len(small))]
    return cases


@pytest.mark.slow  # the reader built with ASan: 10 s
def test_the_native_reader_answers_as_pythons_json(reader, tmp_path):
    cases = NAMED + generated()
    answers = native(reader, cases, tmp_path)
    wrong = [(case[:200], answer[:300], expected(case)[:300]) for case, answer in zip(cases, answers)
             if normalized(answer) != expected(case)]
    assert not wrong, "\n".join(map(repr, wrong[:20]))
    accepted = sum(a.startswith("object") for a in answers)
    assert 100 < accepted < len(cases) - 100, accepted  # the corpus has both kinds in number


@pytest.fixture(scope="module")
def comma_locale(tmp_path_factory) -> dict[str, str]:
    """The environment of a process in German's locale, whose decimal point is a comma (strtod there reads "1.5"
    as 1), made with localedef."""
    if not shutil.which("localedef"):
        unavailable("localedef (the C library's locale compiler) is needed to make a comma locale")
    folder = tmp_path_factory.mktemp("locales")
    subprocess.run(["localedef", "-i", "de_DE", "-f", "UTF-8", str(folder / "de_DE.UTF-8")], capture_output=True)
    if not (folder / "de_DE.UTF-8").is_dir():
        unavailable("localedef could not make de_DE.UTF-8 (no locale sources: apt-get install locales)")
    return {"LOCPATH": str(folder), "LC_ALL": "de_DE.UTF-8"}


@pytest.mark.slow  # the reader built with ASan: 10 s
def test_the_native_reader_reads_numbers_alike_in_a_comma_locale(reader, tmp_path, comma_locale):
    cases = [b'{"a": 1.5, "b": -2.25e-3, "c": 0.1, "d": 12345.678e2, "e": 7}'] + generated(seed=3, count=60)
    german = native(reader, cases, tmp_path, comma_locale)
    assert [normalized(a) for a in german] == [expected(c) for c in cases]


LOCALE_HOST = """import locale, sys
locale.setlocale(locale.LC_ALL, "")
assert locale.str(0.5) == "0,5"
from fmpy import simulate_fmu
try:
    simulate_fmu(sys.argv[1], start_values={"m": -1.5}, stop_time=0.01, output_interval=1e-3,
                 logger=lambda *a: print(a[-1].decode()))
except Exception:
    pass
"""


@pytest.mark.slow
def test_the_native_fmus_messages_read_numbers_alike_in_a_comma_locale(fmus, comma_locale):
    """Python's repr of a number in the runtime's messages (native_repr) in a host whose locale writes a comma."""
    proc = subprocess.run([sys.executable, "-c", LOCALE_HOST, str(fmus["Mass"])], capture_output=True, text=True,
                          timeout=300, env={**os.environ, **comma_locale})
    assert "Mass 'Mass': m = -1.5 is out of range: must be > 0 kg" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.slow  # the reader built with ASan: 10 s
def test_the_python_reader_takes_what_the_native_one_takes(reader, tmp_path):
    cases = NAMED + generated(seed=11, count=100)
    for case, answer in zip(cases, native(reader, cases, tmp_path)):
        try:
            members = read_start_values(case)
        except ValueError:
            assert answer.startswith("refused"), (case, answer)
            continue
        assert answer.startswith("object") and len(answer.split("\t")) == len(members) + 1, (case, answer)


@pytest.mark.slow  # the reader built with ASan: 10 s
def test_what_the_writer_writes_reads_back(reader, tmp_path):
    values = {"table": "0, 0; 1, 1; " + "; ".join(f"{t}, {t * t}" for t in range(2, 2000)), "m": 2.5, "n": 3,
              "flag": True, "name \U0001f600 \u00e9": "text \U0001d11e", "tiny": 5e-324}
    data = start_values_text(values)
    assert len(values["table"]) > 4096
    assert read_start_values(data) == list(values.items())
    [answer] = native(reader, [data], tmp_path)
    assert normalized(answer) == expected(data) != "refused"
    for bad in ({"m": float("nan")}, {"s": "a\0b"}, {"s": "\ud800"}, {"m": None}):
        with pytest.raises(ValueError):
            start_values_text(bad)
    assert LIMIT == 256 << 20


def table_instance(fmus, tmp_path, data: bytes, messages: list[str]):
    """The native Table FMU unpacked in tmp_path with ``data`` as its start_values.json, instantiated."""
    from fmpy import read_model_description
    from fmpy.fmi2 import (
        FMU2Slave,
        fmi2CallbackAllocateMemoryTYPE,
        fmi2CallbackFreeMemoryTYPE,
        fmi2CallbackFunctions,
        fmi2CallbackLoggerTYPE,
    )
    from test_model_exchange_fmus import calloc, free
    folder = tmp_path / "Table"
    shutil.unpack_archive(str(fmus["Table"]), str(folder), "zip")
    (folder / "resources" / "start_values.json").write_bytes(data)
    description = read_model_description(str(folder))
    fmu = FMU2Slave(guid=description.guid, unzipDirectory=str(folder), modelIdentifier="Table", instanceName="road")
    callbacks = fmi2CallbackFunctions()
    callbacks.logger = fmi2CallbackLoggerTYPE(lambda env, name, status, category, message:
                                              messages.append(message.decode()))
    callbacks.allocateMemory = fmi2CallbackAllocateMemoryTYPE(lambda n, size: calloc(n, size))
    callbacks.freeMemory = fmi2CallbackFreeMemoryTYPE(lambda p: free(p))
    fmu.keep_callbacks = callbacks
    fmu.instantiate(callbacks=callbacks)
    return fmu, {v.name: v.valueReference for v in description.modelVariables}


@pytest.mark.parametrize("size", [9_000, 2 << 20])
def test_the_native_fmu_applies_long_and_astral_strings_exactly(fmus, tmp_path, size):
    """A table string over 4 KB, and a file of 2 MiB (the old reader cut both), read back exactly."""
    table = "0, 0; " + "; ".join(f"{t}, {t / 7!r}" for t in range(1, size // 22))
    values = {"table": table, "fileName": "r\u00e9sum\u00e9 \U0001f600.csv", "columns": 2.0, "timeScale": 2}
    messages: list[str] = []
    fmu, refs = table_instance(fmus, tmp_path, start_values_text(values), messages)
    try:
        assert len(table) > 0.9 * size and b"\\ud83d\\ude00" in start_values_text(values)  # as json.dumps writes it
        assert fmu.getString([refs["table"], refs["fileName"]]) == [table.encode(), values["fileName"].encode()]
        assert fmu.getReal([refs["timeScale"]]) == [2.0] and fmu.getInteger([refs["columns"]]) == [2]
        assert messages == []
    finally:
        fmu.freeInstance()


@pytest.mark.parametrize("data, words", [
    (b'{"timeScale": 0x10}', "not a JSON object of parameter values"),
    (b'{"timeScale": true}', "timeScale = True is a Boolean, not a Real"),
    (b'{"timeScale": 2} x', "data after the object"),
    (b'{"timeScale": 2', "the object is not closed"),
    (b'{"columns": 2.5}', "columns = 2.5 is not an integer"),
    (b'{"columns": 2147483648}', "columns = 2147483648 does not fit an FMI Integer"),
    (b'{"tableOnFile": 1.0}', "tableOnFile = 1.0 is not a Boolean"),
    (b'{"fileName": "a\\u0000b"}', "holds a NUL character"),
    (b'{"time\\u0000Scale": 2}', "no parameter or input named 'time\\x00Scale' (the name holds a NUL character)"),
    (b'{"timeScale": 2, "timeScale": 3}', "the name 'timeScale' appears more than once"),
])
def test_the_native_fmu_refuses_a_file_that_is_not_start_values(fmus, tmp_path, data, words):
    messages: list[str] = []
    fmu, refs = table_instance(fmus, tmp_path, data, messages)
    try:
        assert any(m.startswith("start_values.json: ") and words in m for m in messages), messages
        assert fmu.getReal([refs["timeScale"]]) == [1.0] and fmu.getInteger([refs["columns"]]) == [2]
    finally:
        fmu.freeInstance()
    component = COMPONENTS["Table"]("road")  # the Python-embedding FMU's reader refuses it too
    with pytest.raises((ValueError, ComponentError)):
        apply_start_values(component, data)
