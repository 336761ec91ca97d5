"""Platform profiles: what a vendor's guide prescribes, as typed, cited data.

A profile records the NCCL variables a platform sets (or says must not be set),
what a custom image needs, how containers are started, how jobs are launched and
how their environment reaches every rank, and facts about instance types. Every
value carries the :class:`Source` it was taken from, so a reviewer can check it
against the guide.
"""

from __future__ import annotations

import dataclasses
from typing import Literal

__all__ = [
    "BandwidthReference",
    "InstanceType",
    "Launch",
    "PackageSet",
    "Profile",
    "Requirements",
    "Setting",
    "Source",
    "Transport",
]

#: "rdma": InfiniBand or RoCE, whichever the node has (the guide allows both)
Transport = Literal["ib", "roce", "rdma", "erdma", "socket", "auto"]


#: the vendor's public page each guide copy (``shared/seeds/``) was taken from, in
#: English where the vendor publishes one (issue 26: a seed's name is no page a user
#: can open). 001 (Scnet) and 002 (ECS eRDMA with AIACC): no public page was found.
SEED_URLS = {
    # "RDMA: High-performance networks for distributed training" (PAI; the seed is the
    # Japanese translation: /help/ja/pai/user-guide/use-a-custom-image)
    "000_834719b22dbb6842.txt": "https://www.alibabacloud.com/help/en/pai/user-guide/"
    "use-a-custom-image",
    # "Horovod/MPI/MindSpore-GPU" (the seed is the Spanish page: /intl/es-us/...)
    "003_9c2021db6d318afb.txt": "https://support.huaweicloud.com/intl/en-us/docker-modelarts/"
    "docker-modelarts_0125.html",
    # "eRDMA: Use high-performance networks for distributed training" (word for word)
    "004_0b7006ad006b14ad.txt": "https://www.alibabacloud.com/help/en/pai/user-guide/"
    "erdma-distributed-training-with-high-performance-networks",
}


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Source:
    """Where a fact comes from: a vendor page (and the seed copy in shared/seeds); a
    seed's page is its :data:`SEED_URLS` entry unless ``url`` is given."""

    title: str
    url: str | None = None
    seed: str | None = None  # e.g. "004_0b7006ad006b14ad.txt" in shared/seeds/
    section: str | None = None

    def __post_init__(self) -> None:
        if self.url is None and self.seed in SEED_URLS:
            object.__setattr__(self, "url", SEED_URLS[self.seed])

    def cite(self) -> str:
        parts = [self.title]
        if self.section:
            parts.append(f"section {self.section!r}")
        if self.seed:
            parts.append(f"seed {self.seed}")
        if self.url:
            parts.append(self.url)
        return ", ".join(parts)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Setting:
    """One environment variable a profile sets; ``why`` says what the guide says it does."""

    name: str
    value: str
    why: str
    source: Source


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Requirements:
    cuda_min: str | None = None
    nccl_min: str | None = None
    nccl_max: str | None = None  # e.g. the AIACC plugin's supported range ends at 2.16
    python: str | None = None
    notes: tuple[str, ...] = ()
    source: Source | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class PackageSet:
    """RDMA user-space packages for one distribution family."""

    distros: tuple[str, ...]  # "ubuntu22.04", "ubuntu20.04", "centos7", "alinux3", ...
    manager: Literal["apt", "yum"]
    packages: tuple[str, ...]
    repository: str | None = None  # an apt line or a yum repo baseurl
    gpg_key: str | None = None
    remove_first: tuple[str, ...] = ()  # e.g. Mellanox OFED's verbs packages
    installer: str | None = None  # a vendor rdma-core installer (Lingjun's tar.gz)
    #: the name the guide gives the repository's files (``erdma`` -> erdma.list, erdma.gpg)
    repo_name: str = "vendor"
    #: flags the guide passes to the install command (Lingjun's apt-get:
    #: --allow-downgrades --allow-change-held-packages --no-install-recommends)
    install_flags: tuple[str, ...] = ()
    #: a vendor NCCL net plugin package the guide installs (AIACC's rpm / deb)
    plugin_package: str | None = None
    source: Source | None = None

    def covers(self, distro: str) -> bool:
        """Whether this set is for ``distro``: ``ubuntu`` covers ``ubuntu22.04``;
        ``centos7`` covers ``centos7`` and ``centos7.9``.

        >>> PackageSet(distros=("ubuntu",), manager="apt", packages=()).covers("ubuntu22.04")
        True
        """
        return any(
            distro == entry
            or distro.startswith(entry + ".")
            or (entry.isalpha() and distro.startswith(entry))
            for entry in self.distros
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Launch:
    """How the platform starts multi-node jobs and carries their environment."""

    engines: tuple[str, ...]  # "torchrun", "mpirun", "mpijob", "pytorchjob", "dlc"
    mpirun_args: tuple[str, ...] = ()
    forwarded_prefixes: tuple[str, ...] = ()  # worker-0 variables the platform copies
    env_file: bool = False  # the platform forwards through a file, not the launcher
    notes: tuple[str, ...] = ()
    source: Source | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class InstanceType:
    name: str
    rdma_nics: int | None = None
    gpus: int | None = None
    source: Source | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BandwidthReference:
    """A bus bandwidth the guide measured: what ``hpnet bench --profile`` holds a run to."""

    op: str  # nccl-tests' name: all_reduce
    hosts: int
    ranks: int
    size_bytes: int
    busbw_gbps: float
    tool: str  # the command the guide ran
    source: Source

    def describe(self) -> str:
        return (
            f"{self.op} busbw {self.busbw_gbps} GB/s at {self.size_bytes >> 20} MiB on "
            f"{self.hosts} hosts x {self.ranks // self.hosts} GPUs"
        )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Profile:
    """One platform's prescription. ``detect`` names the variables whose right value
    depends on the node (HCA names, GID index, interface) and so are checked
    against ``hpnet detect``; ``not_applicable`` are variables the guide says must
    not be set on this platform."""

    name: str
    title: str
    transport: Transport
    summary: str
    sources: tuple[Source, ...]
    settings: tuple[Setting, ...] = ()
    not_applicable: tuple[str, ...] = ()
    detect: tuple[str, ...] = ("NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_SOCKET_IFNAME")
    requirements: Requirements = dataclasses.field(default_factory=Requirements)
    packages: tuple[PackageSet, ...] = ()
    #: the rdma-core verbs providers the platform's NICs need (``mlx5``, ``erdma``): what
    #: an image for it must carry. Empty: the node's own devices decide.
    providers: tuple[str, ...] = ()
    container_flags: tuple[str, ...] = ()
    launch: Launch | None = None
    instance_types: tuple[InstanceType, ...] = ()
    reference: tuple[str, ...] = ()  # measured figures the guide reports
    bandwidth: tuple[BandwidthReference, ...] = ()  # the same, as data to gate on
    notes: tuple[str, ...] = ()

    def setting(self, name: str) -> Setting | None:
        return next((s for s in self.settings if s.name == name), None)

    @property
    def nccl_settings(self) -> tuple[Setting, ...]:
        return tuple(s for s in self.settings if s.name.startswith("NCCL_"))
