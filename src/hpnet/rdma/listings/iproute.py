"""iproute2's ``rdma link [show]`` (``rdma/link.c``).

One line per port: ``link mlx5_0/1 state ACTIVE physical_state LINK_UP netdev
ens1f0`` (iproute2 before 4.19: ``1/1: mlx5_0/1: state ACTIVE …``), then
``key value`` pairs, ``subnet_prefix``/``lid``/``sm_lid``/``lmc`` on InfiniBand ports
only (the kernel's nldev.c gives them for those alone): the only word on the link layer.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from hpnet.rdma.listings._common import Parsed, numbered_lines, parse_int, unrecognised
from hpnet.rdma.model import PhysState, PortState, RdmaDevice, RdmaPort
from hpnet.rdma.providers import provider_for

__all__ = ["RDMA_LINK_LINE", "parse_rdma_link"]

RDMA_LINK_LINE = re.compile(r"^[ \t]*(?:link[ \t]+|\d+/\d+:[ \t]+)(\S+?)/(\d+):?[ \t]+(.*)$")
_PHYS = {
    "SLEEP": PhysState.SLEEP,
    "POLLING": PhysState.POLLING,
    "DISABLED": PhysState.DISABLED,
    "PORT_CONFIGURATION_TRAINING": PhysState.TRAINING,
    "LINK_UP": PhysState.LINK_UP,
    "LINK_ERROR_RECOVERY": PhysState.LINK_ERROR_RECOVERY,
    "PHY_TEST": PhysState.PHY_TEST,
}


def parse_rdma_link(lines: Iterable[str], *, source: str = "<input>") -> Parsed:
    """Parse ``rdma link`` output into devices with their ports."""
    ports: dict[str, list[RdmaPort]] = {}
    for _, line in numbered_lines(lines):
        match = RDMA_LINK_LINE.match(line)
        if not match:
            continue
        tokens = match.group(3).split()
        pairs = dict(zip(tokens[::2], tokens[1::2], strict=False))
        state = pairs.get("state", "")
        netdev = pairs.get("netdev")
        ports.setdefault(match.group(1), []).append(
            RdmaPort(
                number=int(match.group(2)),
                state=PortState(state) if state in PortState.__members__ else PortState.UNKNOWN,
                phys_state=_PHYS.get(pairs.get("physical_state", "")),
                # the link layer is not printed. The kernel gives subnet_prefix, lid,
                # sm_lid and lmc for InfiniBand ports alone (drivers/infiniband/core/
                # nldev.c, fill_port_info: rdma_protocol_ib), so they say InfiniBand;
                # their absence, or a netdev's name, proves nothing (issue 25: no guess)
                link_layer="InfiniBand" if "subnet_prefix" in pairs or "lid" in pairs else None,
                lid=parse_int(pairs.get("lid")),
                sm_lid=parse_int(pairs.get("sm_lid")),
                netdev=netdev,
            )
        )
    if not ports:
        raise unrecognised("`rdma link`", "no 'link <dev>/<port> ...' line", source)
    devices = tuple(
        RdmaDevice(
            name=dev,
            driver=provider_for(dev, None),
            netdevs=tuple(p.netdev for p in port_list if p.netdev),
            ports=tuple(port_list),
        )
        for dev, port_list in ports.items()
    )
    return devices, ()
