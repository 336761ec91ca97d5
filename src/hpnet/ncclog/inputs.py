"""Which inputs a log read takes: files, directories, FIFOs and standard input.

:func:`collect_inputs` turns the paths given on the command line into
:class:`LogInput` records (directories walked, binary files and unreadable ones noted
and skipped, a FIFO or ``-`` kept as a stream); :mod:`hpnet.ncclog.read` reads them.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import stat
from collections.abc import Sequence
from typing import BinaryIO

from hpnet.errors import InputError

__all__ = ["GZIP_MAGIC", "LogInput", "collect_inputs"]

#: files in a directory beyond this are an input error (a wrong directory)
MAX_FILES = 100_000
SNIFF_BYTES = 8192
GZIP_MAGIC = b"\x1f\x8b"
#: bytes of text: printable ASCII, the white space and escapes a terminal log holds, and
#: everything from 0x80 (UTF-8 and other encodings); the rest are control bytes
_TEXT_BYTES = bytes(range(0x20, 0x7F)) + b"\t\n\r\f\v\b\x1b\x7f" + bytes(range(0x80, 0x100))


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
