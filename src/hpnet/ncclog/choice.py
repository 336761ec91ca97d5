"""What NCCL chose in each process: the network module and the NICs it listed for it.

A log states this long before any connection line proves traffic (and init-only or
failed logs never reach a connection line), so it is reported on its own, with the
lines that say it:

* the module: ``Using network IB`` (2.3, 2.6.4+), ``Assigned NET plugin IB to comm``
  (2.27.3+); NCCL 2.4-2.5 print neither, so there the module is read from what they
  do print: a ``NET/IB : Using [0]...`` list with devices means IB, ``NET/IB : No device
  found.`` means the Socket fallback (init.cc ``initNet`` @2.4.8 tries IB, then Socket);
* the NICs: the list of that module (``NET/IB : Using [0]mlx5_0:1/RoCE``, ``NET/Socket
  : Using [0]eth0:10.0.0.1<0>``, a plugin's own ``NET/<name> : Using ...``), or for the
  IB plugins built on NCCL's IB code (``IBext_v8``, ``gIB``) the ``NET/IB`` list they
  print; aws-ofi-nccl's ``Selected Provider is efa (found 16 nics)``;
* failing all of those, topo.cc's ``NET/Socket : GPU Direct RDMA Disabled for HCA 1
  'lan3'`` (2.14+), printed for each device of the communicator's network, names it.

Pure functions over :class:`~hpnet.ncclog.model.ProcessLog`.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

from hpnet.ncclog.model import LogLine, Nic, ProcessLog

__all__ = ["Choice", "choice_of", "describe_nic", "summarize"]

#: a completion error names the module that carried the traffic and, from 2.20, the
#: local HCA: "NET/IB: Got completion from peer %s with status=%d ... hca %s"
#: NCCL found no network module it was allowed to use (NCCL_NET named one that is not
#: there): nothing was chosen, Socket included (plugin/net.cc ncclNetInit, net.cc)
_NO_MODULE = re.compile(r"Failed to initialize any NET plugin|Error: network \S+ not found")
_COMPLETION = re.compile(r"\bNET/(\w+) ?: Got completion")
_HCA = re.compile(r"\bhca (\S+)")
_ASYNC = re.compile(r"\bNET/\w+ ?: ([^\s:]+):(\d+) Got async event")
#: a return-code trail through NCCL's IB or Socket transport (transport/net_ib.cc,
#: transport/net_ib/*.cc from 2.29, transport/net_socket.cc; .cu up to 2.4)
_TRAIL_MODULE = re.compile(r"^transport/(net_ib|net_socket)(?:\.c[cu]|/)")
#: topo.cc's line for each device of the communicator's network (2.14+: ncclNet->name,
#: 2.28: the network's name, "NET/%s : GPU Direct RDMA %s for HCA %d '%s'"): the module
#: NCCL uses and its devices' names. net_ib.cc's own probe (2.4-2.13: "... for HCA %d
#: '%s' (no module)") is the IB module's, whether or not it is used, and is not read so.
_GDR_MODULE = re.compile(
    r"^NET/(IB|Socket) : GPU Direct RDMA (?:Enabled|Disabled) for HCA \d+ '[^']*'$"
)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Choice:
    """The network module a process chose and the NICs listed for it."""

    network: str  # "IB", "Socket", "IBext_v8", "AWS Libfabric", ...
    #: how the module is known when no line names it: ``its NIC lists`` (NCCL 2.4-2.5
    #: print no "Using network"), ``its completion errors``; None when a line names it
    inferred: str | None
    nics: tuple[str, ...]  # "mlx5_4:1 (RoCE)", "eth0 (10.0.0.5)", "efa (16 NICs)"
    #: the lines that say it, in input order
    lines: tuple[LogLine, ...]
    #: device-side networking plugins (2.28+): ``GIN GIN_IB_GDAKI``
    gin: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """``NET/IB`` — the transport label the connection lines would print."""
        return f"NET/{self.network}"

    def sentence(self) -> str:
        """``NET/IB over mlx5_4:1 (RoCE), mlx5_5:1 (RoCE)``."""
        text = self.label
        if self.nics:
            shown = list(self.nics[:6])
            if len(self.nics) > 6:
                shown.append(f"{len(self.nics) - 6} more")
            text += " over " + ", ".join(shown)
        if self.gin:
            text += " (" + ", ".join(self.gin) + ")"
        return text


def describe_nic(nic: Nic) -> str:
    """``mlx5_4:1 (RoCE)``, ``eth0 (10.0.0.5)``, ``mlx5_0:1`` (no link layer printed).

    >>> describe_nic(Nic(index=0, name="mlx5_4", port=1, link="RoCE"))
    'mlx5_4:1 (RoCE)'
    >>> describe_nic(Nic(index=0, name="eth0", address="10.0.0.5<0>"))
    'eth0 (10.0.0.5)'
    """
    name = f"{nic.name}:{nic.port}" if nic.port is not None else nic.name
    if nic.link:
        return f"{name} ({nic.link})"
    if nic.address:
        return f"{name} ({nic.address.split('<', 1)[0]})"
    return name


def _list_for(process: ProcessLog, network: str) -> tuple[str, tuple[Nic, ...]] | None:
    lists = dict(process.nic_lists)
    if network in lists:
        return network, lists[network]
    # NCCL's IB code in a plugin (nccl-rdma-sharp-plugins' IBext, gIB) prints "NET/IB"
    if "IB" in network.upper() and "IB" in lists:
        return "IB", lists["IB"]
    return None


#: aws-ofi-nccl gave up after finding its provider (nccl_net_ofi_create_plugin:
#: "NET/OFI aws-ofi-nccl initialization failed"), or NCCL's own word that a plugin's
#: init failed (plugin/net.cc: "Failed to initialize NET plugin"), or that none did
#: ("Failed to initialize any NET plugin")
_PLUGIN_FAILED = re.compile(
    r"NET/OFI aws-ofi-nccl initiali[sz]ation failed|Failed to initiali[sz]e (?:any )?NET plugin"
)


def _network(process: ProcessLog) -> tuple[str, str | None, list[LogLine]] | None:
    """(network, how it is inferred or None when a line names it, the lines that say it)."""
    networks = list(process.networks)
    if networks:
        # the last one: a plugin that fails hands over to NCCL's own module, and the
        # log then says "Using network IB" after the plugin's lines
        said = process.line(f"network:{networks[-1]}") or process.line(f"assigned:{networks[-1]}")
        return networks[-1], None, [said] if said else []
    lists = dict(process.nic_lists)
    failed = any(_PLUGIN_FAILED.search(w.message) for w in process.warnings)
    if process.net_modules and not failed:
        # a plugin's own lines (NET/<name> : ..., "P2P plugin IBext_v8", or WARNs from its
        # source files); the IB plugins print their devices as NET/IB lists too; a plugin
        # whose init failed was not used
        name = process.net_modules[0]
        said = process.line(f"module:{name}")
        return name, "the plugin its lines come from", [said] if said else []
    if lists.get("IB") and not process.ib_no_device:
        return "IB", "its NIC list", []
    if process.providers and not failed:
        # the provider was found; a plugin whose initialization then failed was not used
        return "AWS Libfabric", "aws-ofi-nccl's provider line", []
    completions = [w for w in process.warnings if _COMPLETION.search(w.message)]
    if completions:
        # a completion from a NIC proves that module carried traffic
        found = _COMPLETION.search(completions[0].message)
        assert found is not None  # noqa: S101
        return found.group(1), "its completion errors", [completions[0]]
    carried = [c.transport for c in process.connections if c.transport.kind.value == "NET"]
    if carried:
        name = carried[0].name
        said = process.line(f"transport:{carried[0].raw}")
        return name, "its connection lines", [said] if said else []
    gdr = [
        (m.group(1), d.line) for d in process.gdr for m in [_GDR_MODULE.match(d.line.message)] if m
    ]
    if gdr and len({name for name, _ in gdr}) == 1:
        return gdr[0][0], "its GPU Direct RDMA lines", [gdr[0][1]]
    trailed = [m.group(1) for t in process.trails for m in [_TRAIL_MODULE.search(t.message)] if m]
    if trailed:
        # an error passed up through a network module's code: that module was in use
        name = {"net_ib": "IB", "net_socket": "Socket"}[trailed[0]]
        return name, "its error trail through that module's code", []
    no_module = any(_NO_MODULE.search(w.message) for w in process.warnings)
    if process.ib_no_device and not process.net_plugins and not no_module:
        # NCCL tries IB, then Socket (net.cc / init.cc initNet, every release): with no
        # IB device and no plugin loaded, Socket is what remains - unless NCCL_NET named
        # IB alone, and NCCL said no module was left (plugin/net.cc)
        said = process.line("ib-no-device")
        return "Socket", "NET/IB finding no device", [said] if said else []
    plugin_lists = [name for name in lists if name not in ("IB", "Socket")]
    if len(plugin_lists) == 1:
        return plugin_lists[0], "its NIC list", []
    return None


def _nics_from_warnings(process: ProcessLog) -> tuple[str, ...]:
    """NICs a process's failure lines name: ``hca mlx5_10`` (completion errors, 2.20+),
    ``mlx5_0:1 Got async event``."""
    found: dict[str, None] = {}
    for warning in process.warnings:
        hca = _HCA.search(warning.message)
        if hca:
            found.setdefault(hca.group(1), None)
        event = _ASYNC.search(warning.message)
        if event:
            found.setdefault(f"{event.group(1)}:{event.group(2)}", None)
    return tuple(found)


def choice_of(process: ProcessLog) -> Choice | None:
    """What ``process`` chose, or None when its lines do not say.

    >>> from hpnet.ncclog.facts import parse_nccl_log
    >>> log = parse_nccl_log([
    ...     "n1:7:7 [0] NCCL INFO NET/IB : Using [0]mlx5_4:1/RoCE [RO]; OOB eth0:10.0.0.5<0>",
    ...     "n1:7:7 [0] NCCL INFO Using network IB",
    ... ])
    >>> choice_of(log.processes[0]).sentence()
    'NET/IB over mlx5_4:1 (RoCE)'
    """
    found = _network(process)
    if found is None:
        return None
    network, inferred, lines = found
    nics: tuple[str, ...] = ()
    listing = _list_for(process, network)
    if listing is not None:
        listed_as, listed = listing
        nics = tuple(describe_nic(n) for n in listed)
        said = process.line(f"nics:{listed_as}")
        if said is not None:
            lines.append(said)
    elif process.providers and ("fabric" in network.lower() or "ofi" in network.lower()):
        nics = tuple(
            f"{provider} ({count} NICs{', fabric ' + fabric if fabric else ''})"
            if count is not None
            else f"{provider}{' (fabric ' + fabric + ')' if fabric else ''}"
            for provider, fabric, count in process.providers
        )
        said = process.line("provider")
        if said is not None:
            lines.append(said)
    elif inferred == "its GPU Direct RDMA lines":
        pass  # one line per device NCCL probed: no list of them all
    else:
        nics = _nics_from_warnings(process)
    for gin in process.gin:
        said = process.line(f"gin:{gin.split(' ', 1)[0]}")
        if said is not None:
            lines.append(said)
    ordered = tuple(sorted(set(lines), key=lambda line: (line.source, line.line_number)))
    return Choice(network=network, inferred=inferred, nics=nics, lines=ordered, gin=process.gin)


def summarize(choices: Sequence[Choice | None], total: int) -> str | None:
    """``NCCL chose NET/IB over mlx5_4:1 (RoCE) on all 8 processes`` (or per choice
    when processes differ); None when no process says."""
    known = [c for c in choices if c is not None]
    if not known:
        return None
    by_sentence: dict[str, int] = {}
    for choice in known:
        text = choice.sentence() + (
            f" (inferred from {choice.inferred})" if choice.inferred else ""
        )
        by_sentence[text] = by_sentence.get(text, 0) + 1
    parts = []
    for text, count in by_sentence.items():
        if count == total:
            where = "the one process" if total == 1 else f"all {total} processes"
        else:
            where = f"{count} of {total} processes"
        parts.append(f"{text} on {where}")
    return "NCCL chose " + "; ".join(parts)
