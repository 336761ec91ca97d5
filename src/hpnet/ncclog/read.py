"""The edge of the log parser: files, directories, pipes and standard input.

Large files are cut into byte ranges at line boundaries and scanned in worker
processes (:func:`hpnet.ncclog.scan.scan_block` needs nothing from the ranges
before it); results come back in order and are folded by one
:class:`hpnet.ncclog.facts.LogFolder`, so the answer is the same with one worker or
sixteen. Standard input, a FIFO (``<(zcat job.log.gz)``) and ``.gz`` files are read
once, front to back (gzip found by its magic bytes); a gzip cut short is read up to
where it breaks. A FIFO is opened without waiting for its writer; a stream silent for
a while is said to be waited for, and ``--idle-timeout`` bounds the wait. A line
longer than :data:`MAX_LINE_BYTES` is read up to that length and counted once, on
every path. Memory stays at a few blocks per worker, whatever the file's size.
"""

from __future__ import annotations

import contextlib
import dataclasses
import gc
import io
import os
import stat
import sys
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import BinaryIO

from hpnet.errors import InputError
from hpnet.ncclog.facts import BLOCK_BYTES, LogFolder
from hpnet.ncclog.lines import Classifier
from hpnet.ncclog.model import NcclLog
from hpnet.ncclog.scan import MAX_LINE_BYTES, scan_block

__all__ = ["MAX_LINE_BYTES", "LogInput", "collect_inputs", "read_logs"]

#: the smallest range a worker scans at a time
RANGE_BYTES = 32 << 20
#: ranges per worker: enough to even out their speeds, few enough that the per-range
#: cost (each range meets every process of the job anew) stays small; on 1 GB with two
#: workers, 2 a worker was 9% faster than 4 and 2% faster than 1 (benchmarks/README.md)
RANGES_PER_WORKER = 2
#: below this much input, worker processes cost more than they save
PARALLEL_MIN_BYTES = 96 << 20
#: a stream silent this long is said to be waited for (standard error, once)
WAIT_NOTE_SECONDS = 1.0
#: files in a directory beyond this are an input error (a wrong directory)
MAX_FILES = 100_000
SNIFF_BYTES = 8192
GZIP_MAGIC = b"\x1f\x8b"
#: bytes of text: printable ASCII, the white space and escapes a terminal log holds, and
#: everything from 0x80 (UTF-8 and other encodings); the rest are control bytes
_TEXT_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n\r\f\v\b\x1b\x7f" + bytes(range(0x80, 0x100))

Progress = Callable[[int, int], None]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LogInput:
    """One input: a regular file (``size_bytes`` known) or a stream."""

    path: str  # "-" for standard input
    size_bytes: int
    gzip: bool = False
    #: read once, front to back: standard input, or a FIFO (``<(zcat job.log.gz)``);
    #: gzip is recognised by its magic bytes
    stream: bool = False
    #: NUL bytes at the start of the file, not read (a log rotated with copytruncate)
    skip_bytes: int = 0


def collect_inputs(paths: Sequence[str]) -> tuple[list[LogInput], list[str]]:
    """Files to read, with notes about what was skipped; bad paths raise InputError."""
    inputs: list[LogInput] = []
    notes: list[str] = []
    for path in paths:
        if path == "-":
            inputs.append(LogInput(path="-", size_bytes=0, stream=True))
            continue
        try:
            mode = os.stat(path).st_mode
        except OSError as exc:
            raise InputError(
                f"cannot read the log ({exc.strerror})",
                code="log-unreadable",
                where=path,
                fix="pass NCCL debug logs: files, a directory of per-rank logs, or - for stdin",
            ) from None
        if stat.S_ISDIR(mode):
            walk_notes: list[str] = []
            found = _walk(path, walk_notes)
            notes += walk_notes
            if not found:
                raise InputError(
                    "the directory holds no readable files"
                    + (f" ({walk_notes[0]})" if walk_notes else ""),
                    code="log-dir-empty",
                    where=path,
                    fix="point at the directory the per-rank logs were written to",
                )
            for file in found:
                _add_file(file, inputs, notes, in_directory=True)
        elif stat.S_ISREG(mode):
            _add_file(path, inputs, notes, in_directory=False)
        elif stat.S_ISFIFO(mode):  # <(zcat job.log.gz), a named pipe: read as it comes
            inputs.append(LogInput(path=path, size_bytes=0, stream=True))
        else:
            raise InputError(
                "is not a regular file, a pipe or a directory",
                code="log-not-a-file",
                where=path,
                fix="pass a log file, a directory, or - and pipe the log in",
            )
    return inputs, notes


