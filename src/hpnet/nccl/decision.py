"""One verdict per node-dependent decision (pure): the model every command renders.

``hpnet env``, ``hpnet doctor`` and ``hpnet check`` each say which RDMA ports NCCL
should open (``NCCL_IB_HCA``), over which transport, with which RoCE GID index and
which socket interface. Each of these is judged once, by :func:`hpnet.nccl.fill.decide`,
into a :class:`Decision`: the value the job runs with now, whether that works, the
value to run with instead, the evidence, what the source does not show (and which
command would), and why. ``env`` renders a decision as its detected layer and
findings, the doctor as a check; neither judges again.

A port is read for exactly what the source shows (:class:`PortView`): usable
(``True``: ACTIVE and openable here; ``False``: shown down, or its device cannot be
opened; ``None``: the source does not show which), its kind (``ib``, ``roce``,
``erdma``, ``efa``, ``unknown`` when the link layer is not shown) and, for an Ethernet
port, whether a routable RoCE v2 GID is known (``None``: the GID table is not shown).
"""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.nccl.rules import good_gid_indexes, port_kind
from hpnet.nccl.shown import unknown_port_notes, uverbs_short
from hpnet.rdma.model import PortState

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.rdma.model import RdmaDevice, RdmaPort

__all__ = [
    "Decision",
    "Judged",
    "NodeDecisions",
    "PortView",
    "device_unknowns",
    "port_views",
]

#: the kinds NCCL's IB transport opens (net_ib init.cc: InfiniBand or Ethernet link layer)
RDMA_KINDS = ("ib", "roce", "erdma")


class Judged(enum.Enum):
    """What a decision says of the value the job runs with now."""

    OK = "ok"  # it works (unset: NCCL's own choice works)
    WARN = "warn"  # it works, worse than the answer
    FAIL = "fail"  # NCCL fails with it, or falls back to sockets
    UNKNOWN = "unknown"  # the source does not show enough to judge it
    NA = "n/a"  # the decision does not arise here (a GID on InfiniBand, ports on sockets)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Decision:
    """One judged variable. ``answer`` is the value to run with (None: unset), known
    when ``answer_known``; ``reason`` says why it is the answer, ``summary`` what is
    right or wrong with ``given``; ``unknown`` lists what the source does not show,
    each with the command that would; ``code`` names what is wrong (``mismatch``,
    ``invalid``...), None when nothing is."""

    variable: str
    given: str | None
    origin: str | None  # profile, user, environment; None when unset
    judged: Judged
    answer: str | None
    summary: str
    reason: str = ""
    answer_known: bool = True
    code: str | None = None
    evidence: tuple[str, ...] = ()
    unknown: tuple[str, ...] = ()
    note: str | None = None

    @property
    def changes(self) -> bool:
        """Following the advice changes the value the job runs with."""
        return self.answer_known and self.answer != self.given

    def as_json(self) -> dict[str, object]:
        return {
            "variable": self.variable,
            "given": self.given,
            "origin": self.origin,
            "status": self.judged.value,
            "answer": self.answer,
            "answer_known": self.answer_known,
            "code": self.code,
            "summary": self.summary,
            "reason": self.reason,
            "evidence": list(self.evidence),
            "unknown": list(self.unknown),
            "note": self.note,
        }

    @property
    def flagged(self) -> bool:
        return self.judged in (Judged.WARN, Judged.FAIL)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeDecisions:
    """The node's four decisions, and the transport word they share (``ib``, ``roce``,
    ``erdma``, ``socket``; ``unknown`` when the source cannot tell)."""

    transport: str
    transport_decision: Decision
    disabled: Decision
    hca: Decision | None
    gid: Decision | None
    ifname: Decision | None

    def as_json(self) -> dict[str, object]:
        """The decisions as JSON (docs/env-schema.md, ``decisions``): the same object in
        ``hpnet env``, ``hpnet doctor`` and ``hpnet check``."""
        found: dict[str, object] = {"transport": self.transport}
        named = {
            "transport_decision": self.transport_decision,
            "ib_disabled": self.disabled,
            "hca": self.hca,
            "gid": self.gid,
            "ifname": self.ifname,
        }
        for key, decision in named.items():
            found[key] = None if decision is None else decision.as_json()
        return found

    def all(self) -> list[Decision]:
        found = [self.transport_decision, self.disabled, self.hca, self.gid, self.ifname]
        return [d for d in found if d is not None]


@dataclasses.dataclass(frozen=True, slots=True)
class PortView:
    """One port as the source shows it (see the module's docstring)."""

    device: RdmaDevice
    port: RdmaPort
    kind: str
    usable: bool | None
    routable: bool | None  # RoCE/eRDMA: a routable RoCE v2 GID; None: not shown or n/a
    unknown: str | None  # what the source does not show about it, with the command

    @property
    def name(self) -> str:
        return f"{self.device.name}:{self.port.number}"

    @property
    def pair(self) -> tuple[RdmaDevice, RdmaPort]:
        return self.device, self.port

    def unsure(self, kinds: Sequence[str] = RDMA_KINDS) -> bool:
        """A port NCCL may open (of ``kinds``, or of a kind not shown) that the source
        does not show enough of: its state or whether it opens here, or, ACTIVE, its
        link layer."""
        if self.usable is None:
            return self.kind in (*kinds, "unknown")
        return self.usable is True and self.kind == "unknown"


def _usable(inventory: NodeInventory, device: RdmaDevice, port: RdmaPort) -> bool | None:
    if device.usable_here is False:
        return False
    shown = port.state is not PortState.UNKNOWN
    if shown and port.state is not PortState.ACTIVE:
        return False
    if device.name.startswith("(") or uverbs_short(inventory) or not shown:
        return None  # a cut-off name, an uverbs node not known to be its, a state not shown
    return True


def port_views(inventory: NodeInventory, family: str) -> list[PortView]:
    """Every port the source shows, read for what it shows (``family``: the family a
    routable RoCE v2 GID must have; a GID whose netdev is not in this network
    namespace does not count: ``ibv_modify_qp`` fails on it with ENODEV)."""
    notes = dict(unknown_port_notes(inventory))
    visible = {n.name for n in inventory.netdevs} if inventory.netdevs else None
    views = []
    for device in inventory.rdma_devices:
        for port in device.ports:
            kind = "efa" if device.driver == "efa" else port_kind(device, port)
            routable = None
            if kind in ("roce", "erdma") and port.gids:
                routable = bool(good_gid_indexes(port, family, visible))
            name = f"{device.name}:{port.number}"
            views.append(
                PortView(
                    device, port, kind, _usable(inventory, device, port), routable, notes.get(name)
                )
            )
    return views


def device_unknowns(inventory: NodeInventory) -> list[str]:
    """What the source leaves unknown about devices as a whole (their ports not shown,
    uverbs nodes without their devices, a name cut off), with the command that tells."""
    return [said for port, said in unknown_port_notes(inventory) if port is None]


def notes(*said: str | None) -> str | None:
    """Notes joined with ``; `` (None and empty ones dropped); None when there are none."""
    kept = [line for line in said if line]
    return "; ".join(kept) if kept else None


def names(views: Sequence[PortView]) -> str:
    return ", ".join(v.name for v in views) or "none"
