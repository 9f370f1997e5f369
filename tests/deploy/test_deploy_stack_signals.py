"""deploy/stack.py stops at once on Ctrl-C, also while its programs start, and leaves no process behind
(issue 46, item 8).

A real ``stack.py`` process (its ``main()``, on free loopback ports: ``make stack``'s are the compose stack's)
starts the real programs of ``make backends`` and gets a real SIGINT. A program that is slow to get ready
(Prometheus replaying a large WAL, say) is the real program behind a wrapper that waits before it execs it;
so is a slow ``otelcol validate``. Before, every wait of the start ignored the signal: 60 s per program that
did not get ready. What is left afterwards is read from /proc: every process whose command line names the
test's folder.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from backends import PROGRAMS, deploy_stack, require_backends
from promql_names import DEPLOY

#: What a stop may take here, from the signal to stack.py's exit (measured: about 0.2 s; the stack's own bound
#: is 0.1 s to notice, then each program's exit). Before the fix a slow start held it for 60 s.
STOPPED_WITHIN = 10.0
#: How long the wrappers wait before they exec the real program: longer than any bound here.
SLOW = 300

WRAPPER = """#!{python}
import os, signal, sys, time
real = {real!r}
if {when}:
    {prelude}
    open({marker!r}, "w").close()
    time.sleep({slow})
os.execv(real, [real, *sys.argv[1:]])
"""


def processes_naming(text: str) -> dict[int, str]:
    """Every live process (not a zombie) whose command line holds ``text``: pid -> command line."""
    found = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if text in cmdline and state != "Z":
            found[int(entry)] = cmdline
    return found


def wait_for(check, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = check()
        if found:
            return found
        time.sleep(0.05)
    raise AssertionError(f"{what}: not within {timeout:.0f} s")


def backends_with(folder: Path, real: Path, slow: str | None, when: str, marker: Path, prelude: str = "pass") -> Path:
    """A backends folder of links to the real programs, ``slow`` behind a wrapper that waits first (after
    ``prelude``)."""
    folder.mkdir()
    for name in PROGRAMS:
        if name == slow:
            script = WRAPPER.format(
                python=sys.executable, real=str(real / name), when=when, marker=str(marker), slow=SLOW, prelude=prelude
            )
            (folder / name).write_text(script)
            (folder / name).chmod(0o755)
        else:
            (folder / name).symlink_to(real / name)
    return folder


CASES = {
    # a program slow to get ready: the others started and ready, prometheus still starting
    "a-program-starting": ("prometheus", "True", signal.SIGINT),
    # the Collector's config check, before any program starts
    "the-config-check": ("otelcol-probability", "sys.argv[1:2] == ['validate']", signal.SIGINT),
    # the stack up and serving (this held before), and a closed terminal (SIGHUP: Prometheus and Alertmanager
    # reload on it, so they outlived the default SIGHUP exit of stack.py)
    "up": (None, "False", signal.SIGINT),
    "up-hangup": (None, "False", signal.SIGHUP),
}


@contextlib.contextmanager
def stack_py(tmp_path: Path, backends: Path) -> Iterator[subprocess.Popen[bytes]]:
    """A real stack.py process (its main(), on free ports); afterwards, whatever happened, it and every process
    whose command line names ``tmp_path`` (only this test's) are killed."""
    ports = deploy_stack.free_ports()
    code = (
        f"import sys; sys.path.insert(0, {str(DEPLOY)!r}); import stack; stack.DEFAULT_PORTS.update({ports!r}); "
        f"sys.exit(stack.main(['--data-dir', {str(tmp_path / 'data')!r}, '--backends', {str(backends)!r}]))"
    )
    with (tmp_path / "out").open("w") as out, (tmp_path / "err").open("w") as err:
        proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
        try:
            yield proc
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pid in processes_naming(str(tmp_path)):
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass


def stopped(proc: subprocess.Popen[bytes], what: str) -> int:
    """stack.py's exit status, within STOPPED_WITHIN s."""
    try:
        return proc.wait(timeout=STOPPED_WITHIN)
    except subprocess.TimeoutExpired:
        pytest.fail(f"stack.py still running {STOPPED_WITHIN:.0f} s after {what}")


@pytest.mark.parametrize("case", list(CASES))
def test_a_signal_stops_the_stack_at_once_and_leaves_no_process(tmp_path: Path, case: str) -> None:
    real = require_backends()
    slow, when, signum = CASES[case]
    marker = tmp_path / "slow-started"
    with stack_py(tmp_path, backends_with(tmp_path / "backends", real, slow, when, marker)) as proc:
        if slow is not None:
            wait_for(marker.exists, 60, f"{slow}'s wrapper started")
            time.sleep(0.3)  # well inside the wait: the wrapper sleeps SLOW s
        else:
            wait_for(lambda: "stack is up" in (tmp_path / "out").read_text(), 90, "the stack up")
        running = processes_naming(str(tmp_path))
        assert proc.poll() is None and running, (proc.returncode, (tmp_path / "err").read_text())
        sent = time.monotonic()
        proc.send_signal(signum)
        returncode = stopped(proc, f"{signum.name} ({case})")
        took = time.monotonic() - sent
        left = processes_naming(str(tmp_path))
        assert not left, f"left behind after {signum.name}: {left}"
        assert returncode == 0, (returncode, (tmp_path / "err").read_text())
        if slow == "prometheus":
            # waiting for a program that is not ready yet: prometheus, or one before it on a loaded machine
            assert " was starting; stopping" in (tmp_path / "err").read_text()
            assert {c.split()[0].rsplit("/", 1)[-1] for c in running.values()} >= set(PROGRAMS) - {"prometheus"}
        print(f"{case}: stopped {took:.2f} s after {signum.name}; {len(running)} process(es) had been running")


def test_a_second_ctrl_c_kills_a_program_that_does_not_stop(tmp_path: Path) -> None:
    """A program that ignores SIGTERM is waited for (up to 15 s) after the first Ctrl-C, and killed at once on
    the second, with the rest; nothing is left."""
    real = require_backends()
    marker = tmp_path / "slow-started"
    backends = backends_with(
        tmp_path / "backends", real, "prometheus", "True", marker, "signal.signal(signal.SIGTERM, signal.SIG_IGN)"
    )
    with stack_py(tmp_path, backends) as proc:
        wait_for(marker.exists, 60, "prometheus's wrapper started")
        time.sleep(0.3)
        proc.send_signal(signal.SIGINT)
        time.sleep(1.5)
        assert proc.poll() is None  # waiting for the program it terminated
        assert processes_naming(str(tmp_path / "backends" / "prometheus"))
        proc.send_signal(signal.SIGINT)
        assert stopped(proc, "the second SIGINT") == 0, (tmp_path / "err").read_text()
        assert not processes_naming(str(tmp_path)), processes_naming(str(tmp_path))
