"""The progress bar of `mechfmu run` (`ProgressBar`): a tqdm bar over simulated time on a terminal, nothing when
stderr is piped or redirected; it shows once the run has taken its delay (2 s; $MECHFMU_PROGRESS_DELAY=0 here, so
nothing depends on how fast the run is)."""
import fcntl
import io
import os
import pty
import select
import struct
import subprocess
import sys
import termios
from pathlib import Path

from mechfmu.master.progress import DELAY, ProgressBar, progress_delay
from mechfmu.master.simulate import simulate

ROOT = Path(__file__).resolve().parent.parent
OSCILLATOR = ROOT / "scenarios" / "oscillator"
RUN = [sys.executable, "-m", "mechfmu.cli", "run", str(OSCILLATOR), "--local", "--stop", "0.05", "--no-error-estimate"]
AT_ONCE = {**os.environ, "MECHFMU_PROGRESS_DELAY": "0"}


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_the_bar_shows_simulated_time_on_a_terminal_and_is_cleared_at_the_end():
    terminal = Terminal()
    result = simulate(OSCILLATOR, local=True, stop=0.05, estimate_error=False,
                      observers=[ProgressBar(stop=0.05, file=terminal, delay=0)])
    assert result.ok, result.message
    shown = terminal.getvalue()
    assert "\roscillator:   0%|" in shown and "| t = 0/0.05 s [" in shown
    assert shown.endswith("\r") and shown.rsplit("\r", 2)[-2].strip() == ""  # the line is cleared


def test_no_bar_where_the_output_is_not_a_terminal_or_the_run_is_shorter_than_the_delay():
    piped, terminal = io.StringIO(), Terminal()
    simulate(OSCILLATOR, local=True, stop=0.01, estimate_error=False,
             observers=[ProgressBar(stop=0.01, file=piped, delay=0), ProgressBar(stop=0.01, file=terminal, delay=3600)])
    assert piped.getvalue() == "" and terminal.getvalue() == ""


def test_the_delay_is_two_seconds_unless_the_environment_says(monkeypatch):
    monkeypatch.delenv("MECHFMU_PROGRESS_DELAY", raising=False)
    assert progress_delay() == DELAY == 2.0
    monkeypatch.setenv("MECHFMU_PROGRESS_DELAY", "0")
    assert progress_delay() == 0.0


def test_the_command_line_shows_the_bar_on_a_terminal():
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("4H", 24, 80, 0, 0))  # 80 x 24, as a terminal says
    proc = subprocess.Popen(RUN, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=follower, cwd=ROOT,
                            env=AT_ONCE)
    os.close(follower)
    shown = b""
    try:
        while select.select([leader], [], [], 300)[0]:
            try:
                chunk = os.read(leader, 1 << 16)
            except OSError:  # EIO: the run ended and closed the terminal
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
        out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    assert b"oscillator:" in shown and b"%|" in shown and b"| t = 0/0.05 s [" in shown, shown


def test_the_command_line_shows_no_bar_when_stderr_is_piped():
    proc = subprocess.run(RUN, capture_output=True, text=True, cwd=ROOT, env=AT_ONCE, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == "" and "reached t = 0.05 s" in proc.stdout
