"""Read RDMA devices from sysfs.

Layout (kernel ``Documentation/ABI/stable/sysfs-class-infiniband``)::

    sys/class/infiniband/<dev>/{node_guid,sys_image_guid,fw_ver,hca_type,board_id,node_type}
    sys/class/infiniband/<dev>/device -> the parent (PCI function) device
    sys/class/infiniband/<dev>/ports/<N>/{state,phys_state,link_layer,rate,lid,sm_lid}
    sys/class/infiniband/<dev>/ports/<N>/gids/<I>
    sys/class/infiniband/<dev>/ports/<N>/gid_attrs/{types,ndevs}/<I>
    sys/class/infiniband_verbs/uverbs<K>/ibdev  -> names the device behind /dev/infiniband/uverbs<K>

Missing attributes give a partial device and a :class:`~hpnet.result.Problem`,
never an exception.
"""

from __future__ import annotations

import re
from typing import TypeVar

from hpnet.node.sysfs import BDF_RE, FsRoot, pci_chain
from hpnet.rdma.gid import make_gid
from hpnet.rdma.model import Gid, GidKind, PhysState, PortState, RdmaDevice, RdmaPort, UverbsNode
from hpnet.rdma.providers import provider_for
from hpnet.result import Problem

__all__ = ["parse_rate_gbps", "parse_state", "read_rdma_devices"]

IB_CLASS = "sys/class/infiniband"
VERBS_CLASS = "sys/class/infiniband_verbs"

_STATE_RE = re.compile(r"^\s*(\d+)\s*:\s*(\S.*)?$")
_RATE_RE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*Gb/sec")


def parse_state(text: str) -> tuple[int | None, str]:
    """Split a sysfs state such as ``4: ACTIVE`` into ``(4, "ACTIVE")``."""
    match = _STATE_RE.match(text)
    if not match:
        return None, text.strip()
    return int(match.group(1)), (match.group(2) or "").strip()


def parse_rate_gbps(text: str) -> float | None:
    """``200 Gb/sec (4X HDR)`` -> 200.0; None for text without a rate."""
    match = _RATE_RE.match(text)
    return float(match.group(1)) if match else None


def read_rdma_devices(fs: FsRoot) -> tuple[tuple[RdmaDevice, ...], tuple[Problem, ...]]:
    """Every device under ``sys/class/infiniband``, with the problems met reading it."""
    problems: list[Problem] = []
    uverbs_of = _uverbs_by_device(fs)
    devices = tuple(
        _read_device(fs, name, uverbs_of.get(name), problems) for name in fs.listdir(IB_CLASS)
    )
    return devices, tuple(problems)


def _uverbs_by_device(fs: FsRoot) -> dict[str, str]:
    mapping: dict[str, str] = {}
    for entry in fs.listdir(VERBS_CLASS):
        if not entry.startswith("uverbs"):
            continue  # abi_version
        ibdev = fs.read(f"{VERBS_CLASS}/{entry}/ibdev")
        if ibdev:
            mapping[ibdev] = entry
    return mapping


def _read_device(
    fs: FsRoot, name: str, uverbs_name: str | None, problems: list[Problem]
) -> RdmaDevice:
    base = f"{IB_CLASS}/{name}"
    parent = fs.resolve(f"{base}/device")
    chain = pci_chain(parent) if parent else ()
    pci_address = chain[-1] if chain else None
    kernel_driver = fs.link_name(f"{parent}/driver") if parent else None
    numa_node = None
    netdevs: tuple[str, ...] = ()
    if parent:
        raw_numa = fs.read_int(f"{parent}/numa_node")
        numa_node = raw_numa if raw_numa is not None and raw_numa >= 0 else None
        netdevs = tuple(fs.listdir(f"{parent}/net"))
        if uverbs_name is None:
            found = [u for u in fs.listdir(f"{parent}/infiniband_verbs") if u.startswith("uverbs")]
            uverbs_name = found[0] if found else None
    else:
        # Software devices (rxe, siw) have no parent device; they name their netdev.
        parent_netdev = fs.read(f"{base}/parent")
        netdevs = (parent_netdev,) if parent_netdev else ()
        if parent_netdev is None:
            problems.append(
                Problem(
                    code="rdma-no-parent",
                    what=f"{name} has no parent device: PCI address, NUMA node and GPU "
                    "distance are unknown",
                    where=fs.display(f"{base}/device"),
                )
            )
    uverbs = None
    if uverbs_name is not None:
        dev_rel = f"dev/infiniband/{uverbs_name}"
        present = fs.exists(dev_rel)
        uverbs = UverbsNode(
            name=uverbs_name,
            path="/" + dev_rel,
            present=present,
            accessible=(present and fs.can_open(dev_rel)) if fs.is_live else None,
        )
    else:
        problems.append(
            Problem(
                code="rdma-no-uverbs",
                what=f"{name} has no uverbs device in sysfs (ib_uverbs not loaded?)",
                where=fs.display(VERBS_CLASS),
            )
        )
    ports = tuple(
        _read_port(
            fs,
            name,
            base=f"{base}/ports/{number}",
            number=int(number),
            device_netdevs=netdevs,
            problems=problems,
        )
        for number in fs.listdir(f"{base}/ports")
        if number.isdigit()
    )
    if not ports:
        problems.append(
            Problem(
                code="rdma-no-ports",
                what=f"{name} lists no ports",
                where=fs.display(f"{base}/ports"),
            )
        )
    vendor_id = fs.read(f"{parent}/vendor") if parent and BDF_RE.match(pci_address or "") else None
    part_id = fs.read(f"{parent}/device") if vendor_id else None
    return RdmaDevice(
        name=name,
        driver=provider_for(name, kernel_driver, vendor_id=vendor_id, part_id=part_id),
        kernel_driver=kernel_driver,
        node_guid=fs.read(f"{base}/node_guid"),
        sys_image_guid=fs.read(f"{base}/sys_image_guid"),
        fw_ver=fs.read(f"{base}/fw_ver"),
        hca_type=fs.read(f"{base}/hca_type"),
        board_id=fs.read(f"{base}/board_id"),
        node_type=fs.read(f"{base}/node_type"),
        vendor_id=vendor_id,
        vendor_part_id=part_id,
        pci_address=pci_address,
        pci_path=chain,
        numa_node=numa_node,
        netdevs=netdevs,
        uverbs=uverbs,
        ports=ports,
    )


