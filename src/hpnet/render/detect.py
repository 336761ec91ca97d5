"""Human rendering of a :class:`~hpnet.detect.NodeInventory`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hpnet.rdma.model import GidKind, PortState, RdmaDevice
from hpnet.render.table import format_pairs, format_table
from hpnet.render.text import escaped

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.node.limits import RlimitValue

__all__ = ["render_inventory"]


def render_inventory(inv: NodeInventory) -> str:
    """A compact table per section; empty sections say so in one line. Text read from
    a listing or a recorded tree (a device name, a path) is shown with its control
    characters escaped: a listing cannot drive the terminal."""
    inv = escaped(inv)
    head = f"hpnet detect — {inv.hostname or 'this node' if inv.source == 'live' else inv.source}"
    if inv.context and inv.context.in_container:
        kind = inv.context.runtime or "container"
        head += f" — in a {kind} container" + (
            " (Kubernetes pod)" if inv.context.kubernetes else ""
        )
    sections = [head, _rdma(inv), _gids(inv), _dev_nodes(inv)]
    if "netdevs" not in inv.not_collected:
        sections.append(_netdevs(inv))
    if "gpus" not in inv.not_collected:
        sections.append(_gpus(inv))
    if inv.topology:
        sections.append(_topology(inv))
    if inv.versions is not None:
        sections.append(_versions(inv))
    if inv.limits is not None or inv.gpudirect is not None:
        sections.append(_limits(inv))
    if inv.problems:
        lines = [f"Problems ({len(inv.problems)}): the inventory above is partial"]
        lines += [f"  - {p.what}" + (f" [{p.where}]" if p.where else "") for p in inv.problems]
        sections.append("\n".join(lines))
    if inv.not_collected:
        sections.append("Not collected from this source: " + ", ".join(inv.not_collected))
    return "\n\n".join(s for s in sections if s) + "\n"


def _dev_nodes(inv: NodeInventory) -> str:
    """``ls /dev/infiniband``: which character devices a process here has."""
    nodes = inv.dev_nodes
    if nodes is None:
        return ""
    uverbs = ", ".join(nodes.uverbs) or "none"
    lines = [
        "/dev/infiniband (from the listing)",
        f"  uverbs nodes: {uverbs} (each opens one RDMA device; which one: "
        "/sys/class/infiniband_verbs/uverbsN/ibdev)",
        f"  rdma_cm: {'present' if nodes.has_rdma_cm else 'absent (RDMA-CM users fail)'}",
    ]
    closed = [name for name, mode in nodes.modes if name.startswith("uverbs") and mode[7:9] != "rw"]
    if closed:
        lines.append(f"  not open to every user: {', '.join(closed)}")
    return "\n".join(lines)


def _uverbs(device: RdmaDevice, from_listing: bool) -> str:
    if device.uverbs is None:
        return "-" if from_listing else "none"
    if not device.uverbs.present:
        return f"{device.uverbs.name} MISSING"
    if device.uverbs.accessible is False:
        return f"{device.uverbs.name} no access"
    return device.uverbs.name


def _rdma(inv: NodeInventory) -> str:
    from_listing = inv.source.startswith("listing")
    if not inv.rdma_devices:
        if from_listing:
            return "RDMA devices: none in this listing" + (
                " (it lists /dev/infiniband, not the devices: `ibv_devinfo` shows them)"
                if inv.dev_nodes is not None
                else ""
            )
        return "RDMA devices: none (no sys/class/infiniband entries: NCCL can only use sockets)"
    rows = []
    for device in inv.rdma_devices:
        for port in device.ports or (None,):
            rows.append(
                [
                    device.name,
                    device.driver,
                    port.number if port else None,
                    port.state.value if port else None,
                    port.link_layer if port else None,
                    # a port with no link reports the rate it last had or could have,
                    # not one it runs at (the JSON keeps what the listing said)
                    port.rate if port and port.state is not PortState.DOWN else None,
                    port.netdev if port else None,
                    _roce_gids(port.link_layer, port.routable_roce_v2_gids, shown=bool(port.gids))
                    if port
                    else None,
                    device.pci_address,
                    device.numa_node,
                    device.fw_ver,
                    _uverbs(device, from_listing=from_listing),
                ]
            )
    headers = ["device", "driver", "port", "state", "link", "rate", "netdev", "RoCEv2 GIDs",
               "pci", "numa", "fw", "uverbs"]  # fmt: skip
    table = format_table(headers, rows)
    summary = "" if from_listing else "\n" + _usable_summary(inv.rdma_devices)
    if from_listing:
        from hpnet.nccl.shown import unknown_ports  # noqa: PLC0415 - listings only

        unknown = unknown_ports(inv)
        if unknown:
            summary = "\n  not shown by this listing: " + "; ".join(unknown[:8])
    summary += "".join(f"\n  {said}" for said in _sdr_ethernet(inv.rdma_devices))
    return f"RDMA devices ({len(inv.rdma_devices)})\n{table}{summary}"


def _sdr_ethernet(devices: tuple[RdmaDevice, ...]) -> list[str]:
    """An ACTIVE Ethernet (RoCE) port at 2.5 Gb/s: a RoCE driver reports its Ethernet
    link's speed as an InfiniBand speed and width, and bnxt_re reports 1 GbE, and any
    speed its table lacks, as SDR 1X (``__to_ib_speed_width``: SPEED_1000 and its default
    are IB_SPEED_SDR, IB_WIDTH_1X): not a 2.5 Gb/s fact."""
    return [
        f"{device.name}:{port.number}: 'Rate 2.5' on an Ethernet port is how RDMA drivers "
        "report a 1 GbE link or a speed they cannot map (SDR 1X), far too slow for NCCL "
        f"either way: `ethtool {port.netdev or '<its netdev>'}` gives the link's speed"
        for device in devices
        for port in device.ports
        # a port that is not up reports a rate it is not running at
        if port.link_layer == "Ethernet"
        and port.rate_gbps == 2.5
        and port.state is PortState.ACTIVE
    ]


def _roce_gids(link_layer: str | None, indexes: tuple[int, ...], *, shown: bool) -> str | None:
    """The routable RoCE v2 GID indexes of an Ethernet port; ``none`` says NCCL's
    RoCE v2 default has nothing to use there; ``not shown``: the listing has no table."""
    if link_layer != "Ethernet":
        return None
    if not shown:
        return "not shown"
    return ",".join(str(i) for i in indexes) if indexes else "none"


def _usable_summary(devices: tuple[RdmaDevice, ...]) -> str:
    """How many devices a process here can use, and why the others cannot."""
    verdicts = [d.usable_here for d in devices]
    missing = sum(1 for d in devices if d.uverbs is not None and not d.uverbs.present)
    no_uverbs = sum(1 for d in devices if d.uverbs is None)
    inactive = sum(1 for d in devices if d.ports and not d.active_ports)
    reasons = []
    if missing:
        reasons.append(f"{missing} without their /dev/infiniband/uverbsN node in this container")
    if no_uverbs:
        reasons.append(f"{no_uverbs} without a uverbs device (ib_uverbs not loaded?)")
    if inactive:
        reasons.append(f"{inactive} without an ACTIVE port")
    if None in verdicts:
        candidates = sum(1 for v in verdicts if v is not False)
        line = (
            f"  with an ACTIVE port and a uverbs node: {candidates} of {len(devices)} "
            "(permissions are not known from a recorded tree)"
        )
    else:
        usable = sum(1 for v in verdicts if v)
        line = (
            f"  usable here (an ACTIVE port, an openable uverbs node): {usable} of {len(devices)}"
        )
    return line + ("; " + "; ".join(reasons) if reasons else "")


def _gids(inv: NodeInventory) -> str:
    rows = []
    for device in inv.rdma_devices:
        for port in device.ports:
            for gid in port.gids:
                if gid.kind is GidKind.EMPTY:
                    continue
                rows.append(
                    [
                        device.name,
                        port.number,
                        gid.index,
                        gid.gid,
                        gid.ipv4,
                        gid.type,
                        gid.kind.value,
                        gid.netdev,
                    ]
                )
    if not rows:
        return ""
    table = format_table(["device", "port", "index", "gid", "ipv4", "type", "kind", "netdev"], rows)
    return f"GIDs (non-empty entries)\n{table}"


def _netdevs(inv: NodeInventory) -> str:
    if not inv.netdevs:
        return "Network interfaces: none found"
    rows = []
    for n in inv.netdevs:
        addresses = ", ".join(
            f"{a.address}/{a.prefix_length}" if a.prefix_length is not None else a.address
            for a in n.addresses
        )
        rows.append(
            [
                n.name,
                n.kind.value,
                n.state,
                n.mtu,
                _speed(n.speed_mbps),
                n.master or (",".join(n.slaves) if n.slaves else None),
                n.pci_address,
                addresses or None,
            ]
        )
    table = format_table(
        ["name", "kind", "state", "mtu", "speed", "bond/bridge", "pci", "addresses"], rows
    )
    return f"Network interfaces ({len(inv.netdevs)})\n{table}"


def _speed(mbps: int | None) -> str | None:
    """2500 -> ``2.5 Gb/s``; 100 -> ``100 Mb/s``."""
    if not mbps:
        return None
    return f"{mbps / 1000:g} Gb/s" if mbps >= 1000 else f"{mbps} Mb/s"


def _gpus(inv: NodeInventory) -> str:
    if not inv.gpus:
        return "GPUs: none found" + (" (NVML, nvidia-smi, PCI bus)" if inv.source == "live" else "")
    rows = [
        [
            g.index,
            g.name,
            g.pci_bus_id,
            g.numa_node,
            f"{g.memory_total_mib} MiB" if g.memory_total_mib else None,
        ]
        for g in inv.gpus
    ]
    table = format_table(["gpu", "name", "pci", "numa", "memory"], rows)
    return f"GPUs ({len(inv.gpus)}, from {inv.gpu_source})\n{table}"


def _topology(inv: NodeInventory) -> str:
    nics = list(dict.fromkeys(t.rdma_device for t in inv.topology))
    by_gpu: dict[int, dict[str, str]] = {}
    for entry in inv.topology:
        by_gpu.setdefault(entry.gpu, {})[entry.rdma_device] = entry.relation.value
    rows: list[list[object]] = [
        [f"GPU{gpu}", *(rel.get(nic) for nic in nics)] for gpu, rel in by_gpu.items()
    ]
    table = format_table(["", *nics], rows)
    legend = (
        "  PIX one PCIe switch · PXB several switches · PHB host bridge · "
        "NODE same NUMA node · SYS across NUMA nodes"
    )
    return f"GPU ↔ RDMA NIC (PCIe path, nvidia-smi topo -m terms)\n{table}\n{legend}"


def _versions(inv: NodeInventory) -> str:
    v = inv.versions
    if v is None:
        return ""
    nccl = "; ".join(f"{n.version} ({n.source})" for n in v.nccl) or "not found"
    if v.torch is None:
        torch = "not installed"
    else:
        build = f"CUDA {v.torch.cuda}" if v.torch.cuda else "CPU build"
        torch = f"{v.torch.version} ({build}" + (f", NCCL {v.torch.nccl})" if v.torch.nccl else ")")
    providers = (
        ", ".join(f"{p.name} {'ok' if p.path else 'MISSING'}" for p in v.providers)
        or "no RDMA devices"
    )
    rows: list[tuple[str, object]] = [
        ("NVIDIA driver", v.nvidia_driver or "none"),
        ("CUDA driver", v.cuda_driver or "none"),
        ("NCCL", nccl),
        ("torch", torch),
        ("rdma-core", v.rdma_core or ("unknown" if v.libibverbs.path else "none")),
        ("libibverbs", v.libibverbs.path or "not found"),
        ("librdmacm", v.librdmacm.path or "not found"),
        ("verbs providers", providers),
        ("kernel", v.kernel),
    ]
    return "Versions\n" + format_pairs(rows)


def _size(value: RlimitValue | int | None) -> str:
    if value is None:
        return "unknown"
    if isinstance(value, str):
        return value
    for unit, size in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if value >= size:
            return f"{value / size:.1f}".removesuffix(".0") + f" {unit}"
    return f"{value} B"


def _limits(inv: NodeInventory) -> str:
    rows: list[tuple[str, object]] = []
    if inv.limits is not None:
        lim = inv.limits
        memlock = f"{_size(lim.memlock_soft_bytes)} / {_size(lim.memlock_hard_bytes)}"
        shm = _size(lim.shm_bytes) if lim.shm_bytes is not None else "not mounted"
        rows += [
            ("memlock (soft / hard)", memlock),
            ("open files (soft / hard)", f"{lim.nofile_soft} / {lim.nofile_hard}"),
            ("/dev/shm", shm),
        ]
    if inv.gpudirect is not None:
        g = inv.gpudirect
        module = "nvidia_peermem" if g.nvidia_peermem else "nv_peer_mem" if g.nv_peer_mem else None
        rows.append(("GPUDirect RDMA module", f"{module} loaded" if module else "not loaded"))
        if g.nvidia_open_kernel_module is not None:
            kind = "open" if g.nvidia_open_kernel_module else "proprietary"
            verdict = {True: "possible", False: "not possible", None: "unknown"}[g.dmabuf_possible]
            rows.append(
                (
                    "GPUDirect RDMA via dma-buf",
                    f"{verdict} ({kind} GPU kernel module, kernel {g.kernel_release or 'unknown'})",
                )
            )
    if inv.context is not None:
        c = inv.context
        rows.append(("container", ", ".join(c.evidence) if c.in_container else "none detected"))
    return "Limits and context\n" + format_pairs(rows)
