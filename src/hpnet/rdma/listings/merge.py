"""Combine what several listings of one node say of the same devices."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from hpnet.rdma.model import Gid, GidKind, PortState, RdmaDevice, RdmaPort

__all__ = ["merge_devices"]


def merge_devices(listings: Sequence[Sequence[RdmaDevice]]) -> tuple[RdmaDevice, ...]:
    """Merge device by device, port by port, GID by GID.

    A field one listing leaves unknown is taken from another (the first that
    knows it wins); a known port state replaces UNKNOWN; GIDs are matched by
    index, so ``ibv_devinfo -v`` (types) and ``show_gids`` (netdevs) complete each
    other whatever order they are given in.
    """
    merged: dict[str, RdmaDevice] = {}
    for devices in listings:
        for device in devices:
            current = merged.get(device.name)
            merged[device.name] = device if current is None else _merge_device(current, device)
    return tuple(merged.values())


def _fill(a: object, b: object, skip: set[str]) -> dict[str, object]:
    """Fields unknown (None or empty) in ``a`` and known in ``b``."""
    updates: dict[str, object] = {}
    for field in dataclasses.fields(a):  # type: ignore[arg-type]
        if field.name in skip:
            continue
        mine, theirs = getattr(a, field.name), getattr(b, field.name)
        if mine in (None, (), "") and theirs not in (None, (), ""):
            updates[field.name] = theirs
    return updates


def _merge_device(a: RdmaDevice, b: RdmaDevice) -> RdmaDevice:
    updates = _fill(a, b, {"name", "driver", "ports"})
    if a.driver == "unknown" and b.driver != "unknown":
        updates["driver"] = b.driver
    ports = {p.number: p for p in a.ports}
    for port in b.ports:
        ports[port.number] = _merge_port(ports[port.number], port) if port.number in ports else port
    updates["ports"] = tuple(ports[n] for n in sorted(ports))
    return dataclasses.replace(a, **updates)  # type: ignore[arg-type]


def _merge_port(a: RdmaPort, b: RdmaPort) -> RdmaPort:
    updates = _fill(a, b, {"number", "state", "gids"})
    if a.state is PortState.UNKNOWN and b.state is not PortState.UNKNOWN:
        updates["state"] = b.state
    gids = {g.index: g for g in a.gids}
    for gid in b.gids:
        gids[gid.index] = _merge_gid(gids[gid.index], gid) if gid.index in gids else gid
    updates["gids"] = tuple(gids[i] for i in sorted(gids))
    return dataclasses.replace(a, **updates)  # type: ignore[arg-type]


def _merge_gid(a: Gid, b: Gid) -> Gid:
    if a.kind is GidKind.EMPTY:
        return b
    return dataclasses.replace(a, **_fill(a, b, {"index", "gid", "kind"}))  # type: ignore[arg-type]
