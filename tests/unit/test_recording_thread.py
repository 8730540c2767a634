"""The recording's writer thread (orchestrator/recording/background.py): the disk is
written off the stepping thread, with a bounded queue, and its failures end the run
cleanly.

A named pipe stands in for a disk that stalls: nothing reads it until the test says
so, and a write into a full pipe blocks like a write to a disk that does not answer
(the recorder writes records as they are, so a pipe works as its file). What comes out
of the pipe is the recording, checked with the ``mcap`` package's reader."""

from __future__ import annotations

import functools
import io
import logging
import os
import threading
import time
import zlib
from pathlib import Path

import pytest
from mcap.reader import make_reader
from mcap.records import DataEnd
from mcap.stream_reader import StreamReader

from moonpool.components.sdk.errors import RecordingFailed
from moonpool.orchestrator.recording import Recorder, read_recording
from moonpool.orchestrator.recording import background, mcapfile

PIPE_BYTES = 64 * 1024  # Linux's default pipe capacity


class _Pipe:
    """A named pipe at ``path`` whose reading end is open but not read until
    :meth:`drain` (then read to its end on a thread of its own)."""

    def __init__(self, path: Path) -> None:
        os.mkfifo(path)
        self.path = path
        self._fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        self.data = bytearray()
        self._reader: threading.Thread | None = None

    def drain(self) -> None:
        os.set_blocking(self._fd, True)

        def read() -> None:
            while chunk := os.read(self._fd, 1 << 16):
                self.data += chunk

        self._reader = threading.Thread(target=read, daemon=True)
        self._reader.start()

    def close(self) -> bytes:
        if self._reader is not None:
            self._reader.join(30)
        os.close(self._fd)
        return bytes(self.data)


def _random_payloads(count: int, size: int) -> list[bytes]:
    """Payloads zstd cannot shrink (so the bytes written are about the bytes given)."""
    return [os.urandom(size) for _ in range(count)]


