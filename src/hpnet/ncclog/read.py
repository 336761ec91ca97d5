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
import functools
import gc
import io
import os
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, BinaryIO

from hpnet.inputfile import whole_lines
from hpnet.ncclog.crashes import with_crash_sites
from hpnet.ncclog.facts import BLOCK_BYTES, LogFolder
from hpnet.ncclog.inputs import GZIP_MAGIC, LogInput, collect_inputs
from hpnet.ncclog.lines import Classifier
from hpnet.ncclog.model import NcclLog
from hpnet.ncclog.pool import end_workers, make_pool, stop_signals
from hpnet.ncclog.scan import MAX_LINE_BYTES, scan_block
from hpnet.ncclog.shards import RangeParts, ShardedMerge, split
from hpnet.ncclog.streams import IdleTimeout, Prefixed, StreamReader, has_fd, idle_error

if TYPE_CHECKING:  # imported where a pool is made (_pool)
    from concurrent.futures import Executor

__all__ = ["MAX_LINE_BYTES", "LogInput", "collect_inputs", "read_logs"]

#: the smallest range a worker scans at a time
RANGE_BYTES = 32 << 20
#: ranges per worker: each range meets every process of the job anew (its first
#: blocks are read whole) and its folder is unpickled and merged in the main process,
#: one after another. Once the scanner skipped dead lines, that cost outweighed evening
#: out the workers' speeds: on 0.2 GB with two workers, 1 a worker took 8.5 s and 2
#: took 9.1-9.9 s (issue 28; 2 had been 2% faster than 1 before, benchmarks/README.md)
RANGES_PER_WORKER = 1
#: below this much input, worker processes cost more than they save
PARALLEL_MIN_BYTES = 96 << 20

Progress = Callable[[int, int], None]


def _open_input(
    source: LogInput,
    name: str,
    *,
    idle_timeout_seconds: float | None,
    waiting: Callable[[str], None] | None,
) -> tuple[BinaryIO, StreamReader | None]:
    """The input's bytes as a binary file (the caller closes it unless it is standard
    input's), and the stream reader behind it when it is a stream."""
    if source.path == "-" and not has_fd(sys.stdin):
        # a stand-in without a descriptor (an embedding program's)
        return sys.stdin.buffer, None
    if source.stream:
        reader = StreamReader(
            source, name, idle_timeout_seconds=idle_timeout_seconds, waiting=waiting
        )
        return io.BufferedReader(reader), reader
    return open(source.path, "rb"), None  # the caller closes it


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
    raw, reader = _open_input(
        source, name, idle_timeout_seconds=idle_timeout_seconds, waiting=waiting
    )
    try:
        try:
            head = raw.read(2)
        except IdleTimeout as exc:
            raise idle_error(name, exc) from None
        handle: BinaryIO = raw
        if head == GZIP_MAGIC:
            import gzip  # noqa: PLC0415 - only for compressed logs

            handle = gzip.GzipFile(fileobj=Prefixed(head, raw), mode="rb")  # type: ignore[assignment]
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
            except IdleTimeout as exc:
                if reader is not None and not reader.received:
                    raise idle_error(name, exc) from None
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


#: a line that the next line continues: PyTorch prints NCCL's last error on the line
#: after it (scan.py reads the two together), so no range boundary falls between them
_CONTINUED = b"Last error:"


def _boundary(handle: BinaryIO, position: int) -> int:
    """The first line start at or after ``position`` (the end of the file if none) that
    does not continue the line before it: where a range may start or end, the same
    wherever the ranges were cut."""
    if position <= 0:
        return 0
    handle.seek(position - 1)
    if handle.read(1) != b"\n":  # inside a line: its end
        while True:
            data = handle.read(BLOCK_BYTES)
            if not data:
                return handle.tell()
            newline = data.find(b"\n")
            if newline >= 0:
                position = handle.tell() - len(data) + newline + 1
                break
    while True:
        before = max(0, position - 256)
        handle.seek(before)
        previous = handle.read(position - before)
        if not previous[:-1].rstrip(b" \t\r").endswith(_CONTINUED):
            return position
        line = handle.readline()  # the continuing line goes with the one before
        if not line:
            return position
        position += len(line)


def _range_chunks(
    handle: BinaryIO, start: int, end: int, *, line_start: bool = False
) -> Iterator[bytes]:
    """The bytes of the lines between the range boundaries (:func:`_boundary`) at
    ``start`` (``start`` itself with ``line_start``) and at ``end``."""
    if not line_start:
        start = _boundary(handle, start)
    end = _boundary(handle, end)
    handle.seek(start)
    position = start
    while position < end:
        data = handle.read(min(BLOCK_BYTES, end - position))
        if not data:
            return
        position += len(data)
        yield data


