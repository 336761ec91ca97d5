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

Gathering is :func:`gather_image_facts` (the edge: files under a root, the
environment); each judgement is a pure function of :class:`ImageFacts`.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from hpnet.doctor.checks._util import result
from hpnet.doctor.model import CheckResult, Report, Status
from hpnet.doctor.packages import install_fix
from hpnet.nccl.fill import version_tuple

if TYPE_CHECKING:
    from hpnet.doctor.model import Facts
    from hpnet.node.sysfs import FsRoot

__all__ = [
    "IMAGE_CHECKS",
    "RUN_CHECKS",
    "ImageFacts",
    "Stage",
    "check_image",
    "cuda_toolkit_version",
    "gather_image_facts",
]

Stage = Literal["auto", "build", "run"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Found:
    """A version found in the image and where."""

    version: str
    where: str


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ImageFacts:
    """What the image checks judge: the doctor's facts (profile, node, devices, limits)
    plus what the image carries."""

    doctor: Facts
    stage: Literal["build", "run"]
    libibverbs: str | None
    librdmacm: str | None
    #: provider -> (library path or None, whether its /etc/libibverbs.d/<name>.driver exists)
    providers: Mapping[str, tuple[str | None, bool]]
    #: every provider library installed (``mlx5``, ``erdma``...), whatever the profile
    installed_providers: tuple[str, ...]
    cuda: tuple[Found, ...]
    nccl: tuple[Found, ...]
    #: the NCCL torch's wheel pins: the one a PyTorch job loads, so the one judged
    nccl_pinned: Found | None = None
    #: library path -> why it does not load (the live image only: dlopen'ed here)
    load_errors: Mapping[str, str] = dataclasses.field(default_factory=dict)


def cuda_toolkit_version(text: str, name: str) -> str | None:
    """The toolkit version in ``/usr/local/cuda/version.json`` (CUDA 11.1+) or
    ``version.txt`` (older), whichever ``name`` says ``text`` is.

    >>> cuda_toolkit_version('{"cuda" : {"name" : "CUDA SDK", "version" : "12.4.1"}}',
    ...     "version.json")
    '12.4.1'
    >>> cuda_toolkit_version("CUDA Version 10.2.89\\n", "version.txt")
    '10.2.89'
    """
    if name.endswith(".json"):
        try:
            data = json.loads(text)
        except ValueError:
            return None
        cuda = data.get("cuda") if isinstance(data, dict) else None
        version = cuda.get("version") if isinstance(cuda, dict) else None
        return version if isinstance(version, str) and version_tuple(version) else None
    for line in text.splitlines():
        if line.startswith("CUDA Version "):
            version = line.split()[2]
            return version if version_tuple(version) else None
    return None


def _site_dirs(root: str, python_path: Sequence[str], live: bool) -> list[str]:
    """Where the image's Python keeps packages: this Python's path on the live root,
    else the usual places under the root."""
    if live:
        return [entry for entry in python_path if entry.endswith("-packages")]
    patterns = (
        "usr/lib/python3*/*-packages",
        "usr/local/lib/python3*/*-packages",
        "opt/conda/lib/python3*/site-packages",
        "opt/*/lib/python3*/site-packages",
        "opt/*/.venv/lib/python3*/site-packages",  # glob's * skips dot-directories
    )
    return sorted(p for pattern in patterns for p in glob.glob(os.path.join(root, pattern)))


def gather_image_facts(
    *,
    root: str = "/",
    profile: str | None,
    stage: Stage = "auto",
    environment: Mapping[str, str] | None = None,
    python_path: Sequence[str] | None = None,
) -> ImageFacts:
    """Read the image (and, for the run stage, the node) under ``root``."""
    from hpnet.doctor.gather import gather_facts  # noqa: PLC0415
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415
    from hpnet.node.versions import find_library, find_provider, library_dirs  # noqa: PLC0415

    env = dict(os.environ) if environment is None else dict(environment)
    facts = gather_facts(sysfs_root=root, profile=profile, environment=env)
    fs = FsRoot(root)
    # the loader's directories, and conda's (the verify step of the Dockerfile looks there)
    dirs = (*library_dirs(fs, env), "opt/conda/lib")

    def real(path: str | None) -> str | None:
        """``path`` if it leads to a file (a link to nothing is no library)."""
        return path if path and fs.resolve(path.lstrip("/")) is not None else None

    chosen = facts.profile
    names = chosen.providers if chosen and chosen.providers else ()
    if not names:  # the node's own devices decide, when there are any
        names = tuple(sorted({d.driver for d in facts.inventory.rdma_devices}))
    providers = {
        name: (real(find_provider(fs, dirs, name)), fs.exists(f"etc/libibverbs.d/{name}.driver"))
        for name in names
    }
    installed = sorted(
        {
            entry[3:].split("-rdmav", 1)[0]
            for d in dirs
            for entry in fs.listdir(f"{d}/libibverbs", prefix="lib")
            if "-rdmav" in entry and real(f"/{d}/libibverbs/{entry}")
        }
    )
    libibverbs = real(find_library(fs, dirs, "libibverbs.so.1"))
    sites = _site_dirs(root, sys.path if python_path is None else python_path, fs.is_live)
    cuda, nccl, pinned = _cuda_and_nccl(fs, dirs, sites, env)
    # device nodes, not sysfs, tell a container from a build: `docker build` on an RDMA
    # host sees the host's sys/class/infiniband but gets no /dev/infiniband
    visible = bool(facts.dev_infiniband)
    load_errors = (
        _load_errors([libibverbs, *(path for path, _ in providers.values())])
        if fs.is_live and libibverbs
        else {}
    )
    return ImageFacts(
        doctor=facts,
        stage=("run" if visible else "build") if stage == "auto" else stage,
        libibverbs=libibverbs,
        librdmacm=real(find_library(fs, dirs, "librdmacm.so.1")),
        providers=providers,
        installed_providers=tuple(installed),
        cuda=cuda,
        nccl=nccl,
        nccl_pinned=pinned,
        load_errors=load_errors,
    )


def _cuda_and_nccl(
    fs: FsRoot, dirs: Sequence[str], sites: Sequence[str], env: Mapping[str, str]
) -> tuple[tuple[Found, ...], tuple[Found, ...], Found | None]:
    """The CUDA toolkits and NCCLs the image carries, and the NCCL torch pins."""
    from hpnet.node.versions import (  # noqa: PLC0415
        find_library,
        nccl_from_wheels,
        read_torch,
        soname_version,
    )

    torch = read_torch(sites)
    cuda: list[Found] = []
    for name in ("version.json", "version.txt"):
        text = fs.read(f"usr/local/cuda/{name}")
        version = cuda_toolkit_version(text, name) if text else None
        if version:
            cuda.append(Found(version=version, where=f"/usr/local/cuda/{name}"))
            break
    if fs.is_live and env.get("CUDA_VERSION"):  # NVIDIA's CUDA images set it
        cuda.append(Found(version=env["CUDA_VERSION"], where="CUDA_VERSION"))
    if torch and torch.cuda:
        cuda.append(Found(version=torch.cuda, where=f"torch {torch.version}"))
    nccl: list[Found] = []
    system = find_library(fs, dirs, "libnccl.so.2")
    system_version = soname_version(system) if system else None
    if system and system_version and system_version != "2":
        nccl.append(Found(version=system_version, where=system))
    nccl += [Found(version=w.version, where=w.source) for w in nccl_from_wheels(sites)]
    if fs.is_live and env.get("NCCL_VERSION"):
        nccl.append(Found(version=env["NCCL_VERSION"].split("-")[0], where="NCCL_VERSION"))
    pinned = (
        Found(version=torch.nccl, where=f"torch {torch.version} pins it")
        if torch and torch.nccl
        else None
    )
    return tuple(cuda), tuple(nccl), pinned


def _load_errors(paths: Sequence[str | None]) -> dict[str, str]:
    """Load libibverbs, then each provider, as the dynamic loader would for NCCL: the
    message of each that fails (a dependency missing, say libnl for rdma-core)."""
    import ctypes  # noqa: PLC0415

    errors: dict[str, str] = {}
    for path in paths:
        if path is None:
            continue
        try:
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
        except OSError as exc:
            errors[path] = str(exc)
    return errors


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
