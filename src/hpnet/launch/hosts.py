"""Host names, hostfiles and Slurm node lists: the inputs that name a job's nodes.

Every name that reaches a command line (ssh, mpirun's hostfile, a manifest) passes
:func:`check_host` first: letters, digits, ``-``, ``_`` and ``.`` (RFC 1123 labels,
plus the underscore some clusters use), or an IPv4 / IPv6 address. Anything else
(spaces, quotes, ``$``, ``;``, a leading ``-`` that ssh would read as an option) is
refused with the offending value named, never quoted into a shell.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Iterable

from hpnet.errors import InputError, ParseError

__all__ = ["Host", "check_host", "expand_nodelist", "parse_hostfile", "parse_hosts"]

_LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Host:
    name: str
    slots: int | None = None  # processes the hostfile allows there (None: not said)


def check_host(name: str, *, where: str = "host") -> str:
    """``name`` if it is a host name or an address; InputError otherwise.

    >>> check_host("gpu-node01.cluster"), check_host("10.0.0.7"), check_host("fd00::1")
    ('gpu-node01.cluster', '10.0.0.7', 'fd00::1')
    >>> check_host("node1; rm -rf /")
    Traceback (most recent call last):
    ...
    hpnet.errors.InputError: not a host name: 'node1; rm -rf /'
    """
    candidate = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ipaddress.ip_address(candidate)
        return candidate
    except ValueError:
        pass
    labels = name.split(".")
    if 0 < len(name) <= 253 and all(_LABEL.match(label) for label in labels):
        return name
    raise InputError(
        f"not a host name: {name!r}",
        code="bad-host",
        where=where,
        fix="name hosts with letters, digits, '-', '_' and '.', or by their IP address",
    )


def parse_hosts(text: str, *, where: str = "--hosts") -> tuple[Host, ...]:
    """``a,b,c`` or ``a:8,b:8`` (host:slots), each name checked; repeats are refused.

    >>> [(h.name, h.slots) for h in parse_hosts("n1:8,n2:8")]
    [('n1', 8), ('n2', 8)]
    """
    hosts: list[Host] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        name, slots = item, None
        if item.count(":") == 1 and item.rsplit(":", 1)[1].isdigit():
            name, count = item.rsplit(":", 1)
            slots = int(count)
        hosts.append(Host(name=check_host(name, where=where), slots=slots))
    _no_repeats(hosts, where)
    if not hosts:
        raise InputError("no host named", code="bad-host", where=where, fix="--hosts node1,node2")
    return tuple(hosts)


def _no_repeats(hosts: Iterable[Host], where: str) -> None:
    seen: set[str] = set()
    for host in hosts:
        if host.name in seen:
            raise InputError(
                f"host {host.name} is named twice",
                code="bad-host",
                where=where,
                fix="name each host once and give its process count as slots",
            )
        seen.add(host.name)


def parse_hostfile(text: str, *, source: str = "<hostfile>") -> tuple[Host, ...]:
    """An Open MPI or DeepSpeed hostfile: ``host [slots=N] [max_slots=M]`` per line,
    ``#`` comments; MPICH's ``host:N`` is read too. A host listed twice adds its slots
    (Open MPI's rule).

    >>> [(h.name, h.slots) for h in parse_hostfile("# two\\nnode1 slots=8\\nnode2 slots=8\\n")]
    [('node1', 8), ('node2', 8)]
    """
    order: list[str] = []
    slots: dict[str, int | None] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        tokens = line.split()
        name, count = tokens[0], None
        if name.count(":") == 1 and name.rsplit(":", 1)[1].isdigit():
            name, text_count = name.rsplit(":", 1)
            count = int(text_count)
        for token in tokens[1:]:
            key, _, value = token.partition("=")
            key = key.replace("-", "_")
            if key not in ("slots", "max_slots", "count") or not value.isdigit():
                raise ParseError(
                    f"cannot read {token!r} (known: slots=N, max_slots=N)",
                    source=source,
                    line_number=number,
                    fix="write lines as `host slots=N`",
                )
            if key in ("slots", "count"):
                count = int(value)
        try:
            check_host(name, where=f"{source}:{number}")
        except InputError as exc:
            raise ParseError(
                exc.what, source=source, line_number=number, fix=exc.fix, code="bad-host"
            ) from None
        if name not in slots:
            order.append(name)
            slots[name] = count
        elif count is not None:
            slots[name] = (slots[name] or 0) + count
    if not order:
        raise ParseError(
            "no host in the file", source=source, fix="write one `host slots=N` line per node"
        )
    return tuple(Host(name=name, slots=slots[name]) for name in order)


def expand_nodelist(text: str) -> tuple[str, ...]:
    """Slurm's compressed host list (``SLURM_JOB_NODELIST``) as names, in order.

    >>> expand_nodelist("gpu[01-03,07],login")
    ('gpu01', 'gpu02', 'gpu03', 'gpu07', 'login')
    >>> expand_nodelist("rack[1-2]-n[8-9]")
    ('rack1-n8', 'rack1-n9', 'rack2-n8', 'rack2-n9')
    """
    names: list[str] = []
    for item in _split_top(text):
        names.extend(_expand_one(item, text))
    for name in names:
        check_host(name, where="SLURM_JOB_NODELIST")
    return tuple(names)


def _split_top(text: str) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text.strip():
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise InputError(
            f"unbalanced brackets in {text!r}", code="bad-nodelist", where="SLURM_JOB_NODELIST",
            fix="pass the value Slurm set, unchanged",
        )  # fmt: skip
    items.append("".join(current))
    return [item for item in items if item]


def _expand_one(item: str, whole: str) -> list[str]:
    found = re.search(r"\[([^\]]*)\]", item)
    if not found:
        return [item]
    head, tail = item[: found.start()], item[found.end() :]
    out = []
    for part in found.group(1).split(","):
        low, _, high = part.partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise InputError(
                f"cannot read range {part!r} in {whole!r}", code="bad-nodelist",
                where="SLURM_JOB_NODELIST", fix="pass the value Slurm set, unchanged",
            )  # fmt: skip
        width = len(low)
        for number in range(int(low), int(high or low) + 1):
            out.extend(_expand_one(f"{head}{number:0{width}d}{tail}", whole))
    return out