def _walk(directory: str, notes: list[str]) -> list[str]:
    """The files under ``directory``, in order; what is not followed goes to ``notes``."""

    def unreadable(exc: OSError) -> None:
        notes.append(f"{exc.filename}: skipped, cannot be read ({exc.strerror})")

    found: list[str] = []
    for root, dirs, files in os.walk(directory, onerror=unreadable):
        kept = []
        for name in sorted(dirs):
            if name.startswith("."):
                continue
            if os.path.islink(os.path.join(root, name)):  # a loop, or another job's logs
                notes.append(f"{os.path.join(root, name)}: skipped, a link to a directory")
                continue
            kept.append(name)
        dirs[:] = kept
        for name in sorted(files):
            if not name.startswith("."):
                found.append(os.path.join(root, name))
        if len(found) > MAX_FILES:
            raise InputError(
                f"holds more than {MAX_FILES} files",
                code="log-dir-too-large",
                where=directory,
                fix="point at the directory of one job's logs",
            )
    return found


def _add_file(path: str, inputs: list[LogInput], notes: list[str], *, in_directory: bool) -> None:
    try:
        if in_directory and not stat.S_ISREG(os.stat(path).st_mode):
            # opening a FIFO would wait for a writer forever
            notes.append(f"{path}: skipped, not a regular file (a FIFO, socket or device)")
            return
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            head = handle.read(SNIFF_BYTES)
            skipped = _leading_nuls(handle, head) if head[:1] == b"\0" else 0
            if skipped:
                handle.seek(skipped)
                head = handle.read(SNIFF_BYTES)
    except OSError as exc:
        if in_directory:
            notes.append(f"{path}: skipped, cannot be read ({exc.strerror})")
            return
        raise InputError(
            f"cannot read the log ({exc.strerror})",
            code="log-unreadable",
            where=path,
            fix="check the path and its permissions",
        ) from None
    gzip = head[:2] == GZIP_MAGIC
    if skipped and not head:
        notes.append(f"{path}: skipped, nothing but NUL bytes")
        return
    if not gzip and _binary(head):
        notes.append(f"{path}: skipped, binary data (not a text log)")
        return
    if skipped:
        notes.append(
            f"{path}: {skipped} NUL bytes at its start skipped (a log rotated with copytruncate)"
        )
    inputs.append(LogInput(path=path, size_bytes=size, gzip=gzip, skip_bytes=skipped))


def _leading_nuls(handle: BinaryIO, head: bytes) -> int:
    """How many NUL bytes the file starts with (holes skipped with SEEK_DATA)."""
    skipped = len(head) - len(head.lstrip(b"\0"))
    if skipped < len(head):
        return skipped
    # a sparse hole (copytruncate of a file still written to) is not read through
    with contextlib.suppress(AttributeError, OSError):
        skipped = max(skipped, os.lseek(handle.fileno(), 0, os.SEEK_DATA))
    handle.seek(skipped)
    while True:
        chunk = handle.read(1 << 20)
        rest = chunk.lstrip(b"\0")
        skipped += len(chunk) - len(rest)
        if rest or not chunk:
            return skipped


def _binary(sample: bytes) -> bool:
    """Not a text log: more than 1 NUL in 100 bytes, or a third of them control bytes.

    One stray NUL (a crashed writer, a torn page) leaves a log a log.
    """
    if not sample:
        return False
    control = len(sample.translate(None, _TEXT_BYTES))
    return sample.count(0) * 100 > len(sample) or control * 3 > len(sample)


