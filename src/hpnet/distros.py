"""Linux distributions an image or a node runs: names, package managers, apt suites.

A distribution is named as os-release's ``ID`` + ``VERSION_ID`` (``ubuntu22.04``,
``centos7``, ``alinux3``), the form the vendor guides and :mod:`hpnet.profiles` use.

>>> package_manager("rocky9.3"), package_manager("ubuntu22.04"), package_manager("arch")
('yum', 'apt', None)
>>> distro_from_image("nvidia/cuda:12.4.1-cudnn-devel-ubuntu22.04")
'ubuntu22.04'
"""

from __future__ import annotations

import dataclasses
import re
from typing import Literal

from hpnet.errors import UsageError

__all__ = ["DISTROS", "FAMILIES", "Distro", "distro_from_image", "get_distro", "package_manager"]

Manager = Literal["apt", "yum"]

#: os-release ``ID``s by package manager
FAMILIES: dict[Manager, tuple[str, ...]] = {
    "apt": ("ubuntu", "debian"),
    "yum": (
        "centos",
        "rhel",
        "rocky",
        "almalinux",
        "alinux",
        "anolis",
        "ol",
        "fedora",
        "opencloudos",
    ),
}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Distro:
    """One distribution release; ``codename`` is the apt suite (``jammy``)."""

    name: str
    title: str
    manager: Manager
    codename: str | None = None


#: the releases ``hpnet image dockerfile --distro`` accepts. Which of them a profile
#: can build for is the profile's business (its guide's package sets).
DISTROS: dict[str, Distro] = {
    d.name: d
    for d in (
        Distro(name="ubuntu18.04", title="Ubuntu 18.04", manager="apt", codename="bionic"),
        Distro(name="ubuntu20.04", title="Ubuntu 20.04", manager="apt", codename="focal"),
        Distro(name="ubuntu22.04", title="Ubuntu 22.04", manager="apt", codename="jammy"),
        Distro(name="ubuntu24.04", title="Ubuntu 24.04", manager="apt", codename="noble"),
        Distro(name="debian11", title="Debian 11", manager="apt", codename="bullseye"),
        Distro(name="debian12", title="Debian 12", manager="apt", codename="bookworm"),
        Distro(name="centos7", title="CentOS 7", manager="yum"),
        Distro(name="centos8", title="CentOS 8", manager="yum"),
        Distro(name="rocky8", title="Rocky Linux 8", manager="yum"),
        Distro(name="rocky9", title="Rocky Linux 9", manager="yum"),
        Distro(name="alinux2", title="Alibaba Cloud Linux 2", manager="yum"),
        Distro(name="alinux3", title="Alibaba Cloud Linux 3", manager="yum"),
    )
}


def package_manager(distro: str | None) -> Manager | None:
    """apt or yum for a distribution name (any release of a known family)."""
    if distro is None:
        return None
    for manager, family in FAMILIES.items():
        if any(distro.startswith(name) for name in family):
            return manager
    return None


def get_distro(name: str, *, where: str = "--distro") -> Distro:
    """The release called ``name``; anything else is a usage error with a did-you-mean."""
    if name in DISTROS:
        return DISTROS[name]
    import difflib  # noqa: PLC0415 - only for a misspelled name

    close = difflib.get_close_matches(name, list(DISTROS), n=1)
    raise UsageError(
        f"unknown distribution {name!r}",
        code="unknown-distro",
        where=where,
        fix=(f"did you mean {close[0]!r}? " if close else "") + "one of: " + ", ".join(DISTROS),
    )


#: tags and names that say which release an image is built on. NVIDIA's CUDA images end
#: their tags in the release (``12.4.1-devel-ubuntu22.04``, ``11.8.0-base-centos7``,
#: ``12.2.0-runtime-rockylinux8``); official images name it as ``ubuntu:22.04``.
_IMAGE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ubuntu[:-]?(\d\d\.\d\d)"), "ubuntu{}"),
    (re.compile(r"debian[:-]?(\d+)"), "debian{}"),
    (re.compile(r"centos[:-]?(\d+)"), "centos{}"),
    (re.compile(r"rockylinux[:-]?(\d+)"), "rocky{}"),
    (re.compile(r"(?:alinux|alibaba-cloud-linux|alibaba_cloud_linux)[:-]?(\d+)"), "alinux{}"),
)


def distro_from_image(image: str) -> str | None:
    """The release an image reference names in its name or tag, if any.

    >>> distro_from_image("ubuntu:jammy"), distro_from_image("centos:7")
    ('ubuntu22.04', 'centos7')
    >>> distro_from_image("nvcr.io/nvidia/pytorch:24.01-py3") is None
    True
    """
    lowered = image.lower()
    for pattern, template in _IMAGE_PATTERNS:
        match = pattern.search(lowered)
        if match:
            name = template.format(match.group(1))
            return name if name in DISTROS else None
    name, _, tag = lowered.rpartition("/")[2].partition(":")
    for distro in DISTROS.values():
        named = distro.codename and (
            tag == distro.codename or tag.startswith(distro.codename + "-")
        )
        if named and distro.name.startswith(name):
            return distro.name
    return None
