"""The values the detected layer of ``hpnet env`` produces (:mod:`hpnet.nccl.fill`)."""

from __future__ import annotations

import dataclasses

__all__ = ["Current", "Detected"]


#: ``(value, origin)`` a variable has from the profile, user and environment layers
Current = tuple[str, str]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Detected:
    """One detected value (``value`` None: leave the variable unset) or a
    confirmation of the current value (``confirmation``; ``value`` is the value
    confirmed)."""

    name: str
    value: str | None
    reason: str
    replaces_profile: bool = False
    confirmation: bool = False  # the profile's value fits; ``value`` repeats it
