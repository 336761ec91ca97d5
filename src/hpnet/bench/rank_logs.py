"""What the bench ranks' logs say, read while they run and after they end.

:class:`ProgressEcho` echoes rank 0's latest progress line to standard error,
:func:`last_line` is a failed rank's last useful line, and :func:`port_taken` /
:func:`port_taken_in` tell a rendezvous port another process took first (worth a new
try). :mod:`hpnet.bench.run` reads the logs through these.
"""

from __future__ import annotations

import os
import sys

from hpnet.bench.worker import PROGRESS  # the worker module imports torch only in a rank

__all__ = ["ProgressEcho", "last_line", "port_taken", "port_taken_in"]

_PORT_TAKEN = ("EADDRINUSE", "address already in use")


def port_taken(failure: str | None) -> bool:
    """The rendezvous port was taken between choosing it and binding it (another
    process got the same free port): worth one more try with another."""
    return failure is not None and any(mark in failure for mark in _PORT_TAKEN)


def port_taken_in(log_path: str) -> bool:
    """Whether a rank's log ends with the rendezvous' EADDRINUSE (torch's TCPStore:
    "The server socket has failed to listen ... name: EADDRINUSE")."""
    return port_taken(_read_end(log_path, 16384))


def _read_end(path: str, size: int) -> str:
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - size))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def last_line(path: str) -> str:
    lines = _read_end(path, 2000).strip().splitlines()
    useful = [line for line in lines if line.strip() and not line.startswith(PROGRESS)]
    return useful[-1][:300] if useful else ""


class ProgressEcho:
    """Echo rank 0's latest progress line to standard error, once a second at most,
    and once more at the end (``final``) so that the last step is always shown."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.offset = 0
        self.last = 0.0
        self.line = ""

    def __call__(self, elapsed: float, *, final: bool = False) -> None:
        if elapsed - self.last < 1.0 and not final:
            return
        self.last = elapsed
        try:
            with open(self.path, "rb") as handle:
                handle.seek(self.offset)
                data = handle.read()
        except OSError:
            return
        cut = data.rfind(b"\n")
        if cut < 0:
            return
        self.offset += cut + 1
        for line in data[:cut].decode("utf-8", "replace").splitlines():
            if line.startswith(PROGRESS):
                self.line = line
        if self.line:
            print(self.line, file=sys.stderr, flush=True)
            self.line = ""
