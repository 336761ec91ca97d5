"""Which RDMA user-space packages to install, as commands (pure).

A profile's guide says how its images get rdma-core: PAI Lingjun from Alibaba's
installer after a few apt packages (seed 000, "Custom images"), ECS and PAI-DLC eRDMA
from the eRDMA repository, which must be added first (seeds 002 and 004; PAI-DLC also
drops Mellanox OFED's verbs libraries first). The package set is the one for the
node's distribution when os-release names it; otherwise every option is listed. With
no profile, the distribution's own rdma-core packages (:mod:`hpnet.profiles.rdma_core`).
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence
from typing import Literal

from hpnet.distros import package_manager
from hpnet.profiles.model import PackageSet, Profile
from hpnet.profiles.rdma_core import RDMA_CORE

__all__ = [
    "InstallFix",
    "InstallStep",
    "distro_from_os_release",
    "install_fix",
    "package_commands",
    "package_steps",
]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class InstallFix:
    """``commands`` to paste (None when the right set cannot be told) and a ``note``."""

    commands: str | None
    note: str | None


def distro_from_os_release(text: str | None) -> str | None:
    """``ID`` + ``VERSION_ID`` of an os-release file: ``ubuntu22.04``, ``centos7``.

    >>> distro_from_os_release('NAME="Ubuntu"\\nID=ubuntu\\nVERSION_ID="22.04"\\n')
    'ubuntu22.04'
    """
    if not text:
        return None
    fields: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            fields[key.strip()] = value.strip().strip("\"'")
    distro_id = fields.get("ID", "").lower()
    if not distro_id or not distro_id.replace("-", "").isalnum():
        return None
    version = fields.get("VERSION_ID", "")
    return distro_id + (version if version.replace(".", "").isalnum() else "")


#: what one group of a guide's install steps does
StepKind = Literal["remove", "repository", "install", "installer", "plugin"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class InstallStep:
    """Commands of a guide's install procedure that belong together."""

    kind: StepKind
    commands: tuple[str, ...]


def package_steps(package: PackageSet) -> list[InstallStep]:
    """The guide's steps for one package set, in order, grouped by what they do:
    remove conflicting packages, add the vendor repository, install the packages, run
    the vendor's installer, install the vendor's NCCL plugin.

    >>> from hpnet.profiles import get_profile
    >>> [s.kind for s in package_steps(get_profile("ecs-erdma").packages[0])]
    ['repository', 'install', 'plugin']
    """
    apt = package.manager == "apt"
    steps: list[InstallStep] = []
    files = [item for item in package.remove_first if item.startswith("/")]
    removed = [item for item in package.remove_first if not item.startswith("/")]
    remove: list[str] = []
    if files:
        remove.append("rm -f " + shlex.join(files))
    if removed:
        remove.append(("apt-get remove -y " if apt else "yum remove -y ") + shlex.join(removed))
    if remove:
        steps.append(InstallStep(kind="remove", commands=tuple(remove)))
    if package.repository:
        name = package.repo_name
        repository: list[str] = []
        if apt:
            if package.gpg_key:
                repository.append(
                    f"wget -qO - {shlex.quote(package.gpg_key)} | gpg --dearmour -o "
                    f"/etc/apt/trusted.gpg.d/{name}.gpg"
                )
            repository.append(
                f"echo {shlex.quote(package.repository)} | tee /etc/apt/sources.list.d/{name}.list"
            )
        else:
            repo = f"[{name}]\\nname={name}\\nbaseurl={package.repository}\\nenabled=1\\n" + (
                f"gpgcheck=1\\ngpgkey={package.gpg_key}\\n" if package.gpg_key else "gpgcheck=0\\n"
            )
            repository.append(f"printf {shlex.quote(repo)} | tee /etc/yum.repos.d/{name}.repo")
        steps.append(InstallStep(kind="repository", commands=tuple(repository)))
    if package.packages:
        install: tuple[str, ...]
        if apt:
            flags = " ".join(("-y", *package.install_flags))
            install = ("apt-get update", f"apt-get install {flags} " + shlex.join(package.packages))
        else:
            install = ("yum install -y " + shlex.join(package.packages),)
        steps.append(InstallStep(kind="install", commands=install))
    if package.installer:
        archive = package.installer.rsplit("/", 1)[-1]
        folder = archive.removesuffix(".tar.gz")
        steps.append(
            InstallStep(
                kind="installer",
                commands=(
                    f"cd /tmp && wget {shlex.quote(package.installer)} && "
                    f"tar xzf {shlex.quote(archive)}",
                    f"cd {shlex.quote(folder)} && echo Y | /bin/bash install.sh",
                ),
            )
        )
    if package.plugin_package:
        archive = package.plugin_package.rsplit("/", 1)[-1]
        installer = "dpkg -i" if apt else "rpm -i"
        steps.append(
            InstallStep(
                kind="plugin",
                commands=(
                    f"cd /tmp && wget {shlex.quote(package.plugin_package)} && "
                    f"{installer} {shlex.quote(archive)} && rm -f {shlex.quote(archive)}",
                ),
            )
        )
    return steps


def package_commands(package: PackageSet) -> list[str]:
    """The guide's steps to get the RDMA libraries, one command a line (the vendor's
    NCCL plugin, which a node needs only with its profile's plugin, is left out).

    >>> from hpnet.profiles import get_profile
    >>> package_commands(get_profile("pai-dlc-erdma").packages[0])[0]
    'rm -f /etc/apt/sources.list.d/mellanox_mlnx_ofed.list'
    """
    return [c for step in package_steps(package) if step.kind != "plugin" for c in step.commands]


def install_fix(profile: Profile | None, distro: str | None) -> InstallFix:
    """What to run to get rdma-core's libraries and providers on this node."""
    sets: Sequence[PackageSet] = profile.packages if profile else ()
    if sets:
        where = f"the {profile.name} guide" if profile else ""
        fitting = [p for p in sets if distro is not None and p.covers(distro)]
        if fitting:
            chosen = fitting[0]
            return InstallFix(
                commands="\n".join(package_commands(chosen)),
                note=f"{where}'s steps for {', '.join(chosen.distros)}, as root (or in the "
                "image's Dockerfile)",
            )
        options = "; ".join(
            f"{', '.join(p.distros)}: " + " && ".join(package_commands(p)) for p in sets
        )
        if distro is None:
            note = f"the distribution is not known here; {where} gives steps for {options}"
        else:
            note = f"this node runs {distro}, which {where} does not cover; its steps: {options}"
        return InstallFix(commands=None, note=note)
    generic = {p.manager: _install_line(p) for p in RDMA_CORE}
    manager = package_manager(distro)
    if manager is not None:
        return InstallFix(commands=generic[manager], note=f"rdma-core's packages on {distro}")
    return InstallFix(
        commands=None,
        note="install rdma-core's libraries: Debian/Ubuntu: "
        f"{generic['apt']}; RHEL family: {generic['yum']}",
    )


def _install_line(package: PackageSet) -> str:
    tool = "apt-get" if package.manager == "apt" else "yum"
    return f"{tool} install -y " + shlex.join(package.packages)
