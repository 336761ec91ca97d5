"""``hpnet image dockerfile``: what a profile's image needs, as Dockerfile steps (pure).

The steps are the guide's own (:func:`hpnet.doctor.packages.package_steps` over the
profile's package set for the distribution), made safe to run in a build, and each
says where it comes from: ``guide:`` a vendor guide's step, ``rdma-core:`` the
distribution's own packages where the guide names none, ``hpnet:`` what the guide
assumes and a build needs (``wget`` in a bare base image, no prompts from apt). The
last step runs :func:`hpnet.image.verify_script.verify_script` so that a build that
did not get what the platform needs fails there, not in the first job.

The NCCL variables and the container flags are not part of an image: the platform
sets the variables in the job (``hpnet env``), and the flags are for ``docker run``
(``hpnet image run-flags``).
"""

from __future__ import annotations

import dataclasses
import re
import shlex
import textwrap

from hpnet.distros import Distro
from hpnet.doctor.packages import InstallStep, package_steps
from hpnet.errors import InputError, UsageError
from hpnet.image.verify_script import VerifySpec, verify_script
from hpnet.profiles.model import PackageSet, Profile
from hpnet.profiles.rdma_core import RDMA_CORE, RDMA_CORE_PACKAGING
from hpnet.render.text import escape_controls

__all__ = ["DockerStep", "Dockerfile", "check_image_ref", "choose_package_set", "plan_dockerfile"]

#: a base image reference: registry/name:tag@digest, or a build argument (``${BASE}``).
#: Anything else (spaces, newlines, quotes) would be Dockerfile syntax, not a name.
_IMAGE_REF = re.compile(r"[A-Za-z0-9${}][A-Za-z0-9._/:@${}-]*")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DockerStep:
    """One instruction with the comment lines above it; ``origin`` is ``guide``,
    ``rdma-core`` or ``hpnet`` and ``source`` cites it."""

    instruction: str
    comment: tuple[str, ...]
    origin: str
    source: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Dockerfile:
    profile: str
    base: str | None  # None: a fragment to append
    distro: str
    header: tuple[str, ...]
    steps: tuple[DockerStep, ...]

    def render(self) -> str:
        lines: list[str] = []
        if self.base is not None:
            # heredocs (the verify step) need Dockerfile syntax 1.4; Docker 23+ has it
            lines.append("# syntax=docker/dockerfile:1")
        lines += [f"# {line}" if line else "#" for line in self.header]
        for step in self.steps:
            lines.append("")
            lines += [
                f"# {part}"
                for line in step.comment
                for part in textwrap.wrap(line, width=86, break_on_hyphens=False)
            ]
            lines.append(f"# {step.origin}: {step.source}")
            lines.append(step.instruction)
        return "\n".join(lines) + "\n"


def check_image_ref(base: str) -> str:
    """``base`` if it is an image reference; anything else is a usage error (it would
    be Dockerfile syntax in the FROM line, not a name)."""
    if not _IMAGE_REF.fullmatch(base):
        raise UsageError(
            f"{base[:80]!r} is not an image reference",
            code="bad-image",
            where="--base",
            fix="give a name such as nvidia/cuda:12.4.1-devel-ubuntu22.04",
        )
    return base


def choose_package_set(profile: Profile, distro: Distro) -> tuple[PackageSet, str]:
    """The profile's package set for ``distro`` and its origin (``guide`` or, where the
    guide names no packages, ``rdma-core``); a release the guide does not cover is an
    error that lists those it does."""
    if profile.transport in ("socket", "auto"):
        reason = (
            "the Socket transport needs no RDMA user space"
            if profile.transport == "socket"
            else "auto is decided on a node, and an image is built before it runs on one"
        )
        raise UsageError(
            f"no image steps for profile {profile.name}: {reason}",
            code="image-profile",
            where="--profile",
            fix="name the platform's profile (hpnet profiles), or ib, roce or erdma",
        )
    sets = profile.packages or RDMA_CORE
    for package in sets:
        if package.covers(distro.name):
            return package, "rdma-core" if package.source == RDMA_CORE_PACKAGING else "guide"
    covered = ", ".join(entry for package in sets for entry in package.distros)
    raise InputError(
        f"profile {profile.name} has no install steps for {distro.title} ({distro.name})",
        code="distro-not-covered",
        where="--distro",
        fix=f"build on a release it covers ({covered}); hpnet does not guess another "
        "release's packages",
    )


