"""End to end: every file the session writes, on a full file system (issue 23, item 6).

The JSON and HTML reports, the OTLP file and the spill file each keep their previous content whole,
each failure is one note naming its file, and the exit status follows the docs (3 for a report that
could not be written; exporting never changes it). Two ways to fill the disk: a real 64 KiB tmpfs
(when this machine lets the test mount one: root, and mounting allowed), and RLIMIT_FSIZE in the
session's process (SIGXFSZ ignored, so a write past the limit gets EFBIG), which works anywhere.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from sessions import clean_export_env, closed_port, session

#: The session's own limit on file size under "fsize": more than its terminal output, less than any report.
LIMIT = 4 * 1024
NAMES = ("report.json", "report.html", "otel.jsonl", "spill.jsonl")


@pytest.fixture(params=["tmpfs", "fsize"])
def full(request: pytest.FixtureRequest, pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch,
         tmp_path: Path) -> Iterator[tuple[Path, str]]:  # fmt: skip
    """A folder holding the previous version of every file, where nothing more fits."""
    clean_export_env(monkeypatch, pytester)
    folder = tmp_path / "full"
    folder.mkdir()
    mounted = False
    if request.param == "tmpfs":
        if os.geteuid() != 0 or shutil.which("mount") is None:
            pytest.skip("mounting a tmpfs needs root")
        done = subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(folder)], capture_output=True, text=True
        )
        if done.returncode != 0:
            pytest.skip(f"cannot mount a tmpfs here: {done.stderr.strip()}")
        mounted = True
    else:
        pytester.makeconftest(
            "import resource, signal\n\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit gets EFBIG, not a kill\n"
            f"resource.setrlimit(resource.RLIMIT_FSIZE, ({LIMIT}, {LIMIT}))\n"
        )
    try:
        for name in NAMES:
            (folder / name).write_text(f"the previous {name}\n")
        if mounted:  # fill what is left
            try:
                with open(folder / "filler", "wb") as handle:
                    while True:
                        handle.write(b"\0" * 4096)
                        handle.flush()
            except OSError:
                pass
        yield folder, request.param
    finally:
        if mounted:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


def run(pytester: pytest.Pytester, folder: Path, *files: str) -> pytest.RunResult:
    pytester.makepyfile(bench_many="def bench_many():\n    pass\n")
    options = {
        "report.json": f"--prob-json={folder / 'report.json'}",
        "report.html": f"--prob-html={folder / 'report.html'}",
        "otel.jsonl": f"--prob-otel-file={folder / 'otel.jsonl'}",
        "spill.jsonl": f"--prob-otel-spill={folder / 'spill.jsonl'}",
    }
    return session(
        pytester, "-q", "--prob-runs=200", *(options[name] for name in files),
        f"--prob-otel-endpoint=http://127.0.0.1:{closed_port()}", "--prob-otel-timeout=2", timeout=120,
    )  # fmt: skip


def check_untouched(folder: Path, result: pytest.RunResult) -> list[str]:
    """Every previous file whole, no temporary or partial file left; return the notes."""
    for name in NAMES:
        assert (folder / name).read_text() == f"the previous {name}\n", name
    assert sorted(p.name for p in folder.iterdir() if p.name != "filler") == sorted(NAMES)
    output = result.stdout.str() + result.stderr.str()
    assert "Traceback" not in output and "INTERNALERROR" not in output, output
    return [line.strip() for line in result.outlines if "could not" in line]


def test_every_file_on_a_full_disk_keeps_its_previous_content(
    pytester: pytest.Pytester, full: tuple[Path, str]
) -> None:
    folder, how = full
    result = run(pytester, folder, *NAMES)
    reason = "No space left on device" if how == "tmpfs" else "File too large"
    notes = check_untouched(folder, result)
    match = re.search(r"could not keep 201 spans and (\d+) metric points", result.stdout.str())
    points = match.group(1) if match else "?"
    assert notes == [
        f"could not write a report: {folder / 'report.json'}: {reason}; the previous report was left as it was",
        f"could not write a report: {folder / 'report.html'}: {reason}; the previous report was left as it was",
        f"OpenTelemetry: could not keep 201 spans and {points} metric points in {folder / 'spill.jsonl'} "
        f"({reason.lower()}); they are lost",
        f"OpenTelemetry: could not write the OTLP file {folder / 'otel.jsonl'} ({reason.lower()}); "
        "the previous file was left as it was",
    ], result.stdout.str()
    assert result.ret == pytest.ExitCode.INTERNAL_ERROR  # a report that could not be written: 3, as documented


def test_a_full_disk_under_the_export_alone_keeps_the_exit_status(
    pytester: pytest.Pytester, full: tuple[Path, str]
) -> None:
    folder, how = full
    result = run(pytester, folder, "otel.jsonl", "spill.jsonl")
    notes = check_untouched(folder, result)
    assert len(notes) == 2 and all(note.startswith("OpenTelemetry: could not ") for note in notes), notes
    assert result.ret == pytest.ExitCode.OK  # exporting never changes the exit status


def test_a_journal_on_a_full_disk_stops_with_one_note_and_the_session_keeps_every_run(
    pytester: pytest.Pytester, full: tuple[Path, str]
) -> None:
    folder, how = full
    pytester.makepyfile(bench_many="def bench_many():\n    pass\n")
    # Under RLIMIT_FSIZE no file of the session may pass the limit: the report is the tmpfs case's only.
    report_option = ["--prob-json=report.json"] if how == "tmpfs" else []
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "-q",
        "--prob-runs=200",
        f"--prob-journal={folder / 'journal.jsonl'}",
        *report_option,
        timeout=120,
    )
    assert result.ret == 0, result.stdout.str()
    reason = "No space left on device" if how == "tmpfs" else "File too large"
    notes = [line.strip() for line in result.outlines if "could not" in line]
    assert len(notes) == 1 and re.fullmatch(
        rf"could not write to the journal {re.escape(str(folder / 'journal.jsonl'))} \({reason}\); the runs after its "
        r"\d+ record\(s\) are not in it, and would run again on resume",
        notes[0],
    ), notes
    assert "Overall: 200/200 passed" in result.stdout.str()
    if report_option:
        report = json.loads((pytester.path / "report.json").read_text())
        assert report["totals"]["count"] == 200 and report["journal"]["error"] == reason
        assert report["journal"]["written_runs"] < 200
