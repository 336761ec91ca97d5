"""One row of an nccl-tests table, read from the right: a row ends in four
measurements per placement (``time algbw busbw wrong``), so the columns between
``type`` and ``time`` (``redop``, ``root``, both, or neither) do not need to be known;
and the numbers in it, each a :class:`~hpnet.errors.ParseError` with its line when it
is no number. For :mod:`hpnet.bench.nccl_tests`.
"""

from __future__ import annotations

import math
import re

from hpnet.bench.model import Measurement, Row
from hpnet.errors import ParseError

__all__ = ["INTEGER", "MAX_DIGITS", "TYPES", "read_float", "read_int", "read_row"]

#: the data types of nccl-tests' ``type`` column
TYPES = frozenset(
    {"int8", "uint8", "int32", "uint32", "int64", "uint64", "half", "float", "double",
     "bfloat16", "bf16", "fp8_e4m3", "fp8_e5m2", "f8e4m3", "f8e5m2", "char", "int", "uint"}
)  # fmt: skip
_NUMBER = re.compile(r"^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$")
#: integers: decimal digits (str.isdigit() takes "²" too, which int() refuses); a root
#: is -1 when the op has none
_DIGITS = re.compile(r"\d+")
INTEGER = re.compile(r"-?\d+")
#: digits of the largest integer read (a size in bytes has 20 at most)
MAX_DIGITS = 30
_INFINITIES = (math.inf, -math.inf)
_MISSING = ["--"] * 4  # a placement hpnet bench's backend does not have


def _bad_number(token: str, source: str, number: int) -> ParseError:
    return ParseError(
        f"{token[:40]!r} is not a number nccl-tests prints (out of range)",
        source=source,
        line_number=number,
        fix="pass nccl-tests' output as it wrote it",
        code="bad-result",
    )


def read_float(token: str, source: str, number: int, *, nan: bool = False) -> float:
    """A finite number (nccl-tests prints ``%.2f`` and the like: never ``1e999``);
    ``nan``: NaN is one too (an average over no rows)."""
    try:
        value = float(token)
    except ValueError:
        raise ParseError(
            f"{token[:40]!r} is not a number",
            source=source,
            line_number=number,
            fix="pass nccl-tests' output as it wrote it",
            code="bad-result",
        ) from None
    if math.isinf(value) or (math.isnan(value) and not nan):
        raise _bad_number(token, source, number)
    return value


def read_int(token: str, source: str, number: int) -> int:
    """An integer of at most :data:`MAX_DIGITS` digits (larger ones are no count or
    size nccl-tests can print, and Python refuses to read some of them)."""
    if not INTEGER.fullmatch(token):
        raise ParseError(
            f"{token[:40]!r} is not an integer",
            source=source,
            line_number=number,
            fix="pass nccl-tests' output as it wrote it",
            code="bad-result",
        )
    if len(token.lstrip("-")) > MAX_DIGITS:
        raise _bad_number(token, source, number)
    return int(token)


def _cell(token: str, source: str, number: int) -> float | None:
    if not _NUMBER.match(token):
        return None
    value = float(token)  # the pattern is a float's syntax: only its range can be wrong
    if value in _INFINITIES:
        raise _bad_number(token, source, number)
    return value


def _measure(tokens: list[str], milliseconds: bool, source: str, number: int) -> Measurement | None:
    """``time algbw busbw wrong`` -> a measurement (None if it is not one)."""
    time, algbw, busbw = (_cell(t, source, number) for t in tokens[:3])
    if time is None or algbw is None or busbw is None:
        return None
    last = tokens[3]
    wrong: int | None = None
    error: float | None = None
    if last != "N/A":
        value = _cell(last, source, number)
        if value is None:
            return None
        if "e" in last.lower() and "." not in last.split("e")[0].split("E")[0] and value < 1e5:
            error = value  # nccl-tests < 2.13: the max error, "%5.0le" (2e-07, 1e+00)
        else:
            wrong = int(value)
    return Measurement(
        time_us=time * 1000 if milliseconds else time,
        algbw_gbps=algbw,
        busbw_gbps=busbw,
        wrong=wrong,
        error=error,
    )


def read_row(line: str, milliseconds: bool, source: str = "<text>", number: int = 0) -> Row | None:
    body = line.lstrip()
    if body.startswith("#"):  # a pasted table with "#" on every line
        body = body[1:].lstrip()
    tokens = body.split()
    if len(tokens) < 7 or not _DIGITS.fullmatch(tokens[0]) or not _DIGITS.fullmatch(tokens[1]):
        return None
    if tokens[2] not in TYPES:
        return None
    rest = tokens[3:]
    # from the right: eight measurement tokens (both placements), or four (one)
    for width in (8, 4):
        if len(rest) < width:
            continue
        head, cells = rest[: len(rest) - width], rest[len(rest) - width :]
        if len(head) > 2:
            continue
        missing = [cells[:4] == _MISSING, width == 8 and cells[4:8] == _MISSING]
        first = None if missing[0] else _measure(cells[:4], milliseconds, source, number)
        second = (
            _measure(cells[4:8], milliseconds, source, number)
            if width == 8 and not missing[1]
            else None
        )
        if (first is None and not missing[0]) or (width == 8 and second is None and not missing[1]):
            continue
        if first is None and second is None:
            continue
        redop = next((h for h in head if not INTEGER.fullmatch(h)), "")
        root = next((read_int(h, source, number) for h in head if INTEGER.fullmatch(h)), -1)
        return Row(
            size_bytes=read_int(tokens[0], source, number),
            count=read_int(tokens[1], source, number),
            dtype=tokens[2],
            redop=redop or "none",
            root=root,
            out_of_place=first,
            in_place=second,
        )
    return None