def plan_dockerfile(
    profile: Profile,
    distro: Distro,
    *,
    base: str | None,
    command_line: str,
    version: str,
) -> Dockerfile:
    """The Dockerfile (``base`` given) or fragment (``base`` None) for ``profile`` on
    ``distro``; ``command_line`` and ``version`` go into its header.

    >>> from hpnet.distros import get_distro
    >>> from hpnet.profiles import get_profile
    >>> plan = plan_dockerfile(get_profile("pai-dlc-erdma"), get_distro("ubuntu22.04"),
    ...     base="nvidia/cuda:12.4.1-devel-ubuntu22.04", command_line="hpnet image ...",
    ...     version="0")
    >>> [s.origin for s in plan.steps]
    ['hpnet', 'hpnet', 'guide', 'hpnet', 'guide', 'guide', 'hpnet']
    """
    if base is not None:
        check_image_ref(base)
    package, origin = choose_package_set(profile, distro)
    cite = package.source.cite() if package.source else profile.title
    steps: list[DockerStep] = []
    if base is not None:
        steps.append(
            DockerStep(
                instruction=f"FROM {base}",
                comment=("the image to extend",),
                origin="hpnet",
                source="--base",
            )
        )
    guide_steps = package_steps(package)
    if package.manager == "apt":
        steps.append(
            DockerStep(
                instruction="ARG DEBIAN_FRONTEND=noninteractive",
                comment=("apt must not stop for questions in a build (udev, tzdata)",),
                origin="hpnet",
                source="a build has no terminal",
            )
        )
    for step in guide_steps:
        if step.kind == "remove":
            steps.append(_remove(step, package, origin, cite))
        elif step.kind == "repository":
            steps.append(_prerequisites(package, "the vendor repository's key and list"))
            what = "add the vendor's package repository"
            if package.manager == "apt" and package.gpg_key:
                what += (
                    " (its key goes to /etc/apt/trusted.gpg.d with gpg --dearmour, as the "
                    "PAI-DLC guide does it; apt-key, which older guides use, is deprecated)"
                )
            steps.append(_run(step, origin, cite, what))
        elif step.kind == "install":
            steps.append(_install(step, package, origin, cite))
        elif step.kind == "installer":
            if not any(s.kind == "repository" for s in guide_steps):
                steps.append(_prerequisites(package, "the vendor's installer"))
            steps.append(
                _run(
                    step,
                    origin,
                    cite,
                    "the vendor's rdma-core installer, as the guide runs it",
                    cleanup=_installer_cleanup(package),
                )
            )
        else:  # plugin
            steps.append(
                _run(step, origin, cite, "the vendor's NCCL net plugin the profile relies on")
            )
    req = profile.requirements
    spec = VerifySpec(
        profile=profile.name,
        providers=profile.providers,
        cuda_min=req.cuda_min,
        nccl_min=req.nccl_min,
        nccl_max=req.nccl_max,
        python=req.python is not None,
        install_hint=f"the install steps above ({', '.join(package.packages)}) did not "
        "provide it: check their output",
    )
    script = verify_script(spec)
    steps.append(
        DockerStep(
            instruction="RUN <<'HPNET_VERIFY'\n" + script + "HPNET_VERIFY",
            comment=(
                "verify: verbs libraries, the provider for the profile's NICs"
                + (f" ({', '.join(profile.providers)})" if profile.providers else "")
                + ", CUDA / NCCL versions; the build fails here if the image lacks them",
            ),
            origin="hpnet",
            source="`hpnet image check` runs the full check (devices, limits) in a container",
        )
    )
    return Dockerfile(
        profile=profile.name,
        base=base,
        distro=distro.name,
        header=_header(
            profile,
            distro,
            base=base,
            command_line=command_line,
            version=version,
            origin=origin,
            cite=cite,
        ),
        steps=tuple(steps),
    )


