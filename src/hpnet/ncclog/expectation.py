"""What a run was expected to use, and whether its log shows it did.

``hpnet verify --expect net=ib,gdr``: :func:`parse_expectation` reads the flag into an
:class:`Expectation`; :func:`check_expectation` holds the processes' inter-node
connections (:class:`~hpnet.ncclog.report.ProcessRow`) against it, one
:class:`ExpectationResult` per part; :func:`net_matches` says whether a transport label
names a wanted network.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hpnet.result import Expectation

if TYPE_CHECKING:  # report.py imports this module: its rows are a type here only
    from hpnet.ncclog.report import ProcessRow

__all__ = [
    "ExpectationResult",
    "check_expectation",
    "net_matches",
    "parse_expectation",
]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class ExpectationResult:
    expectation: str
    met: bool
    detail: str


#: what NCCL and its plugins call networks: IB, Socket, IBext_v8, AWS Libfabric, ...
_NET_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9 _.+-]*")


def parse_expectation(text: str) -> Expectation:
    """``net=ib,gdr`` / ``net=socket`` / ``net=AWS Libfabric,no-gdr``.

    >>> parse_expectation("net=ib,gdr").describe()
    'net=ib,gdr'
    """
    net: str | None = None
    gdr: bool | None = None
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        key, sep, value = part.partition("=")
        if sep and key.strip().lower() == "net" and value.strip():
            if net is not None:
                raise ValueError(f"net= given twice ({net!r} and {value.strip()!r})")
            net = value.strip()
            if not _NET_NAME.fullmatch(net):  # 'net=ib;gdr': a separator, not a name
                raise ValueError(f"{net!r} is not a network name")
        elif not sep and part.lower() in {"gdr", "gdrdma", "no-gdr", "nogdr"}:
            wanted = part.lower() in {"gdr", "gdrdma"}
            if gdr is not None and gdr != wanted:
                raise ValueError("gdr and no-gdr both given")
            gdr = wanted
        else:
            raise ValueError(f"unknown expectation {part!r}")
    if net is None and gdr is None:
        raise ValueError("empty expectation")
    return Expectation(net=net, gdr=gdr)


def net_matches(wanted: str, label: str) -> bool:
    """Does a transport label (``NET/IBext_v8/GDRDMA``) name the network ``wanted``?

    ``ib`` also matches the IBext plugins (NCCL's IB code in a plugin), ``mnnvl`` the
    NVLink transports that cross hosts; comparison ignores case, spaces and punctuation
    (``aws-libfabric``).

    >>> net_matches("ib", "NET/IBext_v8/GDRDMA"), net_matches("socket", "NET/IB")
    (True, False)
    """
    name = label.split("/", 1)[1] if "/" in label else label
    name = name.removesuffix("/GDRDMA")

    def simple(text: str) -> str:
        return "".join(ch for ch in text.lower() if ch.isalnum())

    if simple(wanted) == "ib":
        return simple(name) == "ib" or simple(name).startswith("ibext")
    if simple(wanted) == "mnnvl":  # multi-node NVLink: P2P/MNNVL, and NVLS across hosts
        return simple(label) in {"p2pmnnvl", "nvls"}
    return simple(name) == simple(wanted)


def check_expectation(
    expectation: Expectation, rows: Sequence[ProcessRow]
) -> tuple[ExpectationResult, ...]:
    inter_rows = [r for r in rows if r.inter_node]
    if not inter_rows:
        return (
            ExpectationResult(
                expectation=expectation.describe(),
                met=False,
                detail="no inter-node connection in the log: nothing proves the network",
            ),
        )
    results = []
    if expectation.net:
        wrong = [
            f"{r.process}: {t}"
            for r in inter_rows
            for t in r.inter_node
            if not net_matches(expectation.net, t)
        ]
        results.append(
            ExpectationResult(
                expectation=f"net={expectation.net}",
                met=not wrong,
                detail="every inter-node connection used it"
                if not wrong
                else f"{len(wrong)} used something else: " + "; ".join(wrong[:4]),
            )
        )
    if expectation.gdr is not None:
        rdma_rows = [r for r in inter_rows if r.gdr is not None]
        off = [r.process for r in rdma_rows if r.gdr != "yes"]
        on = [r.process for r in rdma_rows if r.gdr != "no"]
        if expectation.gdr:
            met = bool(rdma_rows) and not off
            detail = (
                "GPUDirect RDMA on every inter-node RDMA connection"
                if met
                else "no inter-node RDMA connection (sockets never use GPUDirect)"
                if not rdma_rows
                else f"GPUDirect RDMA not (fully) used by {len(off)} process(es): "
                f"{', '.join(off[:4])}"
            )
        else:
            met = not on
            detail = "no GPUDirect RDMA" if met else f"GPUDirect RDMA used by {len(on)} process(es)"
        results.append(
            ExpectationResult(
                expectation="gdr" if expectation.gdr else "no-gdr", met=met, detail=detail
            )
        )
    return tuple(results)
