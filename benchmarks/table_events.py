"""Cost of a Table's time events in Model Exchange, against its number of rows.

A Table whose rows are all kinks (a sawtooth of ``n`` rows over 1 s) announces a time event at every row; fmpy
integrates the Model Exchange FMU with CVode and stops at each. The cost of one event must not grow with the
table (O(log n): the row times are sorted once and searched by bisection), so the wall time per event at
20,000 rows stays near that at 1,000. Measured before the change: 4,000 rows took 9.8 s and 20,000 over a
minute, each event rebuilding and sorting every row time. Printed: rows, events, wall time, time per event,
and its ratio to the smallest table's.

    python3 benchmarks/table_events.py [ROWS ...]
"""
from __future__ import annotations

import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def sawtooth(rows: int) -> str:
    """``rows`` rows over [0, 1] s alternating 0 and 1: every row is a kink."""
    return "; ".join(f"{i / (rows - 1)!r}, {i % 2}" for i in range(rows))


def run(rows: int) -> tuple[int, float]:
    """(time events, wall time [s]) of a 1 s Model Exchange run of the Table FMU with ``rows`` rows."""
    from fmpy import simulate_fmu

    started = time.perf_counter()
    result = simulate_fmu(str(ROOT / "fmus" / "Table.fmu"), fmi_type="ModelExchange", stop_time=1.0,
                          output_interval=0.5, start_values={"table": sawtooth(rows)}, output=["y"],
                          record_events=True)
    wall = time.perf_counter() - started
    times = result["time"]
    events = int(sum(1 for a, b in zip(times[:-1], times[1:]) if a == b))  # an event records two rows at its time
    return events, wall


def main(sizes: list[int]) -> None:
    from mechfmu.fmu import build
    from mechfmu.fmu.native import parse_platforms
    build.build(["Table"], platforms=parse_platforms("host"))
    print(f"{'rows':>7s} {'events':>7s} {'wall [s]':>9s} {'per event [ms]':>15s} {'ratio':>6s}")
    first = None
    for rows in sizes:
        events, wall = run(rows)
        per_event = wall / max(events, 1)
        first = first or per_event
        print(f"{rows:7d} {events:7d} {wall:9.2f} {1e3 * per_event:15.3f} {per_event / first:6.2f}")


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [1000, 4000, 20000])
