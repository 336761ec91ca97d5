"""What each kind of event says about the process that printed it: one function per
kind, in the table :data:`FOLD_KINDS` that :class:`hpnet.ncclog.facts.LogFolder` looks
an event's kind up in. Each function updates the process's
:class:`~hpnet.ncclog.process.ProcessFacts` and nothing else; what a fold needs of the
whole input (signals, warnings and their caps) stays in the folder.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from hpnet.ncclog.lines import Event
from hpnet.ncclog.model import GdrDecision, LogLine, Nic
from hpnet.ncclog.process import MAX_NOTES, ProcessFacts

__all__ = ["FOLD_KINDS", "Fold", "evidence_line"]

Fold = Callable[[ProcessFacts, Event], None]


def evidence_line(event: Event, message: str) -> LogLine:
    """The evidence line of an event: the input line as written (the message when the
    scanner did not locate it)."""
    return LogLine(
        source=event.source,
        line_number=event.line_number,
        text=event.raw or event.text,
        count=event.count,
        message=message,
    )


def _connection(process: ProcessFacts, event: Event) -> None:
    process.connections[event.data] += event.count


def _version(process: ProcessFacts, event: Event) -> None:
    data = event.data
    if process.nccl_version is None:
        process.nccl_version = str(data[0])
        process.cuda_version = str(data[1]) if data[1] else None


def _cuda_driver(process: ProcessFacts, event: Event) -> None:
    process.cuda_driver = str(event.data[0])


def _bootstrap(process: ProcessFacts, event: Event) -> None:
    for interface in event.data:
        process.bootstrap[str(interface)] = None


def _network(process: ProcessFacts, event: Event) -> None:
    process.networks[str(event.data[0])] = None


def _net_list(process: ProcessFacts, event: Event) -> None:
    network, nics, oob = event.data
    listed = tuple(
        Nic(index=i, name=name, port=port, link=link, address=address)
        for i, name, port, link, address in nics  # type: ignore[attr-defined]
    )
    process.nic_lists[str(network)] = listed
    process.listed_whole[str(network)] = None
    if network == "Socket":
        process.socket_interfaces = listed
        return
    process.nics = listed
    if network != "IB":  # a plugin's own list (FastSocket, gIB, ...)
        process.net_plugins.setdefault(str(network), None)
    if oob:
        process.bootstrap.setdefault(f"{oob} (OOB)", None)


def _net_iface(process: ProcessFacts, event: Event) -> None:
    name, address = event.data
    if any(n.name == name for n in process.socket_interfaces):
        return
    nic = Nic(
        index=len(process.socket_interfaces),
        name=str(name),
        address=str(address) if address else None,
    )
    process.socket_interfaces = (*process.socket_interfaces, nic)
    process.nic_lists["Socket"] = process.socket_interfaces


def _net_nic(process: ProcessFacts, event: Event) -> None:
    """2.3: one device a line."""
    network, index, name, port, link = event.data
    listed = process.nic_lists.get(str(network), ())
    if any(n.index == index for n in listed):
        return
    nic = Nic(
        index=int(str(index)),
        name=str(name),
        port=int(str(port)) if port is not None else None,
        link=str(link) if link else None,
    )
    process.nic_lists[str(network)] = (*listed, nic)
    if network != "Socket":
        process.nics = process.nic_lists[str(network)]


def _net_module(process: ProcessFacts, event: Event) -> None:
    process.net_modules.setdefault(str(event.data[0]), None)


def _gin(process: ProcessFacts, event: Event) -> None:
    process.gin[f"{event.data[0]} {event.data[1]}"] = None


def _collnet_device(process: ProcessFacts, event: Event) -> None:
    process.collnet[f"{event.data[0]} on {event.data[1]}"] = None


def _no_device_or_plugin(process: ProcessFacts, event: Event) -> None:
    """``ib-no-device``, ``ib-failed`` and ``plugin``: what the network plugins said."""
    if event.kind != "plugin":
        process.ib_no_device = True
    elif event.data:  # "NET/Plugin: Loaded net plugin X"
        process.net_plugins.setdefault(str(event.data[0]), None)
    notes = process.plugin_notes
    if event.text and event.text not in notes and len(notes) < MAX_NOTES:
        notes[event.text] = evidence_line(event, event.text)


def _env(process: ProcessFacts, event: Event) -> None:
    process.env[str(event.data[0])] = str(event.data[1])


def _gdr(process: ProcessFacts, event: Event) -> None:
    data = event.data
    if data in process.gdr or len(process.gdr) >= MAX_NOTES:
        return
    enabled, distance, level, hca, reason, read = data
    process.gdr[data] = GdrDecision(
        enabled=bool(enabled),
        distance=distance,  # type: ignore[arg-type]
        level=level,  # type: ignore[arg-type]
        hca=hca,  # type: ignore[arg-type]
        reason=reason,  # type: ignore[arg-type]
        read=read,  # type: ignore[arg-type]
        line=evidence_line(event, event.text),
    )


def _provider(process: ProcessFacts, event: Event) -> None:
    name, fabric, count = event.data
    found = int(str(count)) if count is not None else None
    process.providers[(str(name), str(fabric) if fabric else None, found)] = None


def _channels(process: ProcessFacts, event: Event) -> None:
    process.channels = event.data  # type: ignore[assignment]


def _nvls_support(process: ProcessFacts, event: Event) -> None:
    process.nvls_support = bool(event.data[0])


def _nvls(process: ProcessFacts, event: Event) -> None:
    process.nvls = True


def _ring_gdr(process: ProcessFacts, event: Event) -> None:
    process.ring_gdr[int(str(event.data[0]))] = None


#: the fields of a communicator line a membership keeps (the first value said)
_MEMBERSHIP_FIELDS = (
    "rank", "nranks", "cudaDev", "nvmlDev", "busId", "commId", "nNodes", "localRanks",
    "parent", "color", "MNNVL",
)  # fmt: skip


def _comm(process: ProcessFacts, event: Event) -> None:
    what, state, raw = event.data
    # read, never changed here (a reading may be cached and shared by its repeats)
    fields: Mapping[str, str] = raw if isinstance(raw, dict) else {}
    comm = str(fields.get("comm", "?"))
    record = process.membership(comm, fields)
    if "nRanks" in fields:
        fields = dict(fields, nranks=fields["nRanks"])
    if "commHash" in fields and "commId" not in fields:
        fields = dict(fields, commId=fields["commHash"])
    get = record.get
    for name in _MEMBERSHIP_FIELDS:
        value = fields.get(name)
        if value is not None and get(name) is None:
            record[name] = value
    if what == "Init" and state == "COMPLETE":
        record["completed"] = True
    elif what in ("Abort", "Destroy"):
        record["aborted"] = record.get("aborted") or what == "Abort"
        record["closed"] = True
        process.close(comm)


def _trail(process: ProcessFacts, event: Event) -> None:
    code = int(str(event.data[1]))
    if code == 7:  # ncclInProgress is a non-blocking call's "not yet", no failure
        return
    if not process.went_on:
        process.warned = True
    process.trail_codes[code] = None
    trails = process.trails
    if event.text not in trails and len(trails) < MAX_NOTES:
        trails[event.text] = evidence_line(event, event.text)


#: event kind -> what it says of its process (``warn`` and ``notable`` are the
#: folder's own: they count against input-wide caps)
FOLD_KINDS: dict[str, Fold] = {
    "connection": _connection,
    "version": _version,
    "bare-version": _version,
    "cuda-driver": _cuda_driver,
    "bootstrap": _bootstrap,
    "network": _network,
    "net-list": _net_list,
    "net-iface": _net_iface,
    "net-nic": _net_nic,
    "net-module": _net_module,
    "gin": _gin,
    "collnet-device": _collnet_device,
    "ib-no-device": _no_device_or_plugin,
    "ib-failed": _no_device_or_plugin,
    "plugin": _no_device_or_plugin,
    "env": _env,
    "gdr": _gdr,
    "provider": _provider,
    "channels": _channels,
    "nvls-support": _nvls_support,
    "nvls": _nvls,
    "ring-gdr": _ring_gdr,
    "comm": _comm,
    "trail": _trail,
}