def _header(
    profile: Profile,
    distro: Distro,
    *,
    base: str | None,
    command_line: str,
    version: str,
    origin: str,
    cite: str,
) -> tuple[str, ...]:
    req = profile.requirements
    wants = [
        f"CUDA >= {req.cuda_min}" if req.cuda_min else "",
        f"NCCL {req.nccl_min}..{req.nccl_max}.x"
        if req.nccl_max
        else (f"NCCL >= {req.nccl_min}" if req.nccl_min else ""),
        f"Python {req.python}" if req.python else "",
    ]
    header = [
        # a line break in an argument would end the comment and start an instruction
        f"Generated by hpnet {version}: {escape_controls(command_line)}",
        f"Profile {profile.name}: {profile.title}, on {distro.title}.",
        f"Packages from: {cite}"
        + (" (the distribution's own rdma-core)" if origin != "guide" else ""),
    ]
    if any(wants):
        header.append(
            "The guide requires " + ", ".join(w for w in wants if w) + ": checked by the last step."
        )
    if base is None:
        header += [
            "A fragment: append it to a Dockerfile (after the framework is installed, so the",
            "version check sees it). Its last step is a heredoc: Docker 23+ (BuildKit), or",
            "'# syntax=docker/dockerfile:1' as the Dockerfile's first line.",
        ]
    header += [
        "Runs as root: if the base image switches USER, add 'USER root' before these steps.",
        f"Not in the image: the NCCL variables (`hpnet env --profile {profile.name}`) and the",
        f"container flags (`hpnet image run-flags --profile {profile.name}`).",
    ]
    return tuple(header)


def _join(commands: list[str] | tuple[str, ...]) -> str:
    return "RUN " + " && \\\n    ".join(commands)


def _run(
    step: InstallStep, origin: str, cite: str, what: str, *, cleanup: tuple[str, ...] = ()
) -> DockerStep:
    return DockerStep(
        instruction=_join([*step.commands, *cleanup]), comment=(what,), origin=origin, source=cite
    )


def _remove(step: InstallStep, package: PackageSet, origin: str, cite: str) -> DockerStep:
    """The guide's removal, made safe in a build: ``rm -f`` (its plain ``rm`` fails
    when the file is absent) and only the packages that are installed (``apt-get
    remove`` of an unknown one fails)."""
    files = [item for item in package.remove_first if item.startswith("/")]
    names = [item for item in package.remove_first if not item.startswith("/")]
    commands = []
    if files:
        commands.append("rm -f " + shlex.join(files))
    if names:
        if package.manager == "apt":
            commands.append(
                "dpkg-query -W -f='${db:Status-Abbrev} ${Package}\\n' "
                + shlex.join(names)
                + " 2>/dev/null | awk '$1 == \"ii\" {print $2}' | xargs -r apt-get remove -y"
            )
        else:
            commands.append(
                "rpm -q --qf '%{NAME}\\n' "
                + shlex.join(names)
                + " 2>/dev/null | grep -v 'not installed' | xargs -r yum remove -y"
            )
    return DockerStep(
        instruction=_join(commands),
        comment=(
            "remove the RDMA libraries the base image may carry (Mellanox OFED's), as the guide "
            "says; packages that depend on them go too: reinstall them after these steps",
        ),
        origin=origin,
        source=cite,
    )


def _prerequisites(package: PackageSet, needs: str) -> DockerStep:
    tools = ["wget", "ca-certificates"] + (["gnupg"] if package.gpg_key else [])
    if package.manager == "apt":
        commands = [
            "apt-get update",
            "apt-get install -y --no-install-recommends " + " ".join(tools),
            "rm -rf /var/lib/apt/lists/*",
        ]
    else:  # yum checks the key itself
        commands = ["yum install -y " + " ".join(tools[:2])]
    return DockerStep(
        instruction=_join(commands),
        comment=(f"the tools the guide's commands use for {needs} (bare base images lack them)",),
        origin="hpnet",
        source="prerequisites of the guide's commands",
    )


def _install(step: InstallStep, package: PackageSet, origin: str, cite: str) -> DockerStep:
    if package.manager == "apt":
        commands = [*step.commands, "rm -rf /var/lib/apt/lists/*"]
    else:
        # the ECS guide refreshes the cache after adding its repository
        commands = (["yum makecache"] if package.repository else []) + [
            *step.commands,
            "yum clean all",
        ]
    return DockerStep(
        instruction=_join(commands),
        comment=(f"the packages the guide installs: {', '.join(package.packages)}",),
        origin=origin,
        source=cite,
    )


def _installer_cleanup(package: PackageSet) -> tuple[str, ...]:
    archive = (package.installer or "").rsplit("/", 1)[-1]
    folder = archive.removesuffix(".tar.gz")
    return ("cd /tmp", f"rm -rf {shlex.quote(folder)} {shlex.quote(archive)}")