def _read_port(
    fs: FsRoot,
    device: str,
    *,
    base: str,
    number: int,
    device_netdevs: tuple[str, ...],
    problems: list[Problem],
) -> RdmaPort:
    state = _read_state(fs, f"{base}/state", PortState, f"{device} port {number}", problems)
    phys_state = (
        _read_state(fs, f"{base}/phys_state", PhysState, f"{device} port {number}", problems)
        if fs.exists(f"{base}/phys_state")
        else None
    )
    link_layer = fs.read(f"{base}/link_layer")
    if link_layer is None:
        problems.append(
            Problem(
                code="sysfs-unreadable",
                what=f"{device} port {number}: link_layer is missing",
                where=fs.display(f"{base}/link_layer"),
            )
        )
    rate = fs.read(f"{base}/rate")
    gids = _read_gids(fs, device, number, base, problems)
    return RdmaPort(
        number=number,
        state=state,
        phys_state=phys_state,
        link_layer=link_layer,
        rate=rate,
        rate_gbps=parse_rate_gbps(rate) if rate else None,
        lid=fs.read_int(f"{base}/lid", base=16),
        sm_lid=fs.read_int(f"{base}/sm_lid", base=16),
        netdev=_port_netdev(fs, number, gids, device_netdevs),
        gids=gids,
    )


_State = TypeVar("_State", PortState, PhysState)


def _read_state(
    fs: FsRoot, rel: str, kind: type[_State], what: str, problems: list[Problem]
) -> _State:
    """A ``4: ACTIVE``-style attribute; missing or garbled text is UNKNOWN, and said."""
    name = rel.rsplit("/", 1)[-1]
    text = fs.read(rel)
    code = parse_state(text)[0] if text is not None else None
    if code is None:
        problems.append(
            Problem(
                code="sysfs-unreadable" if text is None else "sysfs-bad-value",
                what=f"{what}: {name} is "
                + ("missing or unreadable" if text is None else f"not a state: {text[:40]!r}")
                + "; reported as UNKNOWN",
                where=fs.display(rel),
            )
        )
        return kind.UNKNOWN
    return kind.from_code(code)


def _read_gids(
    fs: FsRoot, device: str, port: int, base: str, problems: list[Problem]
) -> tuple[Gid, ...]:
    if not fs.is_dir(f"{base}/gids"):
        problems.append(
            Problem(
                code="sysfs-unreadable",
                what=f"{device} port {port}: no GID table",
                where=fs.display(f"{base}/gids"),
            )
        )
        return ()
    gids: list[Gid] = []
    for entry in fs.listdir(f"{base}/gids"):
        if not entry.isdigit():
            continue
        text = fs.read(f"{base}/gids/{entry}")
        if text is None:
            problems.append(
                Problem(
                    code="sysfs-unreadable",
                    what=f"{device} port {port}: GID {entry} cannot be read",
                    where=fs.display(f"{base}/gids/{entry}"),
                )
            )
            continue
        try:
            gid = make_gid(int(entry), text, None, None)
        except ValueError:
            problems.append(
                Problem(
                    code="sysfs-bad-value",
                    what=f"{device} port {port}: GID {entry} is not an address: {text!r}",
                    where=fs.display(f"{base}/gids/{entry}"),
                )
            )
            continue
        if gid.kind is not GidKind.EMPTY:
            # Only non-empty slots have readable attributes (EINVAL otherwise).
            gid = make_gid(
                gid.index,
                gid.gid,
                fs.read(f"{base}/gid_attrs/types/{entry}"),
                fs.read(f"{base}/gid_attrs/ndevs/{entry}"),
            )
        gids.append(gid)
    return tuple(gids)


def _port_netdev(
    fs: FsRoot, number: int, gids: tuple[Gid, ...], device_netdevs: tuple[str, ...]
) -> str | None:
    """The interface of a port: its RoCE GIDs' netdev, else the parent's netdev
    whose ``dev_port`` (0-based) matches, else the only one."""
    for gid in gids:
        if gid.netdev:
            return gid.netdev
    if len(device_netdevs) == 1:
        return device_netdevs[0]
    for netdev in device_netdevs:
        if fs.read_int(f"sys/class/net/{netdev}/dev_port") == number - 1:
            return netdev
    return None
