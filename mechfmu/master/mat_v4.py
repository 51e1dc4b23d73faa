"""MATLAB v4 matrices, the pieces of Dymola's result format 1.1 (``mechfmu.master.result_files.MatWriter``)."""
from __future__ import annotations

import struct
from itertools import chain

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


def trajectory_head(names: list[str], units: dict[str, str], time: float) -> tuple[bytes, int, int]:
    """Dymola's result format 1.1 up to ``data_2``'s values (``MatWriter`` says what each matrix holds) for the
    variables ``names`` (time first) with their ``units``, ``time`` the first point's; with where ``data_1``'s values
    and ``data_2``'s header start."""
    described = ["Simulation time [s]"] + [f"[{units[n]}]" if units.get(n, "1") not in ("", "1") else ""
                                           for n in names[1:]]
    aclass = [text.ljust(11, "\0") for text in ("Atrajectory", "1.1", "", "binTrans")]
    head = matrix("Aclass", TEXT, 4, 11, "".join(map("".join, zip(*aclass))).encode())
    head += text_matrix("name", names) + text_matrix("description", described)
    info = [(0, 1, 0, -1)] + [(2, k, 0, -1) for k in range(2, len(names) + 1)]
    head += matrix("dataInfo", INT32, 4, len(names), struct.pack(f"<{4 * len(info)}i", *chain(*info)))
    head += matrix("data_1", DOUBLE, 1, 2, struct.pack("<2d", time, time))
    return head + matrix("data_2", DOUBLE, len(names), 0, b""), len(head) - 16, len(head)
