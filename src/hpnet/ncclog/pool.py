"""The worker processes a large log is read with: forked, ended with hpnet, and ended at
once when the read is stopped (SIGTERM, SIGHUP, Ctrl-C)."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

from hpnet.errors import Terminated

if TYPE_CHECKING:
    from concurrent.futures import Executor

__all__ = ["end_workers", "make_pool", "stop_signals"]


def make_pool(workers: int) -> Executor:
    """A pool of ``workers`` processes, forked on Linux, each ending with this one."""
    import concurrent.futures  # noqa: PLC0415 - only for large inputs
    import multiprocessing  # noqa: PLC0415

    method = "fork" if sys.platform.startswith("linux") else "spawn"
    return concurrent.futures.ProcessPoolExecutor(
        max_workers=workers,
        mp_context=multiprocessing.get_context(method),
        initializer=_end_with,
        initargs=(os.getpid(),),
    )


@contextlib.contextmanager
def stop_signals() -> Iterator[list[BaseException]]:
    """SIGTERM and SIGHUP raise :class:`~hpnet.errors.Terminated` here (the CLI exits
    128 + signum), so that what was started is ended; the handlers before are put back
    and a signal the caller ignores (``nohup``) stays ignored. Yields the list the
    exception that ends the block is put in, if one does."""
    previous: dict[int, object] = {}

    def stop(signum: int, _frame: object) -> None:
        raise Terminated(signum)

    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, stop)
    stopped: list[BaseException] = []
    try:
        yield stopped
    except BaseException as exc:
        stopped.append(exc)
        raise
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)  # type: ignore[arg-type]


def end_workers(pool: Executor, stopped: list[BaseException]) -> None:
    """Where the read was stopped, its workers end now, not after their ranges."""
    if not stopped:
        return
    processes = getattr(pool, "_processes", None) or {}
    for process in list(processes.values()):
        with contextlib.suppress(Exception):
            process.terminate()
    for process in list(processes.values()):
        with contextlib.suppress(Exception):
            process.join(5)


#: prctl(2)'s PR_SET_PDEATHSIG (linux/prctl.h)
_PR_SET_PDEATHSIG = 1


def _end_with(parent: int) -> None:
    """A worker's start: it ends when hpnet does (Linux: the kernel sends it SIGTERM when
    its parent exits). Killed at once (SIGKILL, or SIGTERM outside a read), hpnet had
    left its forked workers scanning their ranges, orphaned, for good."""
    for number in (signal.SIGTERM, signal.SIGHUP):  # not the reader's: ended at once
        signal.signal(number, signal.SIG_DFL)
    if not sys.platform.startswith("linux"):
        return
    import ctypes  # noqa: PLC0415 - workers only

    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # hpnet ended before the worker asked
        os._exit(1)
