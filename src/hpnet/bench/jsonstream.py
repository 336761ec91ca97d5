"""JSON written piece by piece: the text of :func:`hpnet.jsonout.dumps` and
:func:`hpnet.jsonout.envelope`, byte for byte, without building the document.

``dumps(envelope(report))`` holds three copies of a result at once: the dict tree of
:func:`~hpnet.jsonout.to_data`, the JSON text, and its :func:`~hpnet.jsonout.inert`
copy; on a large ``hpnet bench import --json`` that was ~60 times the input (issue 23).
:func:`iter_envelope` walks the values instead (dataclasses, enums, mappings,
sequences, as ``to_data`` does) and yields each scalar's text as it comes, with the
layout of ``json.dumps(indent=2, ensure_ascii=False)``: nothing is held but the report.

>>> print("".join(iter_envelope({"runs": ({"op": "x"},), "none": []}, schema_version=1)))
{
  "schema_version": 1,
  "runs": [
    {
      "op": "x"
    }
  ],
  "none": []
}
"""

from __future__ import annotations

import dataclasses
import enum
import json
import os
from collections.abc import Iterable, Iterator, Mapping
from typing import TextIO

from hpnet.jsonout import inert

__all__ = ["iter_envelope", "iter_json", "write_envelope"]

_INDENT = "  "  # hpnet.jsonout.dumps: json.dumps(indent=2)


def iter_json(value: object, level: int = 0) -> Iterator[str]:
    """``inert(json.dumps(to_data(value), indent=2, ensure_ascii=False))`` in pieces,
    for a value nested ``level`` deep.

    >>> "".join(iter_json({"a": (1.5, None, "\\x9b")}))
    '{\\n  "a": [\\n    1.5,\\n    null,\\n    "\\\\u009b"\\n  ]\\n}'
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        yield from _iter_object(_fields(value), level)
    elif isinstance(value, enum.Enum):
        yield from iter_json(value.value, level)
    elif isinstance(value, Mapping):
        # to_data turns every key into text; json.dumps keeps the mapping's order
        yield from _iter_object(((str(k), v) for k, v in value.items()), level)
    elif isinstance(value, (list, tuple)):
        yield from _iter_array(value, level)
    elif isinstance(value, os.PathLike):
        yield _scalar(os.fspath(value))
    else:
        yield _scalar(value)


def _fields(value: object) -> Iterator[tuple[str, object]]:
    """A dataclass's fields in order, then its ``JSON_PROPERTIES`` (as to_data)."""
    for field in dataclasses.fields(value):  # type: ignore[arg-type]
        yield field.name, getattr(value, field.name)
    for name in getattr(value, "JSON_PROPERTIES", ()):
        yield name, getattr(value, name)


def _scalar(value: object) -> str:
    return inert(json.dumps(value, ensure_ascii=False))


def _iter_object(items: Iterable[tuple[str, object]], level: int) -> Iterator[str]:
    inner = "\n" + _INDENT * (level + 1)
    first = True
    for key, item in items:
        yield ("{" if first else ",") + inner + _scalar(key) + ": "
        first = False
        yield from iter_json(item, level + 1)
    yield "{}" if first else "\n" + _INDENT * level + "}"


def _iter_array(items: Iterable[object], level: int) -> Iterator[str]:
    inner = "\n" + _INDENT * (level + 1)
    first = True
    for item in items:
        yield ("[" if first else ",") + inner
        first = False
        yield from iter_json(item, level + 1)
    yield "[]" if first else "\n" + _INDENT * level + "]"


def iter_envelope(
    body: object,
    *,
    schema_version: int,
    after: Mapping[str, object] | None = None,
    **before: object,
) -> Iterator[str]:
    """``dumps(envelope(body, ...))`` in pieces (:func:`hpnet.jsonout.envelope`'s key
    order: ``schema_version``, ``before``, the body's keys, ``after``; a later key of
    the same name takes the value and keeps the place)."""
    items: dict[str, object] = {"schema_version": schema_version, **before}
    if dataclasses.is_dataclass(body) and not isinstance(body, type):
        items.update(_fields(body))
    elif isinstance(body, Mapping):
        items.update((str(k), v) for k, v in body.items())
    else:
        raise TypeError(f"a JSON document's body is a dataclass or a mapping, not {body!r}")
    items.update(after or {})
    yield from _iter_object(items.items(), 0)


def write_envelope(
    out: TextIO,
    body: object,
    *,
    schema_version: int,
    after: Mapping[str, object] | None = None,
    **before: object,
) -> None:
    """Write :func:`iter_envelope`'s pieces to ``out``, a few KiB at a time."""
    pending: list[str] = []
    size = 0
    for piece in iter_envelope(body, schema_version=schema_version, after=after, **before):
        pending.append(piece)
        size += len(piece)
        if size >= 1 << 16:
            out.write("".join(pending))
            pending.clear()
            size = 0
    out.write("".join(pending))
