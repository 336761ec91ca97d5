"""The edge of the log parser: files, directories and standard input.

Large files are cut into byte ranges at line boundaries and scanned in worker
processes (:func:`hpnet.nccl.logscan.scan_block` needs nothing from the ranges
before it); results come back in order and are folded by one
:class:`hpnet.nccl.log.LogFolder`, so the answer is the same with one worker or
sixteen. Memory stays at a few blocks per worker, whatever the file's size.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO

from hpnet.errors import InputError
from hpnet.nccl.log import BLOCK_BYTES, LogFolder
from hpnet.nccl.logline import Classifier
from hpnet.nccl.logmodel import NcclLog
from hpnet.nccl.logscan import scan_block

__all__ = ["LogInput", "collect_inputs", "read_logs"]

#: a range each worker scans at a time
RANGE_BYTES = 32 << 20
#: below this much input, worker processes cost more than they save
PARALLEL_MIN_BYTES = 96 << 20
#: a line longer than this is cut (binary data or a runaway progress bar)
MAX_LINE_BYTES = 1 << 20
#: files in a directory beyond this are an input error (a wrong directory)
MAX_FILES = 100_000
SNIFF_BYTES = 8192

Progress = Callable[[int, int], None]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LogInput:
    """One input: a regular file (``size_bytes`` known) or standard input."""

    path: str  # "-" for standard input
    size_bytes: int
    gzip: bool = False


def collect_inputs(paths: Sequence[str]) -> tuple[list[LogInput], list[str]]:
    """Files to read, with notes about what was skipped; bad paths raise InputError."""
    inputs: list[LogInput] = []
    notes: list[str] = []
    for path in paths:
        if path == "-":
            inputs.append(LogInput(path="-", size_bytes=0))
            continue
        try:
            info = os.stat(path)
        except OSError as exc:
            raise InputError(
                f"cannot read the log ({exc.strerror})",
                code="log-unreadable",
                where=path,
                fix="pass NCCL debug logs: files, a directory of per-rank logs, or - for stdin",
            ) from None
        if os.path.isdir(path):
            found = _walk(path)
            if not found:
                raise InputError(
                    "the directory holds no files",
                    code="log-dir-empty",
                    where=path,
                    fix="point at the directory the per-rank logs were written to",
                )
            for file in found:
                _add_file(file, inputs, notes, in_directory=True)
        elif os.path.isfile(path):
            _add_file(path, inputs, notes, in_directory=False)
        else:
            raise InputError(
                "is not a regular file or directory",
                code="log-not-a-file",
                where=path,
                fix="pass a log file, a directory, or - and pipe the log in",
            )
        del info
    return inputs, notes


def _walk(directory: str) -> list[str]:
    found: list[str] = []
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
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
        with open(path, "rb") as handle:
            head = handle.read(SNIFF_BYTES)
            size = os.fstat(handle.fileno()).st_size
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
    gzip = head[:2] == b"\x1f\x8b"
    if not gzip and b"\x00" in head:
        notes.append(f"{path}: skipped, binary data (not a text log)")
        return
    inputs.append(LogInput(path=path, size_bytes=size, gzip=gzip))


def _open(source: LogInput) -> BinaryIO:
    if source.path == "-":
        return sys.stdin.buffer
    if source.gzip:
        import gzip  # noqa: PLC0415 - only for compressed logs

        return gzip.open(source.path, "rb")  # type: ignore[return-value]
    return open(source.path, "rb")


def _stream_blocks(handle: BinaryIO, notes: list[str], name: str) -> Iterator[bytes]:
    """Blocks of whole lines from a stream (stdin, gzip)."""
    rest = b""
    while True:
        data = handle.read(BLOCK_BYTES)
        if not data:
            if rest:
                yield rest
            return
        data = rest + data if rest else data
        cut = data.rfind(b"\n")
        if cut < 0:
            if len(data) > MAX_LINE_BYTES:
                notes.append(f"{name}: a line longer than {MAX_LINE_BYTES >> 20} MiB was cut")
                yield data + b"\n"
                rest = b""
            else:
                rest = data
            continue
        yield data[: cut + 1]
        rest = data[cut + 1 :]


def _scan_range(path: str, start: int, end: int, name: str) -> LogFolder:
    """Scan and fold the lines that begin in ``[start, end)`` of ``path`` (a worker's job).

    Line numbers in the result count from the range's first line; the caller adds the
    lines of the ranges before it when it merges.
    """
    folder = LogFolder()
    classifier = Classifier()
    with open(path, "rb") as handle:
        if start > 0:
            handle.seek(start - 1)
            if handle.read(1) != b"\n":
                # the line under ``start`` belongs to the range before
                skipped = handle.readline(MAX_LINE_BYTES)
                start += len(skipped)
        handle.seek(start)
        position = start
        line = 1
        while position < end:
            data = handle.read(min(BLOCK_BYTES, end - position))
            if not data:
                break
            position += len(data)
            if not data.endswith(b"\n"):
                tail = handle.readline(MAX_LINE_BYTES) if position >= end else b""
                if position < end:
                    cut = data.rfind(b"\n")
                    if cut >= 0:
                        handle.seek(position - (len(data) - cut - 1))
                        position -= len(data) - cut - 1
                        data = data[: cut + 1]
                else:
                    position += len(tail)
                    data += tail
            result = scan_block(data, source=name, start_line=line, classifier=classifier)
            line += result.num_lines
            folder.add(result)
    return folder


def _ranges(size: int) -> list[tuple[int, int]]:
    return [(s, min(size, s + RANGE_BYTES)) for s in range(0, size, RANGE_BYTES)] or [(0, 0)]


def read_logs(
    inputs: Sequence[LogInput],
    *,
    jobs: int | None = None,
    progress: Progress | None = None,
    notes: Sequence[str] = (),
) -> NcclLog:
    """Parse every input into one :class:`NcclLog` (``jobs``: worker processes)."""
    folder = LogFolder()
    for note in notes:
        folder.note(note)
    total = sum(i.size_bytes for i in inputs)
    done = 0
    # a pool forks all its workers up front: never more than 4 per CPU nor than ranges
    # to give them (--jobs 100000 forked thousands of processes and exhausted memory)
    chunks = sum(len(_ranges(i.size_bytes)) for i in inputs if i.path != "-" and not i.gzip)
    cpus = _cpu_count()
    workers = min(jobs if jobs is not None else cpus, 4 * cpus, max(chunks, 1))
    parallel = workers > 1 and total >= PARALLEL_MIN_BYTES
    pool = _pool(workers) if parallel else None
    try:
        for source in inputs:
            name = "<stdin>" if source.path == "-" else source.path
            folder.add_source(name)
            if source.path == "-" or source.gzip:
                stream_notes: list[str] = []
                handle = _open(source)
                try:
                    line = 1
                    classifier = Classifier()
                    for block in _stream_blocks(handle, stream_notes, name):
                        folder.add(
                            scan_block(block, source=name, start_line=line, classifier=classifier)
                        )
                        line += block.count(b"\n")
                        done += len(block)
                        if progress:
                            progress(done, total)
                finally:
                    if handle is not sys.stdin.buffer:
                        handle.close()
                for note in stream_notes:
                    folder.note(note)
                continue
            ranges = _ranges(source.size_bytes)
            if pool is None:
                results: Iterator[LogFolder] = (
                    _scan_range(source.path, s, e, name) for s, e in ranges
                )
            else:
                results = pool.map(
                    _scan_range,
                    [source.path] * len(ranges),
                    [s for s, _ in ranges],
                    [e for _, e in ranges],
                    [name] * len(ranges),
                )
            lines_before = 0
            for (start, end), scanned in zip(ranges, results, strict=True):
                folder.merge(scanned, line_offset=lines_before)
                lines_before += scanned.num_lines
                done += end - start
                if progress:
                    progress(done, total)
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
