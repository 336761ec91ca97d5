"""A live query of a running job's NCCL RAS service, as NCCL's own ``ncclras`` client
asks it (NCCL src/ras/client.cc and the server's side, src/ras/client_support.cc, the
same in every release from 2.24.3 to 2.28.9):

1. connect to the job's RAS client socket: ``NCCL_RAS_ADDR``, ``localhost:28028`` unless
   the job set another (each job on a node needs its own);
2. ``CLIENT PROTOCOL 2`` -> ``SERVER PROTOCOL 2`` (protocol 2 since 2.24.3);
3. ``TIMEOUT <s>`` -> ``OK``: how long the node's process waits for the other processes'
   answers (5 s by default, RAS_COLLECTIVE_LEG_TIMEOUT_SEC);
4. ``SET FORMAT json`` -> ``OK`` from 2.28.7 on; older releases answer ``ERROR: Unknown
   command``, and the query goes on in text;
5. ``VERBOSE STATUS``: the report, until the service closes the connection.

The answer is read by the same reader as a saved ``ncclras`` report
(:mod:`hpnet.artefacts.ras`). Nothing here imports torch or NCCL.
"""

from __future__ import annotations

import dataclasses
import socket
import time

from hpnet.errors import InputError

__all__ = ["RAS_PORT", "LiveRas", "parse_addr", "query"]

#: NCCL_RAS_CLIENT_PORT, src/ras/ras_internal.h
RAS_PORT = 28028
PROTOCOL = 2
#: the report's largest size read (a 1,000-node job's verbose report is a few MB)
MAX_BYTES = 64 * 1024 * 1024


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LiveRas:
    addr: str
    protocol: int
    format: str  # "json" or "text"
    text: str
    seconds: float


def parse_addr(given: str) -> tuple[str, int]:
    """``HOST[:PORT]`` as NCCL_RAS_ADDR writes it (an IPv6 address in brackets).

    >>> parse_addr("node7"), parse_addr("10.0.0.2:28100"), parse_addr("[fe80::1]:28028")
    (('node7', 28028), ('10.0.0.2', 28100), ('fe80::1', 28028))
    """
    host, port = given, str(RAS_PORT)
    if given.startswith("["):
        host, closed, rest = given[1:].partition("]")
        host = host if closed else ""
        port = rest[1:] if rest.startswith(":") else port
    elif given.count(":") == 1:
        host, _, port = given.partition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise InputError(
            "not a RAS address",
            code="usage",
            where=f"--ras {given}",
            fix="--ras HOST[:PORT], the job's NCCL_RAS_ADDR (localhost:28028 unless it set one)",
        )
    return host, int(port)


def _line(sock: socket.socket) -> str:
    data = b""
    while not data.endswith(b"\n") and len(data) < 4096:
        chunk = sock.recv(1)
        if not chunk:
            break
        data += chunk
    return data.decode("utf-8", "replace").strip()


def query(addr: str, *, wait: int = 5, timeout: float = 30.0, text: bool = False) -> LiveRas:
    """The job's verbose RAS status: JSON where the release has it (``text``: text
    always), else text."""
    host, port = parse_addr(addr)
    where = f"--ras {addr}"
    start = time.monotonic()
    try:
        with socket.create_connection((host, port), timeout=timeout) as sock:
            sock.sendall(f"CLIENT PROTOCOL {PROTOCOL}\n".encode())
            hello = _line(sock)
            if not hello.upper().startswith("SERVER PROTOCOL "):
                raise InputError(
                    f"it is not NCCL's RAS service: it answered {hello[:80]!r}",
                    code="ras-query",
                    where=where,
                    fix="the job's NCCL_RAS_ADDR (localhost:28028 unless it set one)",
                )
            protocol = int(hello.split()[-1]) if hello.split()[-1].isdigit() else 0
            sock.sendall(f"TIMEOUT {wait}\n".encode())
            _line(sock)
            sock.settimeout(timeout + 2 * wait)  # the service waits for the other nodes
            fmt = "text"
            if not text:
                sock.sendall(b"SET FORMAT json\n")
                fmt = "json" if _line(sock).upper() == "OK" else "text"
            sock.sendall(b"VERBOSE STATUS\n")
            chunks: list[bytes] = []
            size = 0
            while size < MAX_BYTES and (chunk := sock.recv(65536)):
                chunks.append(chunk)
                size += len(chunk)
    except OSError as exc:
        raise InputError(
            f"cannot query NCCL's RAS service: {exc.strerror or exc}",
            code="ras-query",
            where=where,
            fix="run it on a node of the running job (NCCL 2.24 or later, NCCL_RAS_ENABLE "
            "not 0) with the job's NCCL_RAS_ADDR; each job on a node needs its own port",
        ) from None
    return LiveRas(
        addr=f"{host}:{port}",
        protocol=protocol,
        format=fmt,
        text=b"".join(chunks).decode("utf-8", "replace"),
        seconds=round(time.monotonic() - start, 2),
    )