class _Prefixed(io.RawIOBase):
    """A stream with the bytes already read from it put back in front (for gzip)."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            data, self._head = self._head[: len(buffer)], self._head[len(buffer) :]
        else:
            data = self._raw.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class _StreamReader(io.RawIOBase):
    """Standard input or a FIFO, read as data comes, never waiting unseen.

    A FIFO is opened with ``O_NONBLOCK`` (a plain open waits for a writer, and would
    wait forever for one that never comes); every read first polls. When nothing has
    come after :data:`WAIT_NOTE_SECONDS`, ``waiting`` is told once (the CLI says on
    standard error what hpnet waits for and how to stop it); when nothing comes for
    ``idle_timeout_seconds``, reading ends there (:class:`_IdleTimeout`).
    """

    def __init__(
        self,
        source: LogInput,
        name: str,
        *,
        idle_timeout_seconds: float | None,
        waiting: Callable[[str], None] | None,
    ) -> None:
        super().__init__()
        self.name = name
        self.idle_timeout_seconds = idle_timeout_seconds
        self.waiting = waiting
        self.received = 0
        self.noted = False  # the wait was said: once a stream, not at every pause
        self.own = source.path != "-"
        if self.own:
            try:
                self.fd = os.open(source.path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError as exc:
                raise InputError(
                    f"cannot read the log ({exc.strerror})",
                    code="log-unreadable",
                    where=name,
                    fix="check the path and its permissions",
                ) from None
        else:
            # standard input stays blocking: its file description is the shell's too
            self.fd = sys.stdin.fileno()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while True:
            self._wait()
            try:
                data = os.read(self.fd, len(buffer))
                break
            except BlockingIOError:  # woken with nothing to read: wait again
                continue
        buffer[: len(data)] = data
        self.received += len(data)
        return len(data)

    def _wait(self) -> None:
        """Until the stream can be read (data, or its end)."""
        import select  # noqa: PLC0415 - streams only

        poller = select.poll()
        poller.register(self.fd, select.POLLIN | select.POLLPRI)
        waited = 0.0
        while True:
            step = WAIT_NOTE_SECONDS if not self.noted else 3600.0
            if self.idle_timeout_seconds is not None:
                step = min(step, max(self.idle_timeout_seconds - waited, 0.0))
            started = time.monotonic()
            if poller.poll(int(step * 1000)):
                return
            waited += time.monotonic() - started
            if self.idle_timeout_seconds is not None and waited >= self.idle_timeout_seconds:
                raise _IdleTimeout(self.idle_timeout_seconds)
            if not self.noted and self.waiting is not None:
                self.noted = True
                if os.isatty(self.fd):
                    self.waiting(
                        f"reading {self.name} from the terminal: paste the log, then press Ctrl-D"
                    )
                else:
                    what = "nothing read yet" if not self.received else "nothing new"
                    self.waiting(
                        f"waiting for {self.name} ({what}: its writer has not written or "
                        "closed it); Ctrl-C stops, --idle-timeout S gives up after S seconds"
                    )

    def close(self) -> None:
        if self.own and not self.closed:
            os.close(self.fd)
        super().close()


class _IdleTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"nothing arrived for {seconds:g} s")
        self.seconds = seconds


def _stream_chunks(
    source: LogInput,
    notes: list[str],
    name: str,
    *,
    idle_timeout_seconds: float | None = None,
    waiting: Callable[[str], None] | None = None,
) -> Iterator[bytes]:
    """The bytes of a stream or a gzip file, decompressed where they are gzip.

    A truncated or corrupt gzip ends the input where it breaks, with a note: what was
    read before is analysed. A stream that sends nothing for ``idle_timeout_seconds``
    ends there too (with a note), or is an input error if it sent nothing at all.
    """
    reader: _StreamReader | None = None
    raw: BinaryIO
    if source.path == "-" and not _has_fd(sys.stdin):
        raw = sys.stdin.buffer  # a stand-in without a descriptor (an embedding program's)
    elif source.stream:
        reader = _StreamReader(
            source, name, idle_timeout_seconds=idle_timeout_seconds, waiting=waiting
        )
        raw = io.BufferedReader(reader)
    else:
        raw = open(source.path, "rb")  # noqa: SIM115 - closed below
    try:
        try:
            head = raw.read(2)
        except _IdleTimeout as exc:
            raise _idle_error(name, exc) from None
        handle: BinaryIO = raw
        if head == GZIP_MAGIC:
            import gzip  # noqa: PLC0415 - only for compressed logs

            handle = gzip.GzipFile(fileobj=_Prefixed(head, raw), mode="rb")  # type: ignore[assignment]
        elif head:
            yield head
        # read1: what one read gives (gzip: one input buffer decompressed), so that a
        # break loses nothing before it; gathered into blocks of BLOCK_BYTES
        read_some: Callable[[int], bytes] = getattr(handle, "read1", handle.read)
        while True:
            pieces: list[bytes] = []
            size = 0
            try:
                while size < BLOCK_BYTES:
                    piece = read_some(BLOCK_BYTES - size)
                    if not piece:
                        break
                    pieces.append(piece)
                    size += len(piece)
            except _IdleTimeout as exc:
                if reader is not None and not reader.received:
                    raise _idle_error(name, exc) from None
                notes.append(f"{name}: {exc}: analysed up to there (--idle-timeout)")
                if pieces:
                    yield b"".join(pieces)
                return
            except (EOFError, OSError, zlib.error) as exc:
                # EOFError: cut short; BadGzipFile (an OSError): a bad header or CRC;
                # zlib.error: corrupt deflate data
                what = "truncated or corrupt gzip" if head == GZIP_MAGIC else "read error"
                notes.append(f"{name}: {what} ({exc}): analysed up to where it breaks")
                if pieces:
                    yield b"".join(pieces)
                return
            if not pieces:
                return
            yield b"".join(pieces)
    finally:
        if raw is not sys.stdin.buffer:
            raw.close()


def _has_fd(stream: object) -> bool:
    try:
        stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return False
    return True


def _idle_error(name: str, exc: _IdleTimeout) -> InputError:
    return InputError(
        f"{exc}: no log arrived",
        code="log-timeout",
        where=name,
        fix="start the program that writes the pipe first, or raise --idle-timeout",
    )


def _range_chunks(
    handle: BinaryIO, start: int, end: int, *, line_start: bool = False
) -> Iterator[bytes]:
    """The bytes of the lines that begin in ``[start, end)`` of a file: from the first
    line start at or after ``start`` (``start`` itself with ``line_start``) to the end
    of the line under ``end - 1``."""
    if start > 0 and not line_start:
        handle.seek(start - 1)
        if handle.read(1) != b"\n":  # the line under start belongs to the range before
            while True:
                data = handle.read(BLOCK_BYTES)
                if not data:
                    return
                newline = data.find(b"\n")
                if newline >= 0:
                    start = handle.tell() - len(data) + newline + 1
                    break
    if start >= end:
        return
    handle.seek(start)
    position = start
    data = b""
    while position < end:
        data = handle.read(min(BLOCK_BYTES, end - position))
        if not data:
            return
        position += len(data)
        yield data
    while not data.endswith(b"\n"):  # the last line goes on past the range
        data = handle.read(BLOCK_BYTES)
        if not data:
            return
        newline = data.find(b"\n")
        if newline >= 0:
            data = data[: newline + 1]
        yield data


def _whole_lines(chunks: Iterable[bytes]) -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines, each with the bytes of input it stands for.

    A line longer than :data:`MAX_LINE_BYTES` is passed on as its first
    ``MAX_LINE_BYTES + 1`` bytes (:func:`scan_block` cuts it and counts it) and the rest
    of it is dropped: memory stays bounded and it still counts as one line.
    """
    rest = b""
    consumed = 0  # bytes read and not yet passed on
    skipping = False  # inside the tail of a cut line
    for chunk in chunks:
        consumed += len(chunk)
        data = chunk
        if skipping:
            newline = data.find(b"\n")
            if newline < 0:
                continue
            data, skipping = data[newline + 1 :], False
        if rest:
            data, rest = rest + data, b""
        cut = data.rfind(b"\n")
        if cut >= 0:
            rest = data[cut + 1 :]
            yield data[: cut + 1], consumed - len(rest)
            consumed = len(rest)
        else:
            rest = data
        if len(rest) > MAX_LINE_BYTES:
            yield rest[: MAX_LINE_BYTES + 1] + b"\n", consumed
            rest, consumed, skipping = b"", 0, True
    if rest or consumed:
        yield rest, consumed


