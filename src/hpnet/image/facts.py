"""What ``hpnet image check`` judges, gathered: the doctor's facts about the node (or
the tree under a root) plus what the image carries: libibverbs, librdmacm, the verbs
providers and their ``.driver`` files, the CUDA toolkits and NCCLs, the NCCL torch
pins, and (on the live image) whether the verbs libraries load.

:func:`gather_image_facts` is the edge (files under a root, the environment); the
judgements in :mod:`hpnet.image.check` are pure functions of :class:`ImageFacts`.
"""

from __future__ import annotations

import dataclasses
import glob
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Literal

from hpnet.nccl.rules import version_tuple

if TYPE_CHECKING:
    from hpnet.doctor.model import Facts
    from hpnet.node.sysfs import FsRoot

__all__ = ["Found", "ImageFacts", "Stage", "cuda_toolkit_version", "gather_image_facts"]

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
