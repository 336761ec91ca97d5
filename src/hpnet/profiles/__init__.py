"""Platform profiles: one literal registry, modules imported only when asked.

>>> get_profile("pai-dlc-erdma").transport
'erdma'
"""

from __future__ import annotations

import importlib

from hpnet.errors import InputError
from hpnet.profiles.model import Profile

__all__ = ["PROFILES", "Profile", "get_profile", "list_profiles"]

#: name -> (module, attribute). Literal on purpose: no registration at import time.
PROFILES: dict[str, tuple[str, str]] = {
    "pai-lingjun": ("hpnet.profiles.alibaba", "PAI_LINGJUN"),
    "scnet": ("hpnet.profiles.scnet", "SCNET"),
    "ecs-erdma": ("hpnet.profiles.alibaba", "ECS_ERDMA"),
    "pai-dlc-erdma": ("hpnet.profiles.alibaba", "PAI_DLC_ERDMA"),
    "modelarts": ("hpnet.profiles.huawei", "MODELARTS"),
    "ib": ("hpnet.profiles.generic", "IB"),
    "roce": ("hpnet.profiles.generic", "ROCE"),
    "erdma": ("hpnet.profiles.generic", "ERDMA"),
    "socket": ("hpnet.profiles.generic", "SOCKET"),
    "auto": ("hpnet.profiles.generic", "AUTO"),
}


def get_profile(name: str, *, where: str = "--profile") -> Profile:
    """The profile called ``name``; an unknown name is an error with a did-you-mean."""
    if name not in PROFILES:
        import difflib  # noqa: PLC0415 - only for a misspelled name

        close = difflib.get_close_matches(name, list(PROFILES), n=1)
        raise InputError(
            f"unknown profile {name!r}",
            code="unknown-profile",
            where=where,
            fix=(f"did you mean {close[0]!r}? " if close else "")
            + "see `hpnet profiles` for the list",
        )
    module, attribute = PROFILES[name]
    profile: Profile = getattr(importlib.import_module(module), attribute)
    return profile


def list_profiles() -> list[Profile]:
    return [get_profile(name) for name in PROFILES]
