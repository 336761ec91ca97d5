"""``hpnet image check``: does this image (or the container it runs in) have what the
profile's network needs?

Two stages. **build**: what an image carries, judged without any device (in its own
build pipeline): libibverbs, the verbs provider for the profile's NICs with its
``.driver`` file, librdmacm, and the CUDA and NCCL versions it ships against the
profile's range. **run**: in a container on a node, also what ``docker run`` or the pod
gave it: an RDMA device at all, the ``uverbs`` and ``rdma_cm`` nodes, memlock,
``/dev/shm`` and the port states (the doctor's checks of those). ``auto`` is ``run``
where ``/dev/infiniband`` is visible, else ``build`` (a ``docker build`` on an RDMA
host sees the host's ``sys/class/infiniband`` but no device nodes).

Gathering is :func:`hpnet.image.facts.gather_image_facts` (the edge: files under a
root, the environment); each judgement here is a pure function of :class:`ImageFacts`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence

from hpnet.doctor.checks._util import result
from hpnet.doctor.model import CheckResult, Report
from hpnet.doctor.packages import install_fix
from hpnet.image.facts import Found, ImageFacts, Stage, cuda_toolkit_version, gather_image_facts
from hpnet.nccl.rules import version_tuple
from hpnet.result import Status

__all__ = [
    "IMAGE_CHECKS",
    "RUN_CHECKS",
    "ImageFacts",
    "Stage",
    "check_image",
    "cuda_toolkit_version",
    "gather_image_facts",
]


# ------------------------------------------------------------------ judgements


def _missing(facts: ImageFacts, check_id: str, status: Status, summary: str) -> CheckResult:
    found = install_fix(facts.doctor.profile, facts.doctor.distro)
    note = found.note
    if facts.stage == "build":
        note = f"{note}; `hpnet image dockerfile` writes these steps for a Dockerfile"
    return result(check_id, "image", status, summary, fix=found.commands, fix_note=note)


def _needs_rdma(facts: ImageFacts) -> bool:
    profile = facts.doctor.profile
    return profile is None or profile.transport != "socket"


def _library(
    facts: ImageFacts, name: str, path: str | None, *, status: Status, missing: str
) -> CheckResult:
    """A verbs library: PASS where it is, else ``status`` with the install steps."""
    check_id = f"image.{name}"
    if not _needs_rdma(facts):
        return result(check_id, "image", Status.SKIP, "the profile uses sockets")
    if path is None:
        return _missing(facts, check_id, status, f"{name} is not in the image: {missing}")
    if path in facts.load_errors:
        failed = _missing(
            facts,
            check_id,
            status,
            f"{name} at {path} does not load: libraries it needs are missing",
        )
        return dataclasses.replace(failed, evidence=(facts.load_errors[path],))
    return result(check_id, "image", Status.PASS, f"{name} at {path}")


def check_libibverbs(facts: ImageFacts) -> CheckResult:
    return _library(
        facts,
        "libibverbs",
        facts.libibverbs,
        status=Status.FAIL,
        missing="NCCL cannot use RDMA ('NET/IB : Failed to open libibverbs.so')",
    )


def check_librdmacm(facts: ImageFacts) -> CheckResult:
    return _library(
        facts,
        "librdmacm",
        facts.librdmacm,
        status=Status.WARN,
        missing="the guides install it; RDMA CM tools and some plugins need it",
    )


def check_providers(facts: ImageFacts) -> CheckResult:
    if not _needs_rdma(facts):
        return result("image.providers", "image", Status.SKIP, "the profile uses sockets")
    if not facts.providers:  # the profile names none, no device is visible: any provider
        if facts.installed_providers:
            return result(
                "image.providers",
                "image",
                Status.PASS,
                "verbs providers installed: " + ", ".join(facts.installed_providers),
                "the profile names no NIC family; run in the container on the node to check "
                "its devices' providers",
            )
        return _missing(
            facts,
            "image.providers",
            Status.FAIL,
            "no verbs provider is installed: libibverbs will list no device "
            "('NET/IB : No device found')",
        )
    missing = [name for name, (path, _) in facts.providers.items() if path is None]
    unlisted = [name for name, (path, listed) in facts.providers.items() if path and not listed]
    broken = [
        name for name, (path, _) in facts.providers.items() if path and path in facts.load_errors
    ]
    evidence = [
        f"{name}: {path or 'no lib' + name + '-rdmav*.so'}; "
        f"/etc/libibverbs.d/{name}.driver {'present' if listed else 'missing'}"
        for name, (path, listed) in facts.providers.items()
    ]
    evidence += [f"{facts.providers[name][0]}: {facts.load_errors[str(facts.providers[name][0])]}"
                 for name in broken]  # fmt: skip
    if missing or unlisted or broken:
        what = []
        if missing:
            what.append(f"no verbs provider for {', '.join(missing)}")
        if unlisted:
            what.append(f"no .driver file for {', '.join(unlisted)} (libibverbs skips it)")
        if broken:
            what.append(f"the {', '.join(broken)} provider does not load")
        failed = _missing(
            facts,
            "image.providers",
            Status.FAIL,
            "; ".join(what) + ": libibverbs will list no such device ('NET/IB : No device found')",
        )
        return dataclasses.replace(failed, evidence=tuple(evidence))
    return result(
        "image.providers",
        "image",
        Status.PASS,
        "verbs providers: " + ", ".join(facts.providers),
        *evidence,
    )


def _judge_versions(
    check_id: str,
    what: str,
    found: Sequence[Found],
    *,
    low: str | None,
    high: str | None,
    profile: str,
    decisive: Found | None = None,
) -> CheckResult:
    """One of ``found`` in [low, high.x] passes; ``decisive`` (the NCCL PyTorch loads),
    where there is one, is the only one judged and the others are evidence."""
    if decisive is not None and not found:
        found = [decisive]
    if not (low or high):
        whose = f"{profile} states" if profile else "no --profile:"
        return result(check_id, "image", Status.SKIP, f"{whose} no {what} requirement")
    want = f"{low} to {high}.x" if high else f"{low} or later"
    evidence = [f"{f.version} ({f.where})" for f in found]
    if not found:
        return result(
            check_id,
            "image",
            Status.WARN,
            f"no {what} found in the image: {profile} needs {what} {want}",
            fix_note=f"install the framework (or use a base image) that brings {what} {want}",
        )

    def fits(version: str) -> bool:
        have = version_tuple(version) or ()
        if low and have < (version_tuple(low) or ()):
            return False
        return not (high and have[:2] > (version_tuple(high) or ())[:2])

    if decisive is not None:
        others = [f"also in the image: {e}" for e in evidence]
        if fits(decisive.version):
            return result(
                check_id,
                "image",
                Status.PASS,
                f"{what} {decisive.version} ({decisive.where}): {want} required",
                *others,
            )
        return result(
            check_id,
            "image",
            Status.FAIL,
            f"{what} {decisive.version} ({decisive.where}) is outside {want}, which {profile} "
            "requires",
            *others,
            fix_note=f"install a PyTorch build whose NCCL is {want} "
            "(or pin nvidia-nccl-cu* to one)",
        )
    if any(fits(f.version) for f in found):
        good = next(f for f in found if fits(f.version))
        return result(
            check_id,
            "image",
            Status.PASS,
            f"{what} {good.version} ({good.where}): {want} required",
            *evidence,
        )
    return result(
        check_id,
        "image",
        Status.FAIL,
        f"{what} in the image is outside {want}, which {profile} requires",
        *evidence,
        fix_note=f"use a base image or framework build with {what} {want}",
    )


def check_cuda(facts: ImageFacts) -> CheckResult:
    profile = facts.doctor.profile
    req = profile.requirements if profile else None
    return _judge_versions(
        "image.cuda",
        "CUDA",
        facts.cuda,
        low=req.cuda_min if req else None,
        high=None,
        profile=profile.name if profile else "",
    )


def check_nccl(facts: ImageFacts) -> CheckResult:
    profile = facts.doctor.profile
    req = profile.requirements if profile else None
    return _judge_versions(
        "image.nccl",
        "NCCL",
        facts.nccl,
        low=req.nccl_min if req else None,
        high=req.nccl_max if req else None,
        profile=profile.name if profile else "",
        decisive=facts.nccl_pinned,
    )


def check_devices_visible(facts: ImageFacts) -> CheckResult:
    """In a container, a profile that needs RDMA needs some RDMA device to be visible."""
    if not _needs_rdma(facts):
        return result("image.devices", "devices", Status.SKIP, "the profile uses sockets")
    inventory = facts.doctor.inventory
    if inventory.rdma_devices:
        names = ", ".join(d.name for d in inventory.rdma_devices)
        return result("image.devices", "devices", Status.PASS, f"RDMA devices visible: {names}")
    profile = facts.doctor.profile
    name = profile.name if profile else "auto"
    return result(
        "image.devices",
        "devices",
        Status.FAIL,
        "no RDMA device is visible in this container: NCCL will fall back to sockets",
        fix_note="start the container with the node's RDMA devices: `hpnet image run-flags "
        f"--profile {name}` on the node prints the docker run flags and pod settings",
    )


ImageCheck = Callable[[ImageFacts], CheckResult]

#: what an image carries, judged in every stage
IMAGE_CHECKS: dict[str, ImageCheck] = {
    "image.libibverbs": check_libibverbs,
    "image.providers": check_providers,
    "image.librdmacm": check_librdmacm,
    "image.cuda": check_cuda,
    "image.nccl": check_nccl,
}
#: the doctor's checks of what a container was given (run stage only)
RUN_CHECKS: tuple[str, ...] = (
    "devices.uverbs",
    "devices.rdma_cm",
    "limits.memlock",
    "limits.shm",
    "ports.state",
)


def check_image(facts: ImageFacts) -> Report:
    """The image checks, and in the run stage the container's (pure)."""
    from hpnet.doctor.registry import CHECKS  # noqa: PLC0415

    checks = [check(facts) for check in IMAGE_CHECKS.values()]
    if facts.stage == "run" and _needs_rdma(facts):
        checks.append(check_devices_visible(facts))
        checks += [CHECKS[check_id](facts.doctor) for check_id in RUN_CHECKS]
    inventory = facts.doctor.inventory
    return Report(
        node=inventory.hostname or inventory.source,
        profile=facts.doctor.profile.name if facts.doctor.profile else None,
        variables_source=facts.doctor.variables_source,
        checks=tuple(checks),
    )
