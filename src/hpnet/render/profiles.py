"""Human rendering of platform profiles."""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from hpnet.profiles.model import PackageSet, Profile
from hpnet.render.table import format_pairs, format_table

__all__ = ["render_list", "render_profile", "shell_word"]

#: characters a shell word may hold unquoted; ``$`` and braces too, so that the
#: platform's ${VARIABLES} stay expandable
_PLAIN = re.compile(r"[A-Za-z0-9_@%+=:,./${}^-]+")


def shell_word(arg: str) -> str:
    """One argument as a guide writes it in a shell command: as is when plain, in
    double quotes when it holds spaces but should still expand ``${VAR}`` (the
    ModelArts guide's ``-mca plm_rsh_args "-p ${SSHD_PORT}"``), else single-quoted.

    >>> shell_word("-p ${SSHD_PORT}"), shell_word("^openib")
    ('"-p ${SSHD_PORT}"', '^openib')
    """
    if _PLAIN.fullmatch(arg):
        return arg
    if not any(c in arg for c in '"\\`') and "$(" not in arg:
        return f'"{arg}"'
    return shlex.quote(arg)


def render_list(profiles: Sequence[Profile]) -> str:
    rows = [[p.name, p.transport, p.title] for p in profiles]
    return (
        format_table(["profile", "transport", "title"], rows)
        + "\n\n`hpnet profiles show NAME` shows one; `hpnet env --profile NAME` applies it.\n"
    )


def _requirements(profile: Profile) -> list[tuple[str, object]]:
    """The image requirements of a profile: CUDA, NCCL, Python, verbs providers, notes."""
    req = profile.requirements
    pairs: list[tuple[str, object]] = []
    if req.cuda_min:
        pairs.append(("CUDA", f">= {req.cuda_min}"))
    if req.nccl_min or req.nccl_max:
        span = f">= {req.nccl_min}" if req.nccl_min else ""
        span += (" and " if span and req.nccl_max else "") + (
            f"<= {req.nccl_max}.x" if req.nccl_max else ""
        )
        pairs.append(("NCCL", span))
    if req.python:
        pairs.append(("Python", req.python))
    if profile.providers:
        pairs.append(("verbs providers", ", ".join(profile.providers)))
    pairs += [("note", note) for note in req.notes]
    return pairs


def _package_detail(package: PackageSet) -> list[tuple[str, object]]:
    """How one distribution's packages are installed."""
    detail: list[tuple[str, object]] = [("install", " ".join(package.packages))]
    if package.install_flags:
        detail.append(("install flags", " ".join(package.install_flags)))
    if package.remove_first:
        detail.append(("remove first", " ".join(package.remove_first)))
    if package.repository:
        detail.append(("repository", package.repository))
    if package.installer:
        detail.append(("installer", package.installer))
    if package.plugin_package:
        detail.append(("NCCL plugin", package.plugin_package))
    return detail


def render_profile(profile: Profile) -> str:
    lines = [f"{profile.name} — {profile.title}", f"  {profile.summary}", ""]
    if profile.settings:
        lines.append("Variables")
        rows = [[s.name, s.value, s.why] for s in profile.settings]
        lines.append(format_table(["name", "value", "why (the guide's words)"], rows))
    if profile.not_applicable:
        lines.append("  not applicable here: " + ", ".join(profile.not_applicable))
    if profile.detect:
        lines.append("  checked against the node: " + ", ".join(profile.detect))
    pairs = _requirements(profile)
    if pairs:
        lines += ["", "Image requirements", format_pairs(pairs)]
    for package in profile.packages:
        lines += ["", f"Packages ({', '.join(package.distros)}, {package.manager})"]
        lines.append(format_pairs(_package_detail(package)))
    if profile.container_flags:
        lines += ["", "Container flags", "  " + " ".join(profile.container_flags)]
    if profile.launch:
        launch = profile.launch
        lines += ["", f"Launch ({', '.join(launch.engines)})"]
        if launch.mpirun_args:
            lines.append("  mpirun " + " ".join(shell_word(a) for a in launch.mpirun_args))
        if launch.forwarded_prefixes:
            lines.append("  forwarded from worker-0: " + ", ".join(launch.forwarded_prefixes))
        lines += [f"  {note}" for note in launch.notes]
    if profile.instance_types:
        lines += ["", "Instance types"]
        types: list[list[object]] = [[i.name, i.rdma_nics, i.gpus] for i in profile.instance_types]
        lines.append(format_table(["type", "RDMA NICs", "GPUs"], types))
    if profile.reference:
        lines += ["", "Reference figures from the guide"] + [f"  {r}" for r in profile.reference]
    lines += [f"  note: {n}" for n in profile.notes]
    lines += ["", "Sources"] + [f"  {s.cite()}" for s in profile.sources]
    return "\n".join(lines) + "\n"
