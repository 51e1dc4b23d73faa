"""Memory of a long `mechfmu run --out`: streamed rows are not kept.

Runs `mechfmu run scenarios/oscillator --out X.csv` over STEPS macro steps (h = 1e-4 s, so stop =
STEPS * 1e-4 s) with the FMUs, sampling the process's resident set size (VmRSS) twice a second, and
prints the RSS once the run has started (its CSV exists), at the end, and the growth in between; then
the same for a run of STEPS/10 steps that records in memory (`--plot`, which needs the whole array),
so the ratio of growth per step shows what streaming saves. Target: growth < 10 MB over 1e6 steps. Both
with --no-error-estimate. First (``--estimate-steps``, default 2e5; 0 skips it), with the error estimate on: the peak
RSS of a streamed run of that many steps and of one of a tenth as many. Target: within 10 MB (the estimate streams,
mechfmu/master/companion.py).

    python3 benchmarks/streaming_memory.py [--steps 1000000] [--estimate-steps 200000] [--local]
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
STEP = 1e-4


def rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        line = next(x for x in status if x.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def measure(steps: int, local: bool, folder: Path, record: bool, estimate: bool = False
            ) -> tuple[float, float, float, float]:
    """(RSS when the run started, RSS at its end, wall time, peak RSS) in MiB and s."""
    out = folder / ("recorded.csv" if record else "streamed.csv")
    args = [sys.executable, "-m", "mechfmu.cli", "run", "scenarios/oscillator", "--stop", repr(steps * STEP),
            "--out", str(out)] + ([] if estimate else ["--no-error-estimate"]) + (["--local"] if local else []) + (
            ["--plot", str(folder / "p.png")] if record else [])
    t0 = time.perf_counter()
    proc = subprocess.Popen(args, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = None
    samples = []
    while proc.poll() is None:
        try:
            rss = rss_mib(proc.pid)
        except (FileNotFoundError, StopIteration, ProcessLookupError):
            break
        if started is None and any(folder.glob(f".{out.name}.*.tmp")) and not estimate:
            time.sleep(2.0)  # past the first rows: interpreter, FMUs and buffers are in place
            started = rss_mib(proc.pid)
        samples.append(rss)
        time.sleep(0.5)
    stdout, stderr = proc.communicate()
    if proc.returncode != 0:
        raise SystemExit(f"run failed ({proc.returncode}): {stdout}{stderr}")
    if estimate:
        return samples[0] if samples else 0.0, max(samples[-4:]), time.perf_counter() - t0, max(samples)
    if started is None:
        raise SystemExit("the run ended before it could be measured; use more steps")
    return started, max(samples[-4:]), time.perf_counter() - t0, max(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1_000_000)
    parser.add_argument("--local", action="store_true", help="components in-process instead of FMUs")
    parser.add_argument("--estimate-steps", type=int, default=200_000,
                        help="steps of the streamed run with the error estimate on (0: skip)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        if args.estimate_steps:
            peaks = {}
            for steps in (args.estimate_steps // 10, args.estimate_steps):
                _, _, wall, peak = measure(steps, args.local, folder, record=False, estimate=True)
                peaks[steps] = peak
                print(f"streaming --out with the error estimate, {steps} steps: peak RSS {peak:.1f} MiB ({wall:.0f} s)")
            small, large = peaks.values()
            print(f"target: the {args.estimate_steps}-step run's peak RSS within 10 MB of the "
                  f"{args.estimate_steps // 10}-step run's: {(large - small) * 1.048576:+.1f} MB, "
                  f"{'met' if (large - small) * 1.048576 <= 10 else 'NOT met'}")
        if not args.steps:
            return
        start, end, wall, _ = measure(args.steps, args.local, folder, record=False)
        print(f"streaming --out, {args.steps} steps ({'in-process' if args.local else 'FMUs'}): RSS {start:.1f} MiB "
              f"after start, {end:.1f} MiB at the end, growth {end - start:+.1f} MiB ({wall:.0f} s)")
        recorded_steps = max(20_000, args.steps // 10)
        r_start, r_end, r_wall, _ = measure(recorded_steps, args.local, folder, record=True)
        print(f"recording in memory (--plot), {recorded_steps} steps: RSS {r_start:.1f} -> {r_end:.1f} MiB, growth "
              f"{r_end - r_start:+.1f} MiB ({r_wall:.0f} s)")
        per_step = ((end - start) / args.steps, (r_end - r_start) / recorded_steps)
        print(f"growth per 1e5 steps: streaming {per_step[0] * 1e5:.2f} MiB, recording {per_step[1] * 1e5:.2f} MiB")
        print(f"target: growth over {args.steps} streamed steps < 10 MB: "
              f"{'met' if (end - start) * 1.048576 < 10 else 'NOT met'}")


if __name__ == "__main__":
    main()