def _scan_lines(
    blocks: Iterable[tuple[bytes, int]],
    folder: LogFolder,
    name: str,
    progress: Callable[[int], None],
) -> None:
    classifier = Classifier()
    line = 1
    with _no_cycle_collection():
        for block, num_bytes in blocks:
            result = scan_block(block, source=name, start_line=line, classifier=classifier)
            result.num_bytes = num_bytes
            line += result.num_lines
            folder.add(result)
            progress(num_bytes)


@contextlib.contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Scanning makes millions of short-lived objects and no reference cycles: the
    cycle collector's passes over the growing per-process records cost a sixth of the
    time and free nothing (reference counting frees the rest)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _scan_range(path: str, start: int, end: int, name: str, line_start: bool) -> LogFolder:
    """Scan and fold the lines that begin in ``[start, end)`` of ``path`` (a worker's job).

    Line numbers in the result count from the range's first line; the caller adds the
    lines of the ranges before it when it merges.
    """
    folder = LogFolder()
    with open(path, "rb") as handle:
        chunks = _range_chunks(handle, start, end, line_start=line_start)
        _scan_lines(_whole_lines(chunks), folder, name, lambda _: None)
    return folder


def _ranges(size: int, start: int = 0, *, workers: int = 1) -> list[tuple[int, int]]:
    """Byte ranges of a file from ``start`` (its first line's start) to its end: one
    without workers, else :data:`RANGES_PER_WORKER` per worker of at least
    :data:`RANGE_BYTES` each."""
    if workers <= 1:
        return [(start, size)]
    step = max(RANGE_BYTES, -(-(size - start) // (RANGES_PER_WORKER * workers)))
    return [(s, min(size, s + step)) for s in range(start, size, step)] or [(start, start)]


def read_logs(
    inputs: Sequence[LogInput],
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    notes: Sequence[str] = (),
    idle_timeout_seconds: float | None = None,
    waiting: Callable[[str], None] | None = None,
) -> NcclLog:
    """Parse every input into one :class:`NcclLog` (``jobs``: worker processes).

    A stream (standard input, a FIFO) that sends nothing for ``idle_timeout_seconds``
    is read up to there; ``waiting`` hears, once per stream, that hpnet waits for one
    (:class:`_StreamReader`).
    """
    folder = LogFolder()
    for note in notes:
        folder.note(note)
    total = sum(i.size_bytes - i.skip_bytes for i in inputs)
    done = 0

    def advance(num_bytes: int) -> None:
        nonlocal done
        done += num_bytes
        if progress:
            progress(done, total)

    # a pool forks all its workers up front: never more than 4 per CPU nor than ranges
    # to give them (--jobs 100000 forked thousands of processes and exhausted memory)
    files = [i for i in inputs if not i.stream and not i.gzip]
    chunks = sum(-(-(i.size_bytes - i.skip_bytes) // RANGE_BYTES) for i in files)
    cpus = _cpu_count()
    workers = min(jobs if jobs is not None else cpus, 4 * cpus, max(chunks, 1))
    parallel = workers > 1 and total >= PARALLEL_MIN_BYTES
    pool = _pool(workers) if parallel else None
    try:
        for source in inputs:
            name = "<stdin>" if source.path == "-" else source.path
            folder.add_source(name)
            if source.stream or source.gzip:
                stream_notes: list[str] = []
                chunks_read = _stream_chunks(
                    source,
                    stream_notes,
                    name,
                    idle_timeout_seconds=idle_timeout_seconds,
                    waiting=waiting,
                )
                _scan_lines(_whole_lines(chunks_read), folder, name, advance)
                for note in stream_notes:
                    folder.note(note)
                continue
            ranges = _ranges(source.size_bytes, source.skip_bytes, workers=workers if pool else 1)
            first = [i == 0 for i in range(len(ranges))]  # starts at the first line
            if pool is None:
                results: Iterator[LogFolder] = (
                    _scan_range(source.path, s, e, name, f)
                    for (s, e), f in zip(ranges, first, strict=True)
                )
            else:
                results = pool.map(
                    _scan_range,
                    [source.path] * len(ranges),
                    [s for s, _ in ranges],
                    [e for _, e in ranges],
                    [name] * len(ranges),
                    first,
                )
            lines_before = 0
            for (start, end), scanned in zip(ranges, results, strict=True):
                folder.merge(scanned, line_offset=lines_before)
                lines_before += scanned.num_lines
                advance(end - start)
    finally:
        if pool is not None:
            pool.shutdown(cancel_futures=True)
    return folder.result()


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _pool(workers: int):  # type: ignore[no-untyped-def]
    import concurrent.futures  # noqa: PLC0415 - only for large inputs
    import multiprocessing  # noqa: PLC0415

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers, mp_context=multiprocessing.get_context(method)
    )


class ProgressPrinter:
    """``hpnet verify: 1.2 of 5.0 GB (24%)`` on standard error, at most once a second."""

    def __init__(self, prefix: str, *, min_total: int = 256 << 20) -> None:
        self.prefix = prefix
        self.min_total = min_total
        self.last = 0.0
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        if total < self.min_total:
            return
        now = time.monotonic()
        if now - self.last < 1.0 and done < total:
            return
        self.last = now
        self.shown = True
        percent = 100 * done // max(total, 1)
        print(
            f"{self.prefix}: {done / 1e9:.1f} of {total / 1e9:.1f} GB ({percent}%)",
            file=sys.stderr,
            flush=True,
        )
