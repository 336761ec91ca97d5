"""Turn result values (frozen dataclasses, str enums, tuples) into JSON data, whole
(:func:`dumps`, :func:`envelope`) or piece by piece (:func:`iter_envelope`,
:func:`write_envelope`: the same bytes without building the document, for outputs as
large as ``hpnet bench import --json`` of a big file, which held ~60 times its input;
issue 23).

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
import re
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TextIO

__all__ = [
    "dump_envelope",
    "dumps",
    "envelope",
    "inert",
    "iter_envelope",
    "iter_json",
    "to_data",
    "write_envelope",
]

#: what JSON may hold raw but a terminal acts on (C1 controls such as \x9b, which
#: starts an escape sequence on its own; DEL) or that reorders what is shown (bidi
#: embeddings, overrides, isolates), and the separators JavaScript reads as line ends
_UNSAFE = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def to_data(value: object) -> object:
    """JSON-ready data: dataclasses become dicts in field order, enums their value.

    A dataclass may name derived properties to publish in ``JSON_PROPERTIES``
    (a class attribute); they follow the fields.

    >>> import enum
    >>> class Colour(str, enum.Enum):
    ...     RED = "red"
    >>> to_data({"c": (Colour.RED,)})
    {'c': ['red']}
    """
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: to_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
        for name in getattr(value, "JSON_PROPERTIES", ()):
            data[name] = to_data(getattr(value, name))
        return data
    if isinstance(value, enum.Enum):
        return to_data(value.value)
    if isinstance(value, dict):
        return {str(k): to_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [to_data(v) for v in value]
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    return value


def envelope(
    body: object,
    *,
    schema_version: int,
    after: dict[str, object] | None = None,
    **before: object,
) -> dict[str, object]:
    """The one shape of every ``--json`` document: ``schema_version`` first, then the
    keys in ``before`` (a verdict, a status), then ``body``'s (a dataclass or a dict,
    through :func:`to_data`), then those in ``after``. A later key of the same name
    takes the value but keeps the place, as in ``{**a, **b}``.

    >>> envelope({"nodes": ("a",)}, schema_version=2, status="PASS", after={"exit_code": 0})
    {'schema_version': 2, 'status': 'PASS', 'nodes': ['a'], 'exit_code': 0}
    """
    return {
        "schema_version": schema_version,
        **_object(before),
        **_object(body),
        **_object(after or {}),
    }


def _object(value: object) -> dict[str, object]:
    data = to_data(value)
    if not isinstance(data, dict):
        raise TypeError(f"a JSON document's body is a dataclass or a mapping, not {value!r}")
    return data


def inert(text: str) -> str:
    """JSON text with the characters of :data:`_UNSAFE` written as ``\\u`` escapes (they can
    only be inside strings, so the data is the same; C0 controls JSON escapes itself).

    >>> inert(json.dumps("a\x9b2J", ensure_ascii=False))
    '"a\\\\u009b2J"'
    """
    return _UNSAFE.sub(lambda m: f"\\u{ord(m[0]):04x}", text)


def dumps(value: object) -> str:
    """Indented JSON of :func:`to_data`, non-ASCII kept as is but for what a terminal
    would act on (:func:`inert`): ``inert(json.dumps(to_data(value), indent=2,
    ensure_ascii=False))``, byte for byte, in one walk over ``value``.

    Why not that line itself: with ``indent`` the standard library encodes in Python
    generators, after :func:`to_data` has walked the value once more; ``hpnet verify
    --json`` of a job of 12,000 processes spent longer there than reading the log
    (benchmarks/README.md, issue 28).

    >>> print(dumps({"a": (1.5, float("nan"), None, True, []), "b": {}}))
    {
      "a": [
        1.5,
        NaN,
        null,
        true,
        []
      ],
      "b": {}
    }
    """
    pieces: list[str] = []
    _encode(value, "\n", pieces)
    return inert("".join(pieces))


def dump_envelope(
    body: object,
    *,
    schema_version: int,
    after: Mapping[str, object] | None = None,
    **before: object,
) -> str:
    """``dumps(envelope(body, ...))``, without building the document first."""
    items: dict[str, object] = {"schema_version": schema_version, **before}
    items.update(_members(body))
    items.update(after or {})
    pieces: list[str] = []
    _encode(items, "\n", pieces)
    return inert("".join(pieces))


def _members(body: object) -> Iterable[tuple[str, object]]:
    """A document body's keys and values, in :func:`envelope`'s order."""
    if dataclasses.is_dataclass(body) and not isinstance(body, type):
        return _fields(body)
    if isinstance(body, Mapping):
        return ((str(k), v) for k, v in body.items())
    raise TypeError(f"a JSON document's body is a dataclass or a mapping, not {body!r}")


_INDENT = "  "  # json.dumps(indent=2)
_string = json.encoder.encode_basestring  # what json.dumps(ensure_ascii=False) uses (C)
#: a dataclass's names to write (fields, then JSON_PROPERTIES), per class
_NAMES: dict[type, tuple[str, ...]] = {}


def _encode(value: Any, newline: str, out: list[str]) -> None:
    """Append ``value``'s JSON (as :func:`dumps`) to ``out``; ``newline`` is a newline
    and the indentation of ``value``'s own line. The common types are told apart by
    ``type() is`` first: a report holds hundreds of thousands of strings."""
    kind = type(value)
    if kind is str:
        out.append(_string(value))
    elif value is None:
        out.append("null")
    elif value is True:
        out.append("true")
    elif value is False:
        out.append("false")
    elif kind is int:
        out.append(int.__repr__(value))
    elif kind is float and value - value == 0:  # finite (json writes NaN, Infinity)
        out.append(float.__repr__(value))
    elif kind is tuple or kind is list:
        _encode_array(value, newline, out)
    elif kind is dict:
        _encode_object(((str(k), v) for k, v in value.items()), newline, out)
    else:
        names = _NAMES.get(kind)
        if names is None and dataclasses.is_dataclass(value) and not isinstance(value, type):
            names = _NAMES[kind] = tuple(f.name for f in dataclasses.fields(value)) + tuple(
                getattr(value, "JSON_PROPERTIES", ())
            )
        if names is not None:
            _encode_object(((n, getattr(value, n)) for n in names), newline, out)
        elif isinstance(value, enum.Enum):
            _encode(value.value, newline, out)
        elif isinstance(value, dict):
            _encode_object(((str(k), v) for k, v in value.items()), newline, out)
        elif isinstance(value, (list, tuple)):
            _encode_array(value, newline, out)
        elif isinstance(value, os.PathLike):
            out.append(_string(os.fspath(value)))
        else:  # floats and what json.dumps itself knows or refuses (TypeError)
            out.append(json.dumps(value, ensure_ascii=False))


def _encode_array(items: list[object] | tuple[object, ...], newline: str, out: list[str]) -> None:
    if not items:
        out.append("[]")
        return
    inner = newline + _INDENT
    opening = "[" + inner
    between = "," + inner
    for item in items:
        out.append(opening)
        opening = between
        _encode(item, inner, out)
    out.append(newline + "]")


def _encode_object(items: Iterable[tuple[str, object]], newline: str, out: list[str]) -> None:
    inner = newline + _INDENT
    opening = "{" + inner
    between = "," + inner
    for key, item in items:
        out.append(opening + _string(key) + ": ")
        opening = between
        _encode(item, inner, out)
    out.append("{}" if opening is not between else newline + "}")


# -- piece by piece ------------------------------------------------------------------
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
