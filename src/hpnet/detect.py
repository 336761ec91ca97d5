"""``hpnet detect``: the inventory of one node, as one value.

:func:`detect` reads the running system (or a recorded root) through the edges
in :mod:`hpnet.node` and :mod:`hpnet.rdma.sysfs`; :func:`inventory_from_listings`
builds the RDMA part from saved tool output. Both return a
:class:`NodeInventory`, whose JSON form is documented in ``docs/detect-schema.md``.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from hpnet.errors import InputError
from hpnet.node.gpudirect import GpuDirect, read_gpudirect
from hpnet.node.netdevs import Netdev, live_addresses, read_netdevs
from hpnet.node.sysfs import FsRoot
from hpnet.rdma.model import RdmaDevice
from hpnet.rdma.sysfs import read_rdma_devices
from hpnet.result import Problem
from hpnet.runner import Runner, SubprocessRunner

if TYPE_CHECKING:  # modules a run may not need are imported where used: start-up time
    from hpnet.node.context import Context
    from hpnet.node.gpus import Gpu, GpuReport
    from hpnet.node.limits import Limits
    from hpnet.node.topology import PcieRelation
    from hpnet.node.versions import Versions
    from hpnet.rdma.listings.files_ls import DevNodes

__all__ = [
    "SCHEMA_VERSION",
    "DetectOptions",
    "NodeInventory",
    "TopologyEntry",
    "choose_gpu_report",
    "detect",
    "gpu_nic_topology",
    "inventory_from_listings",
]

#: Bumped when a key of the JSON output changes meaning or disappears.
SCHEMA_VERSION = 1


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class TopologyEntry:
    gpu: int
    gpu_bus_id: str
    rdma_device: str
    relation: PcieRelation
    #: PCIe links between the two under one root bus (None across root buses)
    hops: int | None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeInventory:
    schema_version: int
    source: str  # "live", "sysfs-root <dir>" or "listing <files>"
    hostname: str | None
    rdma_devices: tuple[RdmaDevice, ...]
    netdevs: tuple[Netdev, ...]
    gpus: tuple[Gpu, ...]
    gpu_source: str
    topology: tuple[TopologyEntry, ...]
    versions: Versions | None
    limits: Limits | None
    gpudirect: GpuDirect | None
    context: Context | None
    problems: tuple[Problem, ...]
    not_collected: tuple[str, ...] = ()
    #: ``ls /dev/infiniband`` given with --from: the character devices it shows
    dev_nodes: DevNodes | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DetectOptions:
    sysfs_root: str = "/"
    #: False: skip GPUs and the GPU<->NIC topology (`hpnet env` needs neither, and on a
    #: GPU node NVML's start-up costs more than the rest of detection)
    gpus: bool = True
    #: a Python to import torch in and ask for its NCCL (``hpnet detect --torch``);
    #: None: torch's version and NCCL pin are read from its files only
    torch_python: str | None = None
    torch_timeout_seconds: float = 120.0


def gpu_nic_topology(
    gpus: Sequence[Gpu], devices: Sequence[RdmaDevice]
) -> tuple[TopologyEntry, ...]:
    """The PCIe relation of every GPU to every RDMA device (pure)."""
    from hpnet.node.topology import pcie_hops, pcie_relation  # noqa: PLC0415

    return tuple(
        TopologyEntry(
            gpu=gpu.index,
            gpu_bus_id=gpu.pci_bus_id,
            rdma_device=device.name,
            relation=pcie_relation(gpu.pci_path, device.pci_path, gpu.numa_node, device.numa_node),
            hops=pcie_hops(gpu.pci_path, device.pci_path),
        )
        for gpu in gpus
        for device in devices
    )


def _check_root(root: str) -> None:
    if not os.path.isdir(root):
        raise InputError(
            "the sysfs root is not a directory",
            code="sysfs-root-missing",
            where=root,
            fix="pass the directory that contains sys/ (for a live node: /)",
        )
    if not os.path.isdir(os.path.join(root, "sys")):
        raise InputError(
            "the sysfs root has no sys/ directory",
            code="sysfs-root-no-sys",
            where=root,
            fix="pass the directory that contains sys/ (e.g. DIR for DIR/sys/class/infiniband)",
        )


def detect(
    options: DetectOptions,
    *,
    runner: Runner | None = None,
    env: Mapping[str, str],
    python_path: Sequence[str],
) -> NodeInventory:
    """Inventory the node under ``options.sysfs_root``.

    On the live root (``/``) this also asks NVML or nvidia-smi, loads NCCL for its
    version and reads this process's limits; on a recorded root only what the
    tree holds is read, and the rest is listed in ``not_collected``. ``env``
    (``LD_LIBRARY_PATH``, container markers) and ``python_path`` (where NCCL wheels
    and torch are looked for) come from the caller: the library reads no process
    state of its own.

    >>> inv = detect(DetectOptions(sysfs_root="/"), env={}, python_path=[])
    >>> inv.schema_version
    1
    """
    root = os.fspath(options.sysfs_root)
    _check_root(root)
    fs = FsRoot(root)
    runner = runner or SubprocessRunner()
    problems: list[Problem] = []

    devices, rdma_problems = read_rdma_devices(fs)
    problems += rdma_problems
    netdevs = read_netdevs(fs, live_addresses() if fs.is_live else None)
    from hpnet.node.gpus import GpuReport  # noqa: PLC0415

    gpu_report = _read_gpus(fs, runner, problems) if options.gpus else GpuReport(source="none")
    topology = gpu_nic_topology(gpu_report.gpus, devices)
    gpudirect = read_gpudirect(fs)
    skipped: tuple[str, ...] = () if options.gpus else ("gpus", "topology")

    if fs.is_live:
        from hpnet.node.context import read_context  # noqa: PLC0415
        from hpnet.node.limits import read_limits  # noqa: PLC0415
        from hpnet.node.versions import read_versions  # noqa: PLC0415

        versions: Versions | None = read_versions(
            fs,
            env=env,
            python_path=python_path,
            drivers=sorted({d.driver for d in devices}),
            gpu_report=gpu_report,
            gpudirect=gpudirect,
            torch_python=options.torch_python,
            torch_timeout_seconds=options.torch_timeout_seconds,
            runner=runner,
            problems=problems,
        )
        limits: Limits | None = read_limits()
        context: Context | None = read_context(fs, env)
        hostname: str | None = os.uname().nodename
        not_collected: tuple[str, ...] = skipped
        source = "live"
    else:
        versions, limits, context, hostname = None, None, None, None
        not_collected = ("addresses", "versions", "limits", "context", *skipped)
        from hpnet.node.snapshot import TREE_FILES  # noqa: PLC0415

        source = f"sysfs-root {TREE_FILES.get(root, root)}"
    return NodeInventory(
        schema_version=SCHEMA_VERSION,
        source=source,
        hostname=hostname,
        rdma_devices=devices,
        netdevs=netdevs,
        gpus=gpu_report.gpus,
        gpu_source=gpu_report.source,
        topology=topology,
        versions=versions,
        limits=limits,
        gpudirect=gpudirect,
        context=context,
        problems=tuple(problems),
        not_collected=not_collected,
    )


def choose_gpu_report(
    on_bus: GpuReport,
    *,
    driver_loaded: bool,
    nvml: Callable[[], GpuReport],
    nvidia_smi: Callable[[], GpuReport],
) -> tuple[GpuReport, tuple[Problem, ...]]:
    """NVML, else nvidia-smi, else what the PCI bus shows; say why when falling back.

    Without a loaded NVIDIA driver neither NVML nor nvidia-smi can answer, so they
    are not asked; GPUs on the bus then mean the driver is missing.
    """
    if not driver_loaded:
        if on_bus.gpus:
            problem = Problem(
                code="gpu-driver-not-loaded",
                what=f"{len(on_bus.gpus)} NVIDIA GPU(s) on the PCI bus but no NVIDIA driver loaded",
                where="/proc/driver/nvidia/version",
            )
            return on_bus, (problem,)
        return on_bus, ()
    report = nvml()
    if report.source != "none":
        return report, ()
    fallback = nvidia_smi()
    if fallback.source != "none":
        return fallback, ()
    problem = Problem(
        code="gpu-query-failed",
        what=f"the NVIDIA driver is loaded but GPUs could not be listed: {report.error}; "
        f"{fallback.error}",
        where="NVML, nvidia-smi",
    )
    return on_bus, (problem,)


def _read_gpus(fs: FsRoot, runner: Runner, problems: list[Problem]) -> GpuReport:
    from hpnet.node.gpus import (  # noqa: PLC0415
        read_gpus_nvidia_smi,
        read_gpus_nvml,
        read_gpus_sysfs,
    )

    on_bus = read_gpus_sysfs(fs)
    if not fs.is_live:
        return on_bus
    report, found = choose_gpu_report(
        on_bus,
        driver_loaded=fs.exists("proc/driver/nvidia/version") or fs.is_dir("sys/module/nvidia"),
        nvml=lambda: read_gpus_nvml(fs),
        nvidia_smi=lambda: read_gpus_nvidia_smi(fs, runner),
    )
    problems += found
    return report


def inventory_from_listings(listings: Sequence[tuple[str, str]]) -> NodeInventory:
    """The RDMA inventory described by saved tool output (pure).

    ``listings`` holds ``(source_name, text)`` pairs; each is detected and parsed,
    then merged, so ``ibv_devinfo`` plus ``show_gids`` of one node give one view.
    """
    from hpnet.rdma.listings import (  # noqa: PLC0415 - --from only
        DEV_NODES_KIND,
        PARSERS,
        listing_sections,
        merge_devices,
        parse_dev_infiniband,
    )

    parsed = []
    problems: list[Problem] = []
    kinds = []
    dev_nodes = None
    for source, text in listings:
        # every section of a multi-command paste; the ones no tool printed are problems
        sections, unread = listing_sections(text, source=source)
        problems += unread
        kinds.append(f"{source} ({' + '.join(dict.fromkeys(k for k, _ in sections))})")
        for kind, section in sections:
            devices, found = PARSERS[kind](section.splitlines(), source=source)
            parsed.append(devices)
            problems += found
            if kind == DEV_NODES_KIND:
                dev_nodes = parse_dev_infiniband(section.splitlines(), source=source)
    return NodeInventory(
        schema_version=SCHEMA_VERSION,
        source="listing " + ", ".join(kinds),
        hostname=None,
        rdma_devices=merge_devices(parsed),
        netdevs=(),
        gpus=(),
        gpu_source="none",
        topology=(),
        versions=None,
        limits=None,
        gpudirect=None,
        context=None,
        problems=tuple(problems),
        not_collected=("netdevs", "gpus", "topology", "versions", "limits", "context"),
        dev_nodes=dev_nodes,
    )
