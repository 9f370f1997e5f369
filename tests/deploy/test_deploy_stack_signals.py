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

import os
import signal
import subprocess
import sys
import time
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
import os, sys, time
real = {real!r}
if {when}:
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


def backends_with(folder: Path, real: Path, slow: str | None, when: str, marker: Path) -> Path:
    """A backends folder of links to the real programs, ``slow`` behind a wrapper that waits first."""
    folder.mkdir()
    for name in PROGRAMS:
        if name == slow:
            script = WRAPPER.format(
                python=sys.executable, real=str(real / name), when=when, marker=str(marker), slow=SLOW
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


@pytest.mark.parametrize("case", list(CASES))
def test_a_signal_stops_the_stack_at_once_and_leaves_no_process(tmp_path: Path, case: str) -> None:
    real = require_backends()
    slow, when, signum = CASES[case]
    marker = tmp_path / "slow-started"
    backends = backends_with(tmp_path / "backends", real, slow, when, marker)
    ports = deploy_stack.free_ports()
    code = (
        f"import sys; sys.path.insert(0, {str(DEPLOY)!r}); import stack; stack.DEFAULT_PORTS.update({ports!r}); "
        f"sys.exit(stack.main(['--data-dir', {str(tmp_path / 'data')!r}, '--backends', {str(backends)!r}]))"
    )
    out, err = (tmp_path / "out").open("w"), (tmp_path / "err").open("w")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=out, stderr=err, stdin=subprocess.DEVNULL)
    try:
        if slow is not None:
            wait_for(marker.exists, 60, f"{slow}'s wrapper started")
            time.sleep(0.3)  # well inside the wait: the wrapper sleeps SLOW s
        else:
            wait_for(lambda: "stack is up" in (tmp_path / "out").read_text(), 90, "the stack up")
        running = processes_naming(str(tmp_path))
        assert proc.poll() is None and running, (proc.returncode, (tmp_path / "err").read_text())
        sent = time.monotonic()
        proc.send_signal(signum)
        try:
            returncode = proc.wait(timeout=STOPPED_WITHIN)
        except subprocess.TimeoutExpired:
            pytest.fail(f"stack.py still running {STOPPED_WITHIN:.0f} s after {signum.name} ({case})")
        took = time.monotonic() - sent
        left = processes_naming(str(tmp_path))
        assert not left, f"left behind after {signum.name}: {left}"
        assert returncode == 0, (returncode, (tmp_path / "err").read_text())
        if slow == "prometheus":
            assert "stopped while prometheus was starting" in (tmp_path / "err").read_text()
            assert {c.split()[0].rsplit("/", 1)[-1] for c in running.values()} >= set(PROGRAMS) - {"prometheus"}
        print(f"{case}: stopped {took:.2f} s after {signum.name}; {len(running)} process(es) had been running")
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for pid in processes_naming(str(tmp_path)):  # only this test's: their command lines name its folder
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        out.close()
        err.close()
