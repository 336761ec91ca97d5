"""A problem met while gathering facts: the result is partial, and says why."""

from __future__ import annotations

import dataclasses

__all__ = ["Problem"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Problem:
    """Something that could not be read or made sense of.

    ``code`` is kebab-case and stable (``sysfs-unreadable``), ``what`` is one
    sentence, ``where`` names the file, attribute or command.
    """

    code: str
    what: str
    where: str = ""
