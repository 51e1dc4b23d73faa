"""A result row as CSV text: each value as Python's ``repr`` writes it (the shortest digits that read back to the
same double), by the compiled exchange's ``csv_rows`` (``mechfmu/master/csv_text.c``: Ryu's digits in CPython's
layout, the same bytes at about a tenth of the cost), or by ``repr`` where the exchange is not compiled
(``MECHFMU_EXCHANGE=python``, no C compiler)."""
from __future__ import annotations

import array
import ctypes
from typing import Any

import numpy as np

from mechfmu.master import exchange

_typed: list[Any] = []  # the library with csv_rows typed (None: not compiled), once per process
_buffer: list[Any] = [ctypes.create_string_buffer(0)]


def _library() -> Any:
    if not _typed:
        library = exchange.library()
        if library is not None:
            library.csv_rows.restype = ctypes.c_int64
            library.csv_rows.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64, ctypes.c_char_p,
                                         ctypes.c_int64]
        _typed.append(library)
    return _typed[0]


def csv_header(names: list[str]) -> str:
    """The quoted header line (RFC 4180: a quote inside a name is doubled)."""
    return ",".join('"' + n.replace('"', '""') + '"' for n in names) + "\n"


def csv_row(row: tuple[float, ...]) -> str:
    """``row`` as one CSV line of text, each value's ``repr`` (Python's formatting)."""
    return ",".join(repr(float(v)) for v in row) + "\n"


def csv_line(row: tuple[float, ...]) -> bytes:
    """``row`` (numbers: float, int, bool, numpy's) as one CSV line, ``",".join(repr(float(v)) for v in row) + "\\n"``
    encoded; a value that is not a number is a TypeError."""
    library = _library()
    if library is None or not row:
        return csv_row(row).encode()
    values = array.array("d", row)
    room = 26 * len(values)
    if len(_buffer[0]) < room:
        _buffer[0] = ctypes.create_string_buffer(2 * room)
    address, count = values.buffer_info()
    written = library.csv_rows(address, 1, count, _buffer[0], len(_buffer[0]))
    if written < 0:
        raise RuntimeError(f"csv_rows could not write a row of {count} values into {len(_buffer[0])} bytes")
    return ctypes.string_at(_buffer[0], written)


def csv_lines(rows: np.ndarray) -> bytes:
    """Each row of ``rows`` (points x columns, float64) as ``csv_line`` writes it, one line after another."""
    library = _library()
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    if library is None or not rows.size:
        return "".join(csv_row(row) for row in rows.tolist()).encode()
    room = 26 * rows.size
    if len(_buffer[0]) < room:
        _buffer[0] = ctypes.create_string_buffer(2 * room)
    written = library.csv_rows(rows.ctypes.data, rows.shape[0], rows.shape[1], _buffer[0], len(_buffer[0]))
    if written < 0:
        raise RuntimeError(f"csv_rows could not write {rows.shape[0]} rows of {rows.shape[1]} values into "
                           f"{len(_buffer[0])} bytes")
    return ctypes.string_at(_buffer[0], written)
