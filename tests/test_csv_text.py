"""A result row's CSV text from the compiled exchange (``mechfmu.master.csv_text``: Ryu's shortest digits in CPython's
layout) is the bytes Python's ``repr`` writes, for every kind of double: random bit patterns over the whole range
(subnormals, the largest, both signs), integers near 2^53 and 1e16 (where repr turns to an exponent), decimal
fractions, the bounds of fixed notation (1e-4 fixed, 1e-5 not), NaN, the infinities and -0.0."""
import array
import ctypes
import math

import numpy as np
import pytest
from conftest import unavailable

from mechfmu.master import csv_text, exchange


@pytest.fixture(scope="module")
def compiled():
    if exchange.library() is None:
        unavailable("the compiled exchange is not built here: a C compiler ($CC, cc or gcc) is needed")
    return csv_text


EDGES = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 1e-4, 1e-5, 0.00011, 9.999e-5, 1e15, 1e16, 9999999999999998.0, 2e16 + 8,
         123456789012345678.0, 2.0**53, 2.0**53 + 2, 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308,
         1e22, 1e23, 1e100, 1e-100, 123.0, 100.0, 0.5, 1e-7, math.nan, -math.nan, math.inf, -math.inf]


def test_a_row_is_the_bytes_repr_writes(compiled):
    rng = np.random.default_rng(20261130)
    bits = rng.integers(0, 2**64, size=100_000, dtype=np.uint64)
    decimals = np.round(rng.random(50_000) * 10.0 ** rng.integers(0, 9, 50_000)) / 10.0 ** rng.integers(0, 9, 50_000)
    integers = rng.integers(-2**60, 2**60, size=50_000).astype(float)
    values = [*EDGES, *bits.view(np.float64).tolist(), *decimals.tolist(), *integers.tolist()]
    for start in range(0, len(values), 997):  # rows of 997 values, the last one shorter
        row = tuple(values[start:start + 997])
        assert compiled.csv_line(row) == compiled.csv_row(row).encode(), row


def test_a_row_of_other_numbers_and_one_of_no_number(compiled):
    row = (0.25, 3, True, np.float64(2.5), np.float32(0.1))  # read as float(v), as the Python path does
    assert compiled.csv_line(row) == b"0.25,3.0,1.0,2.5,0.10000000149011612\n"
    with pytest.raises(TypeError):
        compiled.csv_line((1.0, "x"))


def test_csv_rows_refuses_what_does_not_fit(compiled):
    library = compiled._library()
    values = array.array("d", [-1.2345678901234567e-308, 1.0])
    address, count = values.buffer_info()
    needed = len(b"-1.2345678901234567e-308,1.0\n")
    room = ctypes.create_string_buffer(64)
    assert library.csv_rows(address, 1, count, room, 25) == -1  # each value is given the room of the longest
    assert library.csv_rows(address, 1, count, room, 64) == needed
    assert library.csv_rows(None, 1, count, room, 64) == library.csv_rows(address, 1, 0, room, 64) == -1
