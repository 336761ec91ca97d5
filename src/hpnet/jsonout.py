"""Turn result values (frozen dataclasses, str enums, tuples) into JSON data."""

from __future__ import annotations

import dataclasses
import enum
import json
import os

__all__ = ["dumps", "to_data"]


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


def dumps(value: object) -> str:
    """Indented JSON of :func:`to_data`, non-ASCII kept as is."""
    return json.dumps(to_data(value), indent=2, ensure_ascii=False)
