"""The library's front door: the same calls the CLI makes, on plain arguments."""

from __future__ import annotations

import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.nccl.env import Resolution

__all__ = ["resolve_env"]


def resolve_env(
    profile: str = "auto",
    *,
    sysfs_root: str = "/",
    listings: Sequence[tuple[str, str]] = (),
    user: Mapping[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
    override_env: bool = False,
    nccl_version: str | None = None,
) -> Resolution:
    """Detect the node (or read ``listings``: ``(name, text)`` pairs) and resolve the
    NCCL environment for ``profile``; what ``hpnet env`` prints.

    ``environment`` defaults to this process's environment (pass ``{}`` to ignore it).

    >>> resolution = resolve_env("socket", environment={})
    >>> resolution.get("NCCL_IB_DISABLE").value
    '1'
    """
    from hpnet.detect import DetectOptions, detect, inventory_from_listings  # noqa: PLC0415
    from hpnet.nccl.env import resolve_env as resolve  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    chosen = get_profile(profile)
    env = dict(os.environ) if environment is None else environment
    if listings:
        inventory = inventory_from_listings(listings)
    else:
        inventory = detect(
            DetectOptions(sysfs_root=sysfs_root, gpus=False), env=env, python_path=sys.path
        )
    return resolve(
        chosen,
        inventory,
        user=user,
        environment=env,
        override_env=override_env,
        nccl_version=nccl_version,
    )
