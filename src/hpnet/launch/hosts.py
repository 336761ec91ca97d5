"""Host names, hostfiles and Slurm node lists: the inputs that name a job's nodes.

Every name that reaches a command line (ssh, mpirun's hostfile, a manifest) passes
:func:`check_host` first: letters, digits, ``-``, ``_`` and ``.`` (RFC 1123 labels,
plus the underscore some clusters use), or an IPv4 / IPv6 address. Anything else
(spaces, quotes, ``$``, ``;``, a leading ``-`` that ssh would read as an option) is
refused with the offending value named, never quoted into a shell. An IPv6 zone
(``fe80::1%eth0``) must be an interface name: :mod:`ipaddress` takes any text after
the ``%``, a ``;``, ``$(...)`` or a line break included.

Slurm node lists are counted before they are expanded: ``gpu[0-9999999]`` is refused
(more than :data:`~hpnet.launch.validate.MAX_NODES` names), not expanded for a minute.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Iterable

from hpnet.errors import InputError, ParseError
from hpnet.launch.validate import MAX_NODES, MAX_PROCS_PER_NODE, parse_count

__all__ = ["Host", "check_host", "expand_nodelist", "parse_hostfile", "parse_hosts"]

#: anchored with \Z: "$" also matches before a final line feed ("gpu1\n" would pass)
_LABEL = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?\Z")
#: an IPv6 zone: an interface name (Linux: IFNAMSIZ - 1 = 15 bytes) or index
_ZONE = re.compile(r"^[A-Za-z0-9_.-]{1,15}\Z")
_COUNT = re.compile(r"^[0-9]+\Z")
_NUMBER = re.compile(r"^[0-9]{1,12}\Z")  # a node number (int() refuses 4300+ digits)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Host:
    name: str
    slots: int | None = None  # processes the hostfile allows there (None: not said)


def check_host(name: str, *, where: str = "host") -> str:
    """``name`` if it is a host name or an address; InputError otherwise.

    >>> check_host("gpu-node01.cluster"), check_host("10.0.0.7"), check_host("fe80::1%eth0")
    ('gpu-node01.cluster', '10.0.0.7', 'fe80::1%eth0')
    >>> check_host("node1; rm -rf /")
    Traceback (most recent call last):
    ...
    hpnet.errors.InputError: not a host name: 'node1; rm -rf /'
    """
    candidate = name[1:-1] if name.startswith("[") and name.endswith("]") else name
    try:
        ipaddress.ip_address(candidate)
    except ValueError:
        pass
    else:
        _, percent, zone = candidate.partition("%")
        if not percent or _ZONE.match(zone):
            return candidate
        raise InputError(
            f"not an IPv6 zone (an interface name): {zone!r} in {name!r}",
            code="bad-host",
            where=where,
            fix="write the zone as the interface's name (fe80::1%eth0), or use a global address",
        )
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
        if item.count(":") == 1 and _COUNT.match(item.rsplit(":", 1)[1]):
            name, count = item.rsplit(":", 1)
            slots = parse_count(count, where=f"{where} {item}", limit=MAX_PROCS_PER_NODE)
        hosts.append(Host(name=check_host(name, where=where), slots=slots))
        if len(hosts) > MAX_NODES:
            raise InputError(
                f"more than {MAX_NODES} hosts", code="bad-host", where=where,
                fix="name the job's nodes only",
            )  # fmt: skip
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
        try:
            if name.count(":") == 1 and _COUNT.match(name.rsplit(":", 1)[1]):
                name, text_count = name.rsplit(":", 1)
                count = parse_count(text_count, where="slots", limit=MAX_PROCS_PER_NODE, minimum=0)
            for token in tokens[1:]:
                key, _, value = token.partition("=")
                key = key.replace("-", "_")
                if key not in ("slots", "max_slots", "count") or not _COUNT.match(value):
                    raise ParseError(
                        f"cannot read {token!r} (known: slots=N, max_slots=N)",
                        source=source,
                        line_number=number,
                        fix="write lines as `host slots=N`",
                    )
                found = parse_count(value, where=key, limit=MAX_PROCS_PER_NODE, minimum=0)
                if key in ("slots", "count"):
                    count = found
            check_host(name, where=f"{source}:{number}")
        except ParseError:
            raise
        except InputError as exc:
            raise ParseError(
                exc.what, source=source, line_number=number, fix=exc.fix, code=exc.code
            ) from None
        if name not in slots:
            order.append(name)
            slots[name] = count
            if len(order) > MAX_NODES:
                raise ParseError(
                    f"more than {MAX_NODES} hosts", source=source, line_number=number,
                    fix="list the job's nodes only",
                )  # fmt: skip
        elif count is not None:
            total = (slots[name] or 0) + count
            if total > MAX_PROCS_PER_NODE:
                raise ParseError(
                    f"{name} adds up to {total} slots (at most {MAX_PROCS_PER_NODE})",
                    source=source, line_number=number, fix="give each host its real slot count",
                )  # fmt: skip
            slots[name] = total
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
    items = _split_top(text)
    if not items:
        raise _bad_nodelist(f"no node in {text!r}")
    total = 0
    for item in items:
        total += _count_one(item, text)
        if total > MAX_NODES:  # counted, not expanded: gpu[0-9999999] is refused at once
            raise _bad_nodelist(f"{text!r} names more than {MAX_NODES} nodes")
    names: list[str] = []
    for item in items:
        names.extend(_expand_one(item, text))
    for name in names:
        check_host(name, where="SLURM_JOB_NODELIST")
    return tuple(names)


def _bad_nodelist(what: str) -> InputError:
    return InputError(
        what, code="bad-nodelist", where="SLURM_JOB_NODELIST",
        fix="pass the value Slurm set, unchanged",
    )  # fmt: skip


def _split_top(text: str) -> list[str]:
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in text.strip():
        if char == "[":
            depth += 1
        elif char == "]":
            depth -= 1
        if depth not in (0, 1):
            raise _bad_nodelist(f"unbalanced or nested brackets in {text!r}")
        if char == "," and depth == 0:
            items.append("".join(current))
            current = []
        else:
            current.append(char)
    if depth != 0:
        raise _bad_nodelist(f"unbalanced brackets in {text!r}")
    items.append("".join(current))
    if any(not item for item in items) and text.strip():
        raise _bad_nodelist(f"an empty name in {text!r}")
    return [item for item in items if item]


def _ranges(group: str, whole: str) -> list[tuple[int, int, int]]:
    """``01-03,07`` as (low, high, width) ranges, checked."""
    out = []
    for part in group.split(","):
        low, _, high = part.partition("-")
        if not _NUMBER.match(low) or (high and not _NUMBER.match(high)):
            raise _bad_nodelist(f"cannot read range {part!r} in {whole!r}")
        first, last = int(low), int(high or low)
        if last < first:
            raise _bad_nodelist(f"range {part!r} in {whole!r} runs backwards")
        out.append((first, last, len(low)))
    return out


def _count_one(item: str, whole: str) -> int:
    count = 1
    for group in re.findall(r"\[([^\]]*)\]", item):
        count *= sum(last - first + 1 for first, last, _ in _ranges(group, whole))
        if count > MAX_NODES:
            raise _bad_nodelist(f"{whole!r} names more than {MAX_NODES} nodes")
    return count


def _expand_one(item: str, whole: str) -> list[str]:
    found = re.search(r"\[([^\]]*)\]", item)
    if not found:
        return [item]
    head, tail = item[: found.start()], item[found.end() :]
    out = []
    for first, last, width in _ranges(found.group(1), whole):
        for number in range(first, last + 1):
            out.extend(_expand_one(f"{head}{number:0{width}d}{tail}", whole))
    return out
