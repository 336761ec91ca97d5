"""What one node brings to round 0 of ``hpnet isolate``: the facts that must agree across
the nodes of one job, flattened to ``key -> value`` so that nodes can be compared key by
key (:meth:`hpnet.isolate.engine.Isolation.drift`).

Keys (each present only when the node's detection says it):

- ``versions.driver``, ``versions.cuda``, ``versions.nccl``, ``versions.rdma-core``,
  ``versions.kernel``;
- ``gpus.count``, ``gpus.model``;
- ``nic.<dev>:<port>.state`` / ``.link-layer`` / ``.rate`` (Gb/s) / ``.mtu`` /
  ``.gid-index`` (NCCL_IB_GID_INDEX when set, else the index NCCL >= 2.21.5 picks
  itself, :func:`hpnet.nccl.rules.auto_gid_choices`);
- ``limits.memlock``, ``limits.nofile``;
- ``gpu.<index>.nic``: the RDMA device closest to GPU ``<index>`` (NVML's numbering)
  on PCIe (what a rail-optimised cluster gives GPU *i*: NIC *i*); the NIC of a rank's
  rail comes from its own GPU's PCI address instead (:func:`closest_nics`,
  hpnet.isolate.run), since CUDA_VISIBLE_DEVICES renumbers GPUs;
- ``env.<NCCL_X>``: every NCCL variable the rank received, secrets as ``<redacted>``
  (:func:`hpnet.cluster.facts.nccl_environment`, which leaves out the variables that
  differ between ranks by design).

A fact no source gave is absent, never guessed: drift is judged on the keys a majority
of nodes report.
"""

from __future__ import annotations

from collections.abc import Mapping

from hpnet.cluster.facts import PER_RANK, job_nccl, nccl_environment
from hpnet.detect import NodeInventory
from hpnet.nccl.rules import auto_gid_choices, usable_ports
from hpnet.node.topology import PcieRelation

__all__ = ["PER_NODE", "closest_nics", "node_facts"]

#: variables that differ between nodes (or ranks) by design, never drift
PER_NODE = frozenset(f"env.{name}" for name in (*PER_RANK, "NCCL_COMM_ID"))

_CLOSENESS = tuple(PcieRelation)  # SELF (closest) ... UNKNOWN


def node_facts(inventory: NodeInventory, environ: Mapping[str, str]) -> dict[str, str]:
    """The node's comparable facts (see the module's docstring)."""
    facts: dict[str, str] = {}
    _versions(inventory, facts)
    if inventory.gpus:
        facts["gpus.count"] = str(len(inventory.gpus))
        names = sorted({g.name for g in inventory.gpus if g.name})
        if names:
            facts["gpus.model"] = ", ".join(names)
    _nics(inventory, environ, facts)
    limits = inventory.limits
    if limits is not None:
        facts["limits.memlock"] = str(limits.memlock_soft_bytes)
        facts["limits.nofile"] = str(limits.nofile_soft)
    for gpu, device in closest_nics(inventory).items():
        facts[f"gpu.{gpu}.nic"] = device
    for name, value in nccl_environment(environ).items():
        facts[f"env.{name}"] = value
    return facts


def _versions(inventory: NodeInventory, facts: dict[str, str]) -> None:
    versions = inventory.versions
    if versions is None:
        return
    found = {
        "versions.driver": versions.nvidia_driver,
        "versions.cuda": versions.cuda_driver,
        "versions.nccl": job_nccl(versions),
        "versions.rdma-core": versions.rdma_core,
        "versions.kernel": versions.kernel,
    }
    facts.update({key: value for key, value in found.items() if value})


def _nics(inventory: NodeInventory, environ: Mapping[str, str], facts: dict[str, str]) -> None:
    ports = [(d, p) for d in inventory.rdma_devices for p in usable_ports(d)]
    chosen = {
        f"{device.name}:{port.number}": index
        for (device, port), index in auto_gid_choices(ports, environ)
    }
    fixed = environ.get("NCCL_IB_GID_INDEX", "").strip()
    for device in inventory.rdma_devices:
        for port in device.ports:
            name = f"{device.name}:{port.number}"
            facts[f"nic.{name}.state"] = port.state.value
            if port.link_layer:
                facts[f"nic.{name}.link-layer"] = port.link_layer
            if port.rate_gbps is not None:
                facts[f"nic.{name}.rate"] = f"{port.rate_gbps:g}"
            if port.active_mtu is not None:
                facts[f"nic.{name}.mtu"] = str(port.active_mtu)
            if port.link_layer == "Ethernet":
                index = fixed if fixed and not fixed.startswith("-") else chosen.get(name)
                if index is not None:
                    facts[f"nic.{name}.gid-index"] = str(index)


def closest_nics(inventory: NodeInventory) -> dict[int, str]:
    """Each GPU's closest RDMA device (fewest PCIe hops among the closest relation);
    a GPU with two equally close devices names neither: the rail is not known."""
    best: dict[int, list[tuple[int, int, str]]] = {}
    for entry in inventory.topology:
        rank = (_CLOSENESS.index(entry.relation), entry.hops if entry.hops is not None else 99)
        best.setdefault(entry.gpu, []).append((*rank, entry.rdma_device))
    rails: dict[int, str] = {}
    for gpu, options in best.items():
        options.sort()
        if options[0][2] and (len(options) == 1 or options[0][:2] != options[1][:2]):
            rails[gpu] = options[0][2]
    return rails
