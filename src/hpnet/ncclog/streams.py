"""Reading a stream that may stall: a FIFO or standard input, with an idle timeout.

:class:`StreamReader` reads a FIFO opened without waiting for its writer (or standard
input), says once on standard error that it waits when the stream is silent for
:data:`WAIT_NOTE_SECONDS`, and raises :class:`IdleTimeout` past ``--idle-timeout``;
:class:`Prefixed` puts back bytes already read (the gzip sniff).
:mod:`hpnet.ncclog.read` gathers what they read into blocks.
"""

from __future__ import annotations

import io
import os
import sys
import time
from collections.abc import Callable
from typing import BinaryIO

from hpnet.errors import InputError
from hpnet.ncclog.inputs import LogInput

__all__ = ["WAIT_NOTE_SECONDS", "IdleTimeout", "Prefixed", "StreamReader", "has_fd", "idle_error"]

#: a stream silent this long is said to be waited for (standard error, once)
WAIT_NOTE_SECONDS = 1.0


class Prefixed(io.RawIOBase):
    """A stream with the bytes already read from it put back in front (for gzip)."""

    def __init__(self, head: bytes, raw: BinaryIO) -> None:
        super().__init__()
        self._head = head
        self._raw = raw

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        if self._head:
            data, self._head = self._head[: len(buffer)], self._head[len(buffer) :]
        else:
            data = self._raw.read(len(buffer))
        buffer[: len(data)] = data
        return len(data)


class StreamReader(io.RawIOBase):
    """Standard input or a FIFO, read as data comes, never waiting unseen.

    A FIFO is opened with ``O_NONBLOCK`` (a plain open waits for a writer, and would
    wait forever for one that never comes); every read first polls. When nothing has
    come after :data:`WAIT_NOTE_SECONDS`, ``waiting`` is told once (the CLI says on
    standard error what hpnet waits for and how to stop it); when nothing comes for
    ``idle_timeout_seconds``, reading ends there (:class:`IdleTimeout`).
    """

    def __init__(
        self,
        source: LogInput,
        name: str,
        *,
        idle_timeout_seconds: float | None,
        waiting: Callable[[str], None] | None,
    ) -> None:
        super().__init__()
        self.name = name
        self.idle_timeout_seconds = idle_timeout_seconds
        self.waiting = waiting
        self.received = 0
        self.noted = False  # the wait was said: once a stream, not at every pause
        self.own = source.path != "-"
        if self.own:
            try:
                self.fd = os.open(source.path, os.O_RDONLY | os.O_NONBLOCK)
            except OSError as exc:
                raise InputError(
                    f"cannot read the log ({exc.strerror})",
                    code="log-unreadable",
                    where=name,
                    fix="check the path and its permissions",
                ) from None
        else:
            # standard input stays blocking: its file description is the shell's too
            self.fd = sys.stdin.fileno()

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        while True:
            self._wait()
            try:
                data = os.read(self.fd, len(buffer))
                break
            except BlockingIOError:  # woken with nothing to read: wait again
                continue
        buffer[: len(data)] = data
        self.received += len(data)
        return len(data)

    def _wait(self) -> None:
        """Until the stream can be read (data, or its end)."""
        import select  # noqa: PLC0415 - streams only

        poller = select.poll()
        poller.register(self.fd, select.POLLIN | select.POLLPRI)
        waited = 0.0
        while True:
            step = WAIT_NOTE_SECONDS if not self.noted else 3600.0
            if self.idle_timeout_seconds is not None:
                step = min(step, max(self.idle_timeout_seconds - waited, 0.0))
            started = time.monotonic()
            if poller.poll(int(step * 1000)):
                return
            waited += time.monotonic() - started
            if self.idle_timeout_seconds is not None and waited >= self.idle_timeout_seconds:
                raise IdleTimeout(self.idle_timeout_seconds)
            if not self.noted and self.waiting is not None:
                self.noted = True
                if os.isatty(self.fd):
                    self.waiting(
                        f"reading {self.name} from the terminal: paste the log, then press Ctrl-D"
                    )
                else:
                    what = "nothing read yet" if not self.received else "nothing new"
                    self.waiting(
                        f"waiting for {self.name} ({what}: its writer has not written or "
                        "closed it); Ctrl-C stops, --idle-timeout S gives up after S seconds"
                    )

    def close(self) -> None:
        if self.own and not self.closed:
            os.close(self.fd)
        super().close()


class IdleTimeout(Exception):
    def __init__(self, seconds: float) -> None:
        super().__init__(f"nothing arrived for {seconds:g} s")
        self.seconds = seconds


def has_fd(stream: object) -> bool:
    try:
        stream.fileno()  # type: ignore[attr-defined]
    except (AttributeError, OSError, ValueError):  # io.UnsupportedOperation is both
        return False
    return True


def idle_error(name: str, exc: IdleTimeout) -> InputError:
    return InputError(
        f"{exc}: no log arrived",
        code="log-timeout",
        where=name,
        fix="start the program that writes the pipe first, or raise --idle-timeout",
    )