def _check_file(data: bytes, payloads: list[bytes], tmp_path: Path) -> None:
    """A complete recording holding ``payloads`` in order, with valid checksums."""
    path = tmp_path / "from-pipe.mcap"
    path.write_bytes(data)
    assert [m.payload for m in read_recording(path)] == payloads
    with open(path, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        stats = reader.get_summary().statistics
        assert stats.message_count == len(payloads)
        assert [m.data for _, _, m in reader.iter_messages(log_time_order=False)] == payloads
    records = list(StreamReader(io.BytesIO(data), skip_magic=False).records)
    end = next(r for r in records if isinstance(r, DataEnd))
    data_end_at = data.rindex(b"\x0f" + (4).to_bytes(8, "little") +
                              end.data_section_crc.to_bytes(4, "little"))
    assert end.data_section_crc == zlib.crc32(data[:data_end_at])


def test_a_stalled_disk_does_not_stall_the_stepping_thread(tmp_path: Path) -> None:
    """Five times the pipe's capacity is written while nothing reads the pipe: the
    writes return (the writer thread holds what the pipe cannot take). Written on the
    stepping thread, the first write into the full pipe would block the run."""
    pipe = _Pipe(tmp_path / "rec.mcap")
    payloads = _random_payloads(5 * PIPE_BYTES // 1000, 1000)
    rec = Recorder(pipe.path, chunk_size=16 * 1024, queue_bytes=4 * 1024 * 1024,
                   queue_seconds=600.0)
    stalled = threading.Event()
    guard = threading.Timer(60.0, lambda: (stalled.set(), pipe.drain()))  # never hang
    guard.start()
    try:
        ch = rec.add_topic("/a/b", "moonpool.v1.Pressure")
        for i, payload in enumerate(payloads):
            rec.write(ch, i * 1000, payload)
        returned_while_stalled = not stalled.is_set()
    finally:
        guard.cancel()
        if not stalled.is_set():
            pipe.drain()
        rec.close()
    assert returned_while_stalled, "a write blocked on the stalled disk"
    assert rec.failure is None
    _check_file(pipe.close(), payloads, tmp_path)


@pytest.mark.parametrize("limit, lag, pause", [(64 * 1024, 600.0, 0.0),
                                               (64 * 1024 * 1024, 0.05, 0.001)],
                         ids=["bytes", "seconds"])
def test_a_slow_disk_holds_the_stepping_thread_within_the_queue_bound(
        tmp_path: Path, limit: int, lag: float, pause: float) -> None:
    """A queue of 64 KiB (or of 50 ms) over a stalled disk: the stepping thread waits
    once the queue holds 64 KiB (bounded memory), or a chunk handed over 50 ms ago
    (bounded loss in a crash), and goes on when the disk takes data again; the file
    holds every message."""
    pipe = _Pipe(tmp_path / "rec.mcap")
    payloads = _random_payloads(1000, 1000)  # 1 MB: far beyond pipe and queue
    chunk = 16 * 1024
    rec = Recorder(pipe.path, chunk_size=chunk, queue_bytes=limit, queue_seconds=lag)
    ch = rec.add_topic("/a/b", "moonpool.v1.Pressure")
    done = threading.Event()

    def step() -> None:
        for i, payload in enumerate(payloads):
            rec.write(ch, i * 1000, payload)
            time.sleep(pause)
        done.set()

    stepping = threading.Thread(target=step, daemon=True)
    stepping.start()
    try:
        for _ in range(600):  # until the stepping thread waits for room (60 s at most)
            if rec.queue.waits:
                break
            done.wait(0.1)
        assert rec.queue.waits >= 1 and not done.is_set()
        assert rec.queue.most <= limit
    finally:
        pipe.drain()
        stepping.join(60)
    assert done.is_set()
    rec.close()
    assert rec.queue.most <= limit
    _check_file(pipe.close(), payloads, tmp_path)


class _FailingFile:
    """A file that takes ``room`` bytes, then fails as a full disk does."""

    def __init__(self, raw: io.RawIOBase, room: int) -> None:
        self.raw, self.room = raw, room
        self.writers: set[int] = set()

    def write(self, data: memoryview) -> int:
        self.writers.add(threading.get_ident())
        if len(data) > self.room:
            raise OSError(28, "No space left on device")
        self.room -= len(data)
        return self.raw.write(data)

    def __getattr__(self, name: str):
        return getattr(self.raw, name)


def test_a_writer_thread_failure_surfaces_at_the_next_hand_over(tmp_path: Path) -> None:
    path = tmp_path / "rec.mcap"
    rec = Recorder(path, chunk_size=4096)
    disk = rec._file.file._raw = _FailingFile(rec._file.file._raw, 20_000)
    ch = rec.add_topic("/a/b", "moonpool.v1.Pressure")
    payloads = _random_payloads(200, 500)
    written = 0
    with pytest.raises(RecordingFailed, match="No space left on device") as raised:
        for i, payload in enumerate(payloads):
            rec.write(ch, i * 1000, payload)
            written += 1
        rec.flush()
    assert rec.failure is raised.value
    assert disk.writers == {rec.queue._thread.ident}  # never the stepping thread
    with pytest.raises(RecordingFailed):  # and every hand-over after it
        rec.flush()
    rec.close()  # never raises: the file ends at its last whole record
    rec.close()
    got = [m.payload for m in read_recording(path)]
    assert 0 < len(got) < written and got == payloads[: len(got)]


def test_an_unexpected_error_in_the_writer_thread_fails_the_run_cleanly(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """Not only OSError: any error of the writer thread ends the run as failed, with
    the reason and without a traceback, and what was written stays readable."""
    from conftest import RIGS

    from moonpool.orchestrator.rigfile import load_and_check
    from moonpool.orchestrator.run import run_rig

    real = mcapfile.McapFile.write_chunk
    chunks = []

    def write_chunk(self, records, indexes):
        if len(chunks) == 2:
            raise MemoryError("no memory for the third chunk")
        chunks.append(len(records))
        return real(self, records, indexes)

    monkeypatch.setattr(mcapfile.McapFile, "write_chunk", write_chunk)
    # Small chunks so that the third one comes early in the run.
    monkeypatch.setattr("moonpool.orchestrator.run.Recorder",
                        functools.partial(Recorder, chunk_size=8192))
    rig = load_and_check(RIGS / "quickstart.toml", ["run.plots=false"], until_s=20.0)
    with caplog.at_level(logging.INFO):
        result = run_rig(rig, tmp_path / "out")
    summary = result.summary
    assert summary["status"] == "failed", summary
    assert summary["error"].startswith(
        "the recording's writer thread failed: MemoryError: no memory for the third chunk")
    assert summary["recording_complete"] is False
    assert not any(r.exc_info for r in caplog.records if r.levelno >= logging.INFO)
    assert summary["sim_time_s"] < 20.0  # it stopped the run
    messages = list(read_recording(tmp_path / "out" / "recording.mcap"))
    assert len(messages) > 0


def test_the_writer_thread_follows_the_stepping_threads_real_time_priority(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """At SCHED_FIFO N (a real-time run) the writer thread runs at N - 1, so that it never
    waits behind other programs while it holds the GIL; back to normal after."""
    from moonpool.components.sdk.scheduling import fifo_allowed

    if not fifo_allowed(10):
        pytest.skip("SCHED_FIFO is not allowed here (needs root or CAP_SYS_NICE, as in CI)")
    monkeypatch.setattr(background, "FOLLOW_S", 0.0)  # look before every job
    rec = Recorder(tmp_path / "rec.mcap", chunk_size=64)
    ch = rec.add_topic("/a/b", "moonpool.v1.Pressure")
    seen: list[tuple[int, int]] = []
    real = mcapfile.McapFile.write_chunk

    def write_chunk(self, records, indexes):
        seen.append((os.sched_getscheduler(0), os.sched_getparam(0).sched_priority))
        return real(self, records, indexes)

    before = (os.sched_getscheduler(0), os.sched_getparam(0).sched_priority)
    try:
        mcapfile.McapFile.write_chunk = write_chunk
        rec.write(ch, 0, b"x" * 100)
        rec.flush()
        os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))
        rec.write(ch, 1, b"x" * 100)
        rec.flush()
        os.sched_setscheduler(0, before[0], os.sched_param(before[1]))
        rec.write(ch, 2, b"x" * 100)
        rec.flush()
    finally:
        os.sched_setscheduler(0, before[0], os.sched_param(before[1]))
        mcapfile.McapFile.write_chunk = real
        rec.close()
    assert seen == [(os.SCHED_OTHER, 0), (os.SCHED_FIFO, 9), (os.SCHED_OTHER, 0)]



def test_the_thread_starts_jobs_only_in_the_slack_and_is_never_held_by_a_waiter():
    """In real time the pacer clears ``slack`` while a tick works and sets it while it
    sleeps: a job handed over meanwhile waits for the slack. Whoever waits for the
    thread (drain, stop, a hand-over under backpressure) lets it run."""
    done: list[int] = []
    bg = background.Background(limit=1 << 20, lag=60.0)
    try:
        bg.slack.clear()  # a tick is working
        bg.put(done.append, (1,), 10)
        time.sleep(0.1)
        assert done == []  # held until the slack
        bg.slack.set()  # the pacer sleeps
        deadline = time.monotonic() + 10
        while not done and time.monotonic() < deadline:
            time.sleep(0.005)
        assert done == [1]
        bg.slack.clear()
        bg.put(done.append, (2,), 10)
        bg.drain()  # waiting for it sets the slack: no deadlock
        assert done == [1, 2] and bg.slack.is_set()
        # Backpressure: a hand-over over the byte limit waits for the thread, and lets
        # it run rather than waiting forever.
        bg.slack.clear()
        bg.put(done.append, (3,), 1 << 20)
        bg.put(done.append, (4,), 1 << 20)  # the first one must be done first
        bg.drain()
        assert done == [1, 2, 3, 4] and bg.waits >= 1
    finally:
        bg.stop()
