"""Which RDMA user-space packages to install, as commands (pure).

A profile's guide says how its images get rdma-core: PAI Lingjun from Alibaba's
installer after a few apt packages (seed 000, "Custom images"), ECS and PAI-DLC eRDMA
from the eRDMA repository, which must be added first (seeds 002 and 004; PAI-DLC also
drops Mellanox OFED's verbs libraries first). The package set is the one for the
node's distribution when os-release names it; otherwise every option is listed. With
no profile, the distribution's own rdma-core packages.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Sequence

from hpnet.profiles.model import PackageSet, Profile

__all__ = ["InstallFix", "distro_from_os_release", "install_fix", "package_commands"]

#: distributions by package manager (os-release ``ID``)
_APT = ("ubuntu", "debian")
_YUM = ("centos", "rhel", "rocky", "almalinux", "alinux", "anolis", "ol", "fedora", "opencloudos")
#: rdma-core as each family packages it (Debian/Ubuntu split it up)
_GENERIC = {
    "apt": "apt-get install -y libibverbs1 ibverbs-providers librdmacm1",
    "yum": "yum install -y rdma-core libibverbs librdmacm",
}


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


def _manager(distro: str | None) -> str | None:
    if distro is None:
        return None
    for manager, family in (("apt", _APT), ("yum", _YUM)):
        if any(distro.startswith(name) for name in family):
            return manager
    return None


def _matches(package: PackageSet, distro: str) -> bool:
    """``ubuntu`` matches ``ubuntu22.04``; ``centos7`` matches ``centos7`` and ``centos7.9``."""
    return any(
        distro == entry
        or distro.startswith(entry + ".")
        or (entry.isalpha() and distro.startswith(entry))
        for entry in package.distros
    )


def package_commands(package: PackageSet) -> list[str]:
    """The guide's steps for one package set, one command a line.

    >>> from hpnet.profiles import get_profile
    >>> package_commands(get_profile("pai-dlc-erdma").packages[0])[0]
    'rm -f /etc/apt/sources.list.d/mellanox_mlnx_ofed.list'
    """
    apt = package.manager == "apt"
    commands: list[str] = []
    files = [item for item in package.remove_first if item.startswith("/")]
    removed = [item for item in package.remove_first if not item.startswith("/")]
    if files:
        commands.append("rm -f " + shlex.join(files))
    if removed:
        commands.append(("apt-get remove -y " if apt else "yum remove -y ") + shlex.join(removed))
    if package.repository:
        name = package.repo_name
        if apt:
            if package.gpg_key:
                commands.append(
                    f"wget -qO - {shlex.quote(package.gpg_key)} | gpg --dearmour -o "
                    f"/etc/apt/trusted.gpg.d/{name}.gpg"
                )
            commands.append(
                f"echo {shlex.quote(package.repository)} | tee /etc/apt/sources.list.d/{name}.list"
            )
        else:
            repo = f"[{name}]\\nname={name}\\nbaseurl={package.repository}\\nenabled=1\\n" + (
                f"gpgcheck=1\\ngpgkey={package.gpg_key}\\n" if package.gpg_key else "gpgcheck=0\\n"
            )
            commands.append(f"printf {shlex.quote(repo)} | tee /etc/yum.repos.d/{name}.repo")
    if package.packages:
        if apt:
            commands.append("apt-get update")
            flags = " ".join(("-y", *package.install_flags))
            commands.append(f"apt-get install {flags} " + shlex.join(package.packages))
        else:
            commands.append("yum install -y " + shlex.join(package.packages))
    if package.installer:
        archive = package.installer.rsplit("/", 1)[-1]
        folder = archive.removesuffix(".tar.gz")
        commands += [
            f"cd /tmp && wget {shlex.quote(package.installer)} && tar xzf {shlex.quote(archive)}",
            f"cd {shlex.quote(folder)} && echo Y | /bin/bash install.sh",
        ]
    return commands


def install_fix(profile: Profile | None, distro: str | None) -> InstallFix:
    """What to run to get rdma-core's libraries and providers on this node."""
    sets: Sequence[PackageSet] = profile.packages if profile else ()
    if sets:
        where = f"the {profile.name} guide" if profile else ""
        fitting = [p for p in sets if distro is not None and _matches(p, distro)]
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
    manager = _manager(distro)
    if manager is not None:
        return InstallFix(commands=_GENERIC[manager], note=f"rdma-core's packages on {distro}")
    return InstallFix(
        commands=None,
        note="install rdma-core's libraries: Debian/Ubuntu: "
        f"{_GENERIC['apt']}; RHEL family: {_GENERIC['yum']}",
    )
