"""Opening a file the user named: a regular file, of a bounded size, never a wait.

``open()`` of a FIFO waits until some process opens it for writing, which may be never;
``/dev/zero`` or ``/dev/urandom`` never end; ``/proc/self/mem`` fails with EIO on the
first read. Every reader of a user-named file (``--config``, ``--env-file``,
``hpnet bench import``, ``--from``) opens it here: with ``O_NONBLOCK``, so that the open
of a FIFO returns at once, then refuses anything :func:`os.fstat` does not call a
regular file, and turns every ``OSError`` into an :class:`~hpnet.errors.InputError`
naming the file (exit 2, never a traceback).

``hpnet verify`` reads pipes on purpose (``<(zcat job.log.gz)``): it opens them itself
(:mod:`hpnet.ncclog.read`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import stat
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from hpnet.errors import InputError, ParseError

__all__ = [
    "MAX_JSON_DEPTH",
    "FileRole",
    "open_regular_file",
    "parse_json",
    "read_bounded",
    "read_regular_file",
    "too_large",
    "whole_lines",
]

#: nesting deeper than this is no file hpnet or nccl-tests writes (theirs is 5 deep):
#: refused before anything walks it (json's decoder and every recursive walk after it
#: would run out of stack near 1000)
MAX_JSON_DEPTH = 64


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class FileRole:
    """What the file is for, as its errors name it.

    ``what`` names what it should hold (``an hpnet config``); ``code`` is the error code
    of a file that is not a regular file (and, unless named apart, of one that is
    missing or cannot be read), ``too_large_code`` of one over the size limit; ``fix``
    says what to pass instead.
    """

    what: str
    code: str
    too_large_code: str
    fix: str
    missing_code: str = ""
    unreadable_code: str = ""


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "is a directory"
    if stat.S_ISFIFO(mode):
        return (
            "is not a regular file but a FIFO (a named pipe): reading it could wait for a "
            "writer forever; save what it carries to a file and pass that"
        )
    if stat.S_ISSOCK(mode):
        return "is not a regular file but a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "is not a regular file but a device"
    return "is not a regular file"


def open_regular_file(path: str, role: FileRole) -> BinaryIO:
    """``path`` opened for reading in binary, if it is a regular file.

    The descriptor is opened non-blocking (a FIFO's open does not wait) and switched
    back to blocking once :func:`os.fstat` shows a regular file.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise InputError(
            "no such file", code=role.missing_code or role.code, where=path, fix=role.fix
        ) from None
    except IsADirectoryError:
        raise InputError(_kind(stat.S_IFDIR), code=role.code, where=path, fix=role.fix) from None
    except OSError as exc:
        raise _unreadable(path, exc, role) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(_kind(mode), code=role.code, where=path, fix=role.fix)
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular_file(path: str, role: FileRole, *, max_bytes: int) -> bytes:
    """The bytes of ``path``, a regular file of at most ``max_bytes``; else an
    :class:`InputError` (exit 2) naming the file and the fix.

    >>> role = FileRole(what="a config", code="config-unreadable",
    ...                 too_large_code="config-too-large", fix="pass a config")
    >>> read_regular_file("/dev/null", role, max_bytes=10)
    Traceback (most recent call last):
    hpnet.errors.InputError: is not a regular file but a device
    """
    with open_regular_file(path, role) as handle:
        data = read_bounded(handle, path, role, max_bytes=max_bytes)
    return data


def read_bounded(handle: BinaryIO, name: str, role: FileRole, *, max_bytes: int) -> bytes:
    """At most ``max_bytes`` from ``handle`` (standard input, an opened file); more is
    an error, and a read error (EIO) is an input error."""
    try:
        data = handle.read(max_bytes + 1)
    except OSError as exc:
        raise _unreadable(name, exc, role) from None
    if len(data) > max_bytes:
        raise too_large(name, role, max_bytes)
    return data


def too_large(name: str, role: FileRole, max_bytes: int) -> InputError:
    size = f"{max_bytes >> 20} MiB" if max_bytes >= 1 << 20 else f"{max_bytes} bytes"
    return InputError(
        f"is larger than {size}: not {role.what}",
        code=role.too_large_code,
        where=name,
        fix=role.fix,
    )


def _unreadable(path: str, exc: OSError, role: FileRole) -> InputError:
    return InputError(
        f"cannot read the file ({exc.strerror or exc})",
        code=role.unreadable_code or role.code,
        where=path,
        fix="check the path and its permissions",
    )


class _NotFinite(ValueError):
    pass


def _finite(text: str) -> float:
    value = float(text)
    if math.isinf(value):  # 1e999: json reads it as infinity
        raise _NotFinite(text)
    return value


def _no_infinity(name: str) -> float:
    if name == "NaN":
        return math.nan
    raise _NotFinite(name)


def parse_json(text: str, *, source: str, fix: str, code: str = "parse") -> object:
    """``json.loads(text)`` for a file a user gave: every way it can be wrong is a
    :class:`~hpnet.errors.ParseError` naming ``source`` and the line, never another
    exception. Refused: a syntax error, nesting deeper than :data:`MAX_JSON_DEPTH`,
    ``Infinity`` and numbers beyond a float (``1e999``), integers too long for Python
    to read. ``NaN`` stays (nccl-tests' average over no rows).

    >>> parse_json('{"a": [1, 2.5]}', source="f.json", fix="")
    {'a': [1, 2.5]}
    >>> parse_json('{"a": 1e999}', source="f.json", fix="")
    Traceback (most recent call last):
    hpnet.errors.ParseError: a number out of range: 1e999
    """
    try:
        data = json.loads(text, parse_float=_finite, parse_constant=_no_infinity)
    except json.JSONDecodeError as exc:
        raise ParseError(
            f"not valid JSON: {exc.msg}", source=source, line_number=exc.lineno, fix=fix, code=code
        ) from None
    except _NotFinite as exc:
        token = str(exc)
        line = text.count("\n", 0, max(text.find(token), 0)) + 1
        raise ParseError(
            f"a number out of range: {token[:40]}",
            source=source,
            line_number=line,
            fix=fix,
            code=code,
        ) from None
    except RecursionError:
        raise ParseError(
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels", source=source, fix=fix, code=code
        ) from None
    except ValueError as exc:  # an integer of more digits than int() reads
        raise ParseError(f"not readable JSON: {exc}", source=source, fix=fix, code=code) from None
    if _depth_exceeds(data, MAX_JSON_DEPTH):
        raise ParseError(
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels", source=source, fix=fix, code=code
        )
    return data


def _depth_exceeds(data: object, limit: int) -> bool:
    """Whether ``data`` nests deeper than ``limit`` (walked without recursion)."""
    stack: list[tuple[object, int]] = [(data, 1)]
    while stack:
        value, depth = stack.pop()
        if isinstance(value, dict):
            children: list[object] = list(value.values())
        elif isinstance(value, list):
            children = value
        else:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


def whole_lines(chunks: Iterable[bytes], max_line_bytes: int) -> Iterator[tuple[bytes, int]]:
    """Blocks of whole lines (each ending in ``\\n`` but the last), each with the bytes of
    input it stands for (for progress).

    A line longer than ``max_line_bytes`` is passed on as its first
    ``max_line_bytes + 1`` bytes, so that a reader can tell it was cut, and the rest of it
    is dropped: memory stays bounded and it still counts as one line.

    >>> list(whole_lines([b"a\\nb", b"c\\nd"], 10))
    [(b'a\\n', 2), (b'bc\\n', 3), (b'd', 1)]
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
        if len(rest) > max_line_bytes:
            yield rest[: max_line_bytes + 1] + b"\n", consumed
            rest, consumed, skipping = b"", 0, True
    if rest or consumed:
        yield rest, consumed
