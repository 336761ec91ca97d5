"""Run a group of local rank processes as one job: the seam for ``hpnet verify --run``
and ``hpnet bench`` when they start their own ranks on this node.

One job, one fate: the first rank that exits non-zero (or a timeout, Ctrl-C, or a
SIGTERM / SIGHUP to hpnet: ``timeout``, ``scancel``, a closed terminal) ends every
other rank, with SIGTERM and then SIGKILL after a grace period. Each rank runs in
its own session so that whatever it spawned goes with it; what it spawned in sessions
of their own (torchrun starts its workers so) comes back to hpnet when the rank dies
first, because hpnet is their subreaper while the job runs, and is ended too: nothing
is left behind.
Outputs go to one file per rank, so they can be read (and verified) after the job,
and nothing is lost if the job is killed.

What a rank inherits is the caller's to build (:attr:`RankSpec.env`); the commands
that start ranks on this node give them :func:`inheritable_env`: the caller's
environment without its secrets (:mod:`hpnet.secrets`), as a remote rank gets it.
:func:`first_failure` names the rank that failed first on its own, not one that hpnet
ended because of it.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType, TracebackType
from typing import BinaryIO

from hpnet.errors import InputError, Terminated

__all__ = [
    "RankResult",
    "RankSpec",
    "StopSignals",
    "describe_exit",
    "first_failure",
    "free_port",
    "inheritable_env",
    "run_ranks",
]

GRACE_SECONDS = 5.0
POLL_SECONDS = 0.05
#: signals that end the job like Ctrl-C does (each rank's own session does not get
#: them: start_new_session keeps ranks out of the terminal's and the caller's group)
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankSpec:
    rank: int
    argv: tuple[str, ...]
    env: Mapping[str, str]
    log_path: str  # stdout and stderr together


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RankResult:
    rank: int
    #: the exit status; negative: killed by that signal (as subprocess reports it)
    returncode: int | None
    log_path: str
    #: why hpnet ended it: "timeout", "interrupted" (Ctrl-C), "terminated" (SIGTERM or
    #: SIGHUP to hpnet), "peer-failed" (another rank failed first), or None when it
    #: exited on its own
    ended_by: str | None = None
    #: seconds after the start when hpnet saw it exit (polled every POLL_SECONDS);
    #: None when it was still running when the job ended
    exited_after_seconds: float | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def inheritable_env(environ: Mapping[str, str]) -> dict[str, str]:
    """The caller's environment as a rank started on this node may inherit it: every
    variable but the secrets (:func:`hpnet.secrets.is_secret`: a secret name such as
    ``HF_TOKEN`` or ``KUBECONFIG``, or a credential in the value such as
    ``https_proxy=http://user:pass@proxy``). A remote rank never gets those unless the
    user names them (``hpnet launch --env NAME``); a local one must not either.

    >>> sorted(inheritable_env({"PATH": "/bin", "HF_TOKEN": "hf_x", "NCCL_IB_HCA": "mlx5",
    ...                         "https_proxy": "http://u:p@proxy:3128"}))
    ['NCCL_IB_HCA', 'PATH']
    """
    from hpnet.secrets import is_secret  # noqa: PLC0415

    return {name: value for name, value in environ.items() if not is_secret(name, value)}


def describe_exit(result: RankResult) -> str:
    """How a rank ended, in words: ``exited with 3``, ``was killed by SIGKILL``, and
    why hpnet ended it when it did.

    >>> describe_exit(RankResult(rank=1, returncode=-9, log_path="r1.log"))
    'was killed by SIGKILL'
    >>> describe_exit(RankResult(rank=0, returncode=-15, log_path="r0.log", ended_by="peer-failed"))
    'was ended by hpnet (SIGTERM) after another rank failed'
    """
    code = result.returncode
    if code is None:
        how = "did not exit"
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"was killed by {name}"
    else:
        how = f"exited with {code}"
    if result.ended_by is None:
        return how
    why = {
        "peer-failed": "after another rank failed",
        "timeout": "when the job ran past its time limit",
        "interrupted": "on Ctrl-C",
        "terminated": "when hpnet was asked to stop (SIGTERM / SIGHUP)",
    }.get(result.ended_by, f"({result.ended_by})")
    if code is not None and code < 0:
        return f"was ended by hpnet ({how.removeprefix('was killed by ')}) {why}"
    return f"{how}, ended by hpnet {why}"


def first_failure(results: Sequence[RankResult]) -> RankResult | None:
    """The rank that failed first on its own (not one hpnet ended): the earliest seen
    to exit; among those seen in the same poll, one a signal killed (its peers fail
    because it is gone), then the one whose log was written last the earliest (a peer
    that noticed the loss writes its error after). None when no rank failed on its own.

    >>> ended = RankResult(rank=0, returncode=-15, log_path="-", ended_by="peer-failed")
    >>> killed = RankResult(rank=1, returncode=-9, log_path="-", exited_after_seconds=2.0)
    >>> first_failure([ended, killed]).rank
    1
    """
    own = [r for r in results if r.ended_by is None and r.returncode not in (0, None)]
    if not own:
        return None

    def order(result: RankResult) -> tuple[float, int, float, int]:
        seen = result.exited_after_seconds
        killed = result.returncode is not None and result.returncode < 0
        try:
            written = os.stat(result.log_path).st_mtime
        except OSError:
            written = float("inf")
        return (float("inf") if seen is None else seen, 0 if killed else 1, written, result.rank)

    return min(own, key=order)


def _open_log(path: str) -> BinaryIO:
    """A rank's log, new or emptied, readable by the user only: a symlink planted at
    the path (a shared ``--logs`` folder) is refused (ELOOP), never written through."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    try:
        return os.fdopen(os.open(path, flags, 0o600), "wb")
    except OSError as exc:
        link = os.path.islink(path)
        raise InputError(
            "a symlink is where a rank's log goes" if link else exc.strerror or str(exc),
            code="unwritable",
            where=path,
            fix="remove the link, or give --logs a folder of your own"
            if link
            else "give --logs a folder you can write to",
        ) from None


def free_port() -> int:
    """A TCP port free on this host right now (for MASTER_PORT)."""
    import socket  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class _StopSignals:
    """SIGTERM / SIGHUP while the ranks run: :class:`Terminated` is raised once (the
    ranks are then ended as on Ctrl-C). Once :meth:`hold` is called (the ranks are
    being ended) no signal interrupts: a SIGTERM / SIGHUP and a second Ctrl-C (an
    impatient user's) are only remembered, so that no rank is left running because its
    SIGKILL never came. The handlers in place before are put back on exit; a signal the
    caller ignores (``nohup``) stays ignored.
    """

    def __init__(self) -> None:
        self.signum: int | None = None
        self.interrupted = False  # a Ctrl-C came while held
        self.quiet = False
        self._previous: dict[signal.Signals, object] = {}

    def __enter__(self) -> _StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in STOP_SIGNALS:
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def hold(self) -> None:
        """From now on until exit, signals are remembered, not raised."""
        self.quiet = True
        if (
            signal.SIGINT not in self._previous
            and threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGINT) is signal.default_int_handler
        ):
            self._previous[signal.SIGINT] = signal.signal(signal.SIGINT, self._remember)

    def _handle(self, signum: int, _frame: FrameType | None) -> None:
        if self.signum is None:
            self.signum = signum
        if not self.quiet:
            self.quiet = True
            raise Terminated(signum)

    def _remember(self, _signum: int, _frame: FrameType | None) -> None:
        self.interrupted = True

    def __exit__(
        self,
        kind: type[BaseException] | None,
        value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        for sig, previous in self._previous.items():
            signal.signal(sig, previous if previous is not None else signal.SIG_DFL)  # type: ignore[arg-type]


#: the signal guard, for a caller that runs one child of its own (hpnet isolate's worker)
StopSignals = _StopSignals


def run_ranks(
    specs: Sequence[RankSpec],
    *,
    timeout_seconds: float,
    on_tick: Callable[[float], None] | None = None,
) -> list[RankResult]:
    """Start every rank, wait for all, end all if one fails; return in rank order.

    Raises KeyboardInterrupt (Ctrl-C) or :class:`~hpnet.errors.Terminated` (SIGTERM,
    SIGHUP) after every rank's session has been ended; a Ctrl-C or signal that comes
    while they are being ended waits until they are.
    """
    procs: dict[int, subprocess.Popen[bytes]] = {}
    handles = []
    ended_by: dict[int, str] = {}
    exited_at: dict[int, float] = {}
    before = _children()
    with _StopSignals() as stop, _subreaper():
        try:
            for spec in specs:
                handle = _open_log(spec.log_path)
                handles.append(handle)
                procs[spec.rank] = subprocess.Popen(
                    list(spec.argv),
                    env=dict(spec.env),
                    stdout=handle,
                    stderr=subprocess.STDOUT,
                    stdin=subprocess.DEVNULL,
                    start_new_session=True,
                )
            _wait(procs, timeout_seconds, on_tick, ended_by=ended_by, exited_at=exited_at)
        except (KeyboardInterrupt, Terminated) as exc:
            stop.hold()
            why = "interrupted" if isinstance(exc, KeyboardInterrupt) else "terminated"
            for rank, proc in procs.items():
                if _exit_status(proc) is None:
                    ended_by[rank] = why
            raise
        finally:
            stop.hold()  # a signal now must not cut the ending short
            _end(procs)
            _end_orphans(before)
            for handle in handles:
                handle.close()
    if stop.signum is not None:  # it came while the ranks were being ended
        raise Terminated(stop.signum)
    if stop.interrupted:
        raise KeyboardInterrupt
    return [
        RankResult(
            rank=spec.rank,
            returncode=procs[spec.rank].returncode if spec.rank in procs else None,
            log_path=spec.log_path,
            ended_by=ended_by.get(spec.rank),
            exited_after_seconds=exited_at.get(spec.rank),
        )
        for spec in specs
    ]


def _wait(
    procs: Mapping[int, subprocess.Popen[bytes]],
    timeout_seconds: float,
    on_tick: Callable[[float], None] | None,
    *,
    ended_by: dict[int, str],
    exited_at: dict[int, float],
) -> None:
    """Poll the ranks until all exited, one failed or the time is up; note when each
    exited, and why the ones still running are to be ended (``peer-failed``, ``timeout``)."""
    start = time.monotonic()
    while True:
        codes = {rank: _exit_status(proc) for rank, proc in procs.items()}
        elapsed = time.monotonic() - start
        for rank, code in codes.items():
            if code is not None:
                exited_at.setdefault(rank, elapsed)
        if all(code is not None for code in codes.values()):
            return
        why = None
        if any(c not in (None, 0) for c in codes.values()):
            why = "peer-failed"
        elif elapsed > timeout_seconds:
            why = "timeout"
        if why is not None:
            for rank, code in codes.items():
                if code is None:
                    ended_by[rank] = why
            return
        if on_tick is not None:
            on_tick(elapsed)
        time.sleep(POLL_SECONDS)


def _exit_status(proc: subprocess.Popen[bytes]) -> int | None:
    """The rank's exit status once it exited (negative: the signal that ended it),
    without reaping it: until it is reaped its pid, the id of its session and process
    group, cannot go to another process, so signalling that group stays safe."""
    if proc.returncode is not None or not hasattr(os, "waitid"):
        return proc.poll()
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:  # reaped by someone else
        return proc.poll()
    if info is None:
        return None
    if info.si_code in (os.CLD_KILLED, os.CLD_DUMPED):
        return -info.si_status
    return info.si_status


def _end(procs: Mapping[int, subprocess.Popen[bytes]]) -> None:
    """SIGTERM every live rank's session, SIGKILL what is left after the grace period,
    then reap every rank."""
    live = [p for p in procs.values() if _exit_status(p) is None]
    for proc in live:
        _signal_session(proc, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline and any(_exit_status(p) is None for p in live):
        time.sleep(POLL_SECONDS)
    for proc in live:
        if _exit_status(proc) is None:
            _signal_session(proc, signal.SIGKILL)
    _reap_sessions(procs)


def _reap_sessions(procs: Mapping[int, subprocess.Popen[bytes]]) -> None:
    """Kill what a rank left running in its session, then reap the rank.

    Its session is signalled only while the rank is not reaped (a zombie at most):
    after that its pid may belong to an unrelated new process group.
    """
    for proc in procs.values():
        if proc.returncode is None:
            _signal_session(proc, signal.SIGKILL)
            proc.wait()


#: prctl(2) options (linux/prctl.h); Linux 3.4 and later
_PR_SET_CHILD_SUBREAPER = 36
_PR_GET_CHILD_SUBREAPER = 37


@contextlib.contextmanager
def _subreaper() -> Iterator[None]:
    """Be the subreaper of the job's processes while it runs: a process whose parent
    dies is then reparented to hpnet instead of init, and :func:`_end_orphans` can end
    it. Restored afterwards; nothing happens where prctl is not available."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        was = ctypes.c_int(0)
        if libc.prctl(_PR_GET_CHILD_SUBREAPER, ctypes.byref(was), 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl")
        turned_on = not was.value and libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):  # not Linux, or no prctl symbol
        yield
        return
    try:
        yield
    finally:
        if turned_on:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)


def _children() -> set[int]:
    """The pids whose parent is this process (from /proc/PID/stat)."""
    me = os.getpid()
    found = set()
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if not entry.isdigit():
                continue
            try:
                with open(f"/proc/{entry}/stat", "rb") as handle:
                    stat = handle.read()
            except OSError:
                continue
            # "pid (comm) state ppid ...": comm may hold spaces and parentheses
            fields = stat[stat.rfind(b")") + 2 :].split()
            if len(fields) > 1 and int(fields[1]) == me:
                found.add(int(entry))
    return found


def _end_orphans(before: set[int]) -> None:
    """End what the ranks left behind and this process inherited as their subreaper:
    its children that are neither the ranks (reaped by now) nor ones it had before the
    job. SIGTERM, SIGKILL after the grace period, reaped; repeated while killing them
    hands their own children to this process."""
    for _ in range(8):
        orphans = _children() - before
        if not orphans:
            return
        for pid in orphans:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + GRACE_SECONDS
        waiting = set(orphans)
        while waiting and time.monotonic() < deadline:
            for pid in list(waiting):
                with contextlib.suppress(ChildProcessError):
                    if os.waitpid(pid, os.WNOHANG)[0] == 0:
                        continue
                waiting.discard(pid)
            time.sleep(POLL_SECONDS)
        for pid in waiting:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)


def _signal_session(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
