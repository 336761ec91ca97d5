"""Gather the facts the checks judge: the edge of ``hpnet doctor``."""

from __future__ import annotations

import os
import shlex
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.doctor.model import Facts, Report
from hpnet.errors import ParseError
from hpnet.nccl.rules import is_variable_name

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory

__all__ = ["diagnose", "gather_facts", "parse_env_file"]


def parse_env_file(text: str, *, source: str) -> dict[str, str]:
    """``K=V`` / ``export K=V`` lines (shell-quoted values allowed, ``#`` comments).

    >>> parse_env_file("export NCCL_IB_HCA='=mlx5_0:1'\\n# note\\nNCCL_DEBUG=WARN\\n", source="f")
    {'NCCL_IB_HCA': '=mlx5_0:1', 'NCCL_DEBUG': 'WARN'}
    """
    result: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            words = shlex.split(line, comments=True)
        except ValueError as exc:
            raise ParseError(
                f"cannot read {line[:60]!r}: {exc}",
                source=source,
                line_number=number,
                fix="write NAME=VALUE",
            ) from None
        if words and words[0] == "export":
            words = words[1:]
        if len(words) != 1 or "=" not in words[0]:
            raise ParseError(
                f"not a NAME=VALUE line: {line[:60]!r}",
                source=source,
                line_number=number,
                fix="write NAME=VALUE or export NAME=VALUE",
            )
        name, _, value = words[0].partition("=")
        # a line naming anything but a shell variable is refused: no name can carry
        # shell syntax into a fix
        if not is_variable_name(name):
            raise ParseError(
                f"{name[:60]!r} is not a variable name",
                source=source,
                line_number=number,
                fix="names are letters, digits and underscores, not starting with a digit",
            )
        result[name] = value
    return result


def diagnose(
    *,
    sysfs_root: str = "/",
    listings: Sequence[tuple[str, str]] = (),
    profile: str | None = None,
    env_file: tuple[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
    nccl_version: str | None = None,
    inventory: NodeInventory | None = None,
    judged: tuple[Mapping[str, str], str] | None = None,
) -> Report:
    """Gather the facts (:func:`gather_facts`) and run every check over them."""
    from hpnet.doctor.checks._util import decisions  # noqa: PLC0415
    from hpnet.doctor.registry import run_checks  # noqa: PLC0415

    facts = gather_facts(
        sysfs_root=sysfs_root,
        listings=listings,
        profile=profile,
        env_file=env_file,
        environment=environment,
        nccl_version=nccl_version,
        inventory=inventory,
        judged=judged,
    )
    return Report(
        node=facts.inventory.hostname or facts.inventory.source,
        profile=facts.profile.name if facts.profile else None,
        variables_source=facts.variables_source,
        checks=run_checks(facts),
        decisions=decisions(facts).as_json(),
    )


def gather_facts(
    *,
    sysfs_root: str = "/",
    listings: Sequence[tuple[str, str]] = (),
    profile: str | None = None,
    env_file: tuple[str, str] | None = None,
    environment: Mapping[str, str] | None = None,
    nccl_version: str | None = None,
    inventory: NodeInventory | None = None,
    judged: tuple[Mapping[str, str], str] | None = None,
) -> Facts:
    """Detect, take the variables under test: what the checks judge.

    The variables are ``judged`` (``(variables, where they come from)``: a caller
    that resolved the environment itself, such as ``hpnet check``, has every check
    judge that one resolution), else the ``env_file``'s ``(source, text)``, else the
    ``profile``'s presets overlaid by ``environment``'s NCCL_* (what a job on that
    platform sees), else the NCCL_* of ``environment``. Fixes name the values
    ``hpnet env`` would set. ``inventory``: the node as the caller detected it (one
    detection per run); None: detected here.
    """
    from hpnet.detect import DetectOptions, detect, inventory_from_listings  # noqa: PLC0415
    from hpnet.node.acs import bridges_between, read_acs  # noqa: PLC0415
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    env = dict(os.environ) if environment is None else dict(environment)
    if inventory is not None:
        pass
    elif listings:
        inventory = inventory_from_listings(listings)
    else:
        inventory = detect(DetectOptions(sysfs_root=sysfs_root), env=env, python_path=sys.path)
    chosen = get_profile(profile) if profile else None
    if judged is not None:
        variables = {k: v for k, v in judged[0].items() if k.startswith("NCCL_")}
        source = judged[1]
    elif env_file is not None:
        variables = parse_env_file(env_file[1], source=env_file[0])
        source = f"--env-file {env_file[0]}"
    elif chosen is not None:
        # what the job will see: the platform injects the profile's presets, and
        # anything already in the environment overrides them
        variables = {s.name: s.value for s in chosen.settings if s.name.startswith("NCCL_")}
        variables.update({k: v for k, v in env.items() if k.startswith("NCCL_")})
        source = f"profile {chosen.name} (as the platform sets it) and the environment"
    else:
        variables = {k: v for k, v in env.items() if k.startswith("NCCL_")}
        source = "the environment"
    version = nccl_version
    if version is None and inventory.versions is not None:
        torch = inventory.versions.torch
        version = (
            torch.nccl
            if torch and torch.nccl
            else (inventory.versions.nccl[0].version if inventory.versions.nccl else None)
        )
    dev_infiniband: tuple[str, ...] | None = None
    net_plugins: tuple[str, ...] | None = None
    acs: dict[str, bool | None] = {}
    distro: str | None = None
    if not listings:
        fs = FsRoot(sysfs_root)
        from hpnet.doctor.packages import distro_from_os_release  # noqa: PLC0415

        # os-release names the distribution (recorded trees usually lack it: unknown)
        distro = distro_from_os_release(fs.read("etc/os-release") or fs.read("usr/lib/os-release"))
        dev_infiniband = tuple(fs.listdir("dev/infiniband"))
        if fs.is_live:
            from hpnet.node.versions import library_dirs  # noqa: PLC0415

            net_plugins = tuple(
                sorted(
                    {n for d in library_dirs(fs, env) for n in fs.listdir(d, prefix="libnccl-net")}
                )
            )
        bridges = [
            bdf
            for gpu in inventory.gpus
            for device in inventory.rdma_devices
            for bdf in bridges_between(gpu.pci_path, device.pci_path)
        ]
        acs = {k: v for k, v in read_acs(fs, bridges).items() if v is not None}
    elif inventory.dev_nodes is not None:  # `ls /dev/infiniband` given with --from
        dev_infiniband = inventory.dev_nodes.names
    return Facts(
        inventory=inventory,
        variables=variables,
        variables_source=source,
        profile=chosen,
        nccl_version=version,
        acs=acs,
        dev_infiniband=dev_infiniband,
        net_plugins=net_plugins,
        env_file=env_file[0] if env_file is not None else None,
        distro=distro,
    )
