"""The journal's file format, read and written directly (features.journal.journal_file): torn lines, refusals, a full disk."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path

import pytest

from pytest_probability.features.journal import journal_file as journal
from pytest_probability.features.journal import writer as journal_writer
from pytest_probability.model.case import CaseRef
from pytest_probability.model.run import RunRecord, Usage

HEAD = journal.header("suite", {"runs": 3, "shard": None}, {"method": "exact", "level": 0.95})
CASE = CaseRef(key="bench_x.py::bench_a::c", benchmark="a", case="c", runs=3)


def record(run: int, **extra: object) -> RunRecord:
    return RunRecord(case=CASE, run=run, nodeid=f"bench_x.py::bench_a::c[run{run}]", outcome="pass", **extra)  # type: ignore[arg-type]


def opened(path: Path, notes: list[str] | None = None) -> journal_writer.JournalWriter:
    writer, _ = journal_writer.start(path, HEAD, notes if notes is not None else [])
    assert writer is not None
    return writer


def test_records_are_written_one_line_each_with_their_case_once_and_read_back(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer = opened(path)
    writer.write(record(1, usage=(Usage(model="m", input_tokens=5, cost=0.5),)))
    writer.write(record(2))
    writer.write(record(3, stopped="budget"))  # not executed: not journaled
    writer.write_late("bench_x.py::bench_a::c[run1]", {"model": "late", "cost": 0.25}, 0.1)
    writer.close()
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    assert [next(iter(line)) for line in lines] == ["journal", "case", "record", "record", "late"]
    assert lines[0] == HEAD and writer.written == 2
    contents = journal.read(path)
    assert contents.header == HEAD and contents.torn == 0 and contents.length == path.stat().st_size
    assert contents.nodeids == {"bench_x.py::bench_a::c[run1]", "bench_x.py::bench_a::c[run2]"}
    cases = {key: CaseRef.from_dict(data) for key, data in contents.cases.items()}
    back = RunRecord.from_dict(contents.records[0], cases)
    assert back == record(1, usage=(Usage(model="m", input_tokens=5, cost=0.5),))
    assert contents.late == [
        {"nodeid": "bench_x.py::bench_a::c[run1]", "usage": {"model": "late", "cost": 0.25}, "extra_cost": 0.1}
    ]


def test_a_torn_last_line_is_dropped_and_cut_off_before_appending(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer = opened(path)
    writer.write(record(1))
    writer.close()
    whole = path.read_bytes()
    path.write_bytes(whole + b'{"record": {"case": {"key"')
    contents = journal.read(path)
    assert contents.length == len(whole) and contents.torn == 26 and len(contents.records) == 1
    writer = opened(path)
    assert path.read_bytes() == whole
    writer.write(record(2))
    writer.close()
    assert len(journal.read(path).records) == 2
    # Killed while the header itself was written: the file is started over.
    path.write_bytes(b'{"journal": "pytest-prob')
    writer = opened(path)
    writer.close()
    assert journal.read(path).header == HEAD


@pytest.mark.parametrize(
    ("text", "says"),
    [
        (b"hello\n", "line 1 is not JSON"),
        (b'{"journal": "something else"}\n', "is not a journal of pytest-probability"),
        (
            b'{"journal": "pytest-probability", "format": 99}\n',
            "is in journal format 99, and this version reads format 1",
        ),
        (b'HEAD\n{"record": {}, "case": {}}\n', "line 2 is no journal entry"),
        (b'HEAD\n{"verdict": {}}\n', "line 2 is an entry of unknown kind 'verdict'"),
        (b'HEAD\n{not json\n{"record": {}}\n', "line 2 is not JSON"),
    ],
)
def test_what_is_no_journal_is_refused_naming_the_line(tmp_path: Path, text: bytes, says: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(text.replace(b"HEAD", json.dumps(HEAD).encode()))
    with pytest.raises(journal.JournalError, match=says):
        journal_writer.start(path, HEAD, [])
    assert path.read_bytes() == text.replace(b"HEAD", json.dumps(HEAD).encode())  # left as it was


def test_other_settings_are_named_one_by_one() -> None:
    other = journal.header("nightly", {"runs": 5, "shard": "1/2"}, {"method": "exact", "level": 0.9})
    assert journal.differences(other, HEAD) == [
        "suite: 'nightly' in the journal, 'suite' now",
        "runs: 5 in the journal, 3 now",
        "shard: '1/2' in the journal, None now",
        "stats_config.level: 0.9 in the journal, 0.95 now",
    ]
    assert journal.differences(HEAD, dict(HEAD)) == []
    text = journal.refusal(Path("j.jsonl"), [f"k{i}: 1 in the journal, 2 now" for i in range(7)])
    assert "k4: 1 in the journal, 2 now; and 2 more)" in text


def test_where_a_case_sits_in_its_file_is_no_difference() -> None:
    before = CASE.to_dict()
    moved = {**before, "order": 7, "lineno": 40}
    assert journal.case_difference(before, moved) == []
    assert journal.case_difference(before, {**moved, "runs": 4, "marks": [["min_rate", 0.5]]}) == ["marks", "runs"]


def test_a_journal_another_process_holds_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT)
    fcntl.flock(fd, fcntl.LOCK_EX)
    try:
        with pytest.raises(journal.JournalError, match="is in use by another session"):
            journal_writer.start(path, HEAD, [])
    finally:
        os.close(fd)
    opened(path).close()  # free again


def test_a_full_disk_stops_the_journal_with_one_note_and_the_session_goes_on(tmp_path: Path) -> None:
    notes: list[str] = []
    fd = os.open("/dev/full", os.O_WRONLY)  # every write: ENOSPC
    writer = journal_writer.JournalWriter(tmp_path / "j.jsonl", fd, HEAD, journal.Contents(), notes)
    writer.write(record(1))
    writer.write(record(2))
    writer.close()
    assert writer.written == 0 and writer.failed == "No space left on device"
    assert notes == [
        f"could not write to the journal {tmp_path / 'j.jsonl'} (No space left on device); the runs "
        "after its 0 record(s) are not in it, and would run again on resume"
    ]


def test_the_fsync_runs_on_its_own_thread_and_closing_syncs_and_ends_it(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    writer = opened(path)
    for run in range(1, 4):
        writer.write(record(run))
    syncer = writer._syncer
    assert syncer is not None and syncer.is_alive() and syncer.daemon
    writer.close()
    assert not syncer.is_alive() and writer.failed is None
    assert len(journal.read(path).records) == 3
    opened(path).close()  # the lock went with the file


def test_read_stops_at_the_length_it_is_given(tmp_path: Path) -> None:
    """An xdist worker reads what its controller resumed from, not what the controller has appended since."""
    path = tmp_path / "j.jsonl"
    writer = opened(path)
    writer.write(record(1))
    length = path.stat().st_size
    writer.write(record(2))
    writer.close()
    assert journal.read(path, limit=length).nodeids == {"bench_x.py::bench_a::c[run1]"}
    assert journal.read(tmp_path / "none.jsonl").header is None
