"""MATLAB v4 matrices, the pieces of Dymola's result format 1.1 (``mechfmu.master.result_files.MatWriter``)."""
from __future__ import annotations

import struct

#: a matrix's type: float64, int32, char (MATLAB v4's type codes, little-endian)
DOUBLE, INT32, TEXT = 0, 20, 51


def matrix(name: str, kind: int, rows: int, columns: int, data: bytes) -> bytes:
    """One MATLAB v4 matrix: its header (type, rows, columns, no imaginary part, the name's length with its NUL),
    its name and ``data``, the values column by column."""
    label = name.encode() + b"\0"
    return struct.pack("<5i", kind, rows, columns, 0, len(label)) + label + data


def text_matrix(name: str, texts: list[str]) -> bytes:
    """``texts`` as the columns of a char matrix, each UTF-8 and padded with NULs to the longest one's length and
    one more (OpenModelica's padding)."""
    encoded = [text.encode() for text in texts]
    width = max(map(len, encoded)) + 1
    return matrix(name, TEXT, width, len(encoded), b"".join(text.ljust(width, b"\0") for text in encoded))