def _scan_lines(
    blocks: Iterable[tuple[bytes, int]],
    folder: LogFolder,
    name: str,
    progress: Callable[[int], None],
) -> None:
    classifier = Classifier()
    line = 1
    with no_cycle_collection():
        for block, num_bytes in blocks:
            result = scan_block(block, source=name, start_line=line, classifier=classifier)
            result.num_bytes = num_bytes
            line += result.num_lines
            folder.add(result)
            progress(num_bytes)
    folder.take_guesses(classifier)


@contextlib.contextmanager
def no_cycle_collection() -> Iterator[None]:
    """Scanning makes millions of short-lived objects and no reference cycles: the
    cycle collector's passes over the growing per-process records cost a sixth of the
    time and free nothing (reference counting frees the rest). So do merging the
    ranges' folders (each one's unpickling took 0.12 s without the collector, 0.2 to
    0.45 s with it, growing with the folder merged into) and the analysis (1.9 instead
    of 2.9 s on a 12,288-process job's result)."""
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
        _scan_lines(whole_lines(chunks, MAX_LINE_BYTES), folder, name, lambda _: None)
    return folder


def _scan_range_parts(
    path: str,
    start: int,
    end: int,
    name: str,
    line_start: bool,
    *,
    num_shards: int,
    directory: str | None,
) -> RangeParts:
    """:func:`_scan_range`, its process records pickled in shards (hpnet.ncclog.shards)."""
    return split(_scan_range(path, start, end, name, line_start), num_shards, directory)


def _read_sharded(
    inputs: Sequence[LogInput],
    pool: Executor,
    workers: int,
    notes: Sequence[str],
    advance: Callable[[int], None],
) -> NcclLog:
    """Files only, scanned in ranges by ``pool``'s workers, which then merge and freeze
    the processes' records in shards (:class:`hpnet.ncclog.shards.ShardedMerge`)."""
    merged = ShardedMerge(notes, workers)
    with contextlib.ExitStack() as stack:
        try:
            directory: str | None = stack.enter_context(
                tempfile.TemporaryDirectory(prefix="hpnet-verify-")
            )
        except OSError:  # no temporary directory: the records go back through the pool
            directory = None
        # SIGTERM / SIGHUP, Ctrl-C: the workers end before their directory is removed
        stack.callback(end_workers, pool, stack.enter_context(stop_signals()))
        scan = functools.partial(_scan_range_parts, num_shards=workers, directory=directory)
        for source in inputs:
            merged.add_source(source.path)
            ranges = _ranges(source.size_bytes, source.skip_bytes, workers=workers)
            num = len(ranges)
            results = pool.map(
                scan,
                [source.path] * num,
                [s for s, _ in ranges],
                [e for _, e in ranges],
                [source.path] * num,
                [i == 0 for i in range(num)],  # starts at the first line
            )
            lines_before = 0
            for (start, end), parts in zip(ranges, results, strict=True):
                merged.add(parts, lines_before)
                lines_before += parts.folder.num_lines
                advance(end - start)
        return merged.result(pool)


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
    tap: Callable[[str, bytes], None] | None = None,
) -> NcclLog:
    """Parse every input into one :class:`NcclLog` (``jobs``: worker processes), and
    read again around its crash lines where they stopped (:func:`with_crash_sites`).

    ``tap`` hears every block of a stream or gzip input (``(name, bytes)``), which is
    read once: :class:`hpnet.artefacts.scan.ArtefactTap` keeps it for the artefact readers.

    A stream (standard input, a FIFO) that sends nothing for ``idle_timeout_seconds``
    is read up to there; ``waiting`` hears, once per stream, that hpnet waits for one
    (:class:`StreamReader`).
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
    if pool is not None and len(files) == len(inputs):
        try:
            with no_cycle_collection():
                return with_crash_sites(_read_sharded(inputs, pool, workers, notes, advance))
        finally:
            pool.shutdown(cancel_futures=True)
    try:
        # the ranges' folders are unpickled and merged: objects, no cycles
        with no_cycle_collection():
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
                    if tap is not None:
                        chunks_read = _tapped(chunks_read, tap, name)
                    # a folder of its own, as a range's: its guessed hosts are its own
                    scanned = LogFolder()
                    _scan_lines(whole_lines(chunks_read, MAX_LINE_BYTES), scanned, name, advance)
                    folder.merge(scanned)
                    for note in stream_notes:
                        folder.note(note)
                    continue
                ranges = _ranges(
                    source.size_bytes, source.skip_bytes, workers=workers if pool else 1
                )
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
    with no_cycle_collection():
        log = folder.result()
    return with_crash_sites(log)


def _tapped(
    chunks: Iterator[bytes], tap: Callable[[str, bytes], None], name: str
) -> Iterator[bytes]:
    for chunk in chunks:
        tap(name, chunk)
        yield chunk


def _cpu_count() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _pool(workers: int):  # type: ignore[no-untyped-def]
    return make_pool(workers)


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
