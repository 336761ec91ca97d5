"""Turn result values (frozen dataclasses, str enums, tuples) into JSON data."""

from __future__ import annotations

import dataclasses
import enum
import json
import os
import re

__all__ = ["dumps", "envelope", "inert", "to_data"]

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
    would act on (:func:`inert`)."""
    return inert(json.dumps(to_data(value), indent=2, ensure_ascii=False))
