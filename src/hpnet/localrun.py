"""Run a group of local rank processes as one job: the seam for ``hpnet verify --run``,
``hpnet bench`` and ``hpnet check`` when they start their own ranks on this node.

One job, one fate: the first rank that exits non-zero (or a timeout, or Ctrl-C)
ends every other rank, with SIGTERM and then SIGKILL after a grace period. Each
rank runs in its own session so that whatever it spawned goes with it; nothing is
left behind. Outputs go to one file per rank, so they can be read (and verified)
after the job, and nothing is lost if the job is killed.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import signal
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence

__all__ = ["RankResult", "RankSpec", "free_port", "run_ranks"]

GRACE_SECONDS = 5.0
POLL_SECONDS = 0.05


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
    #: why hpnet ended it: "timeout", "interrupted", "peer-failed" (another rank
    #: failed first), or None when it exited on its own
    ended_by: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0


def free_port() -> int:
    """A TCP port free on this host right now (for MASTER_PORT)."""
    import socket  # noqa: PLC0415

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def run_ranks(
    specs: Sequence[RankSpec],
    *,
    timeout_seconds: float,
    on_tick: Callable[[float], None] | None = None,
) -> list[RankResult]:
    """Start every rank, wait for all, end all if one fails; return in rank order."""
    procs: dict[int, subprocess.Popen[bytes]] = {}
    handles = []
    ended_by: dict[int, str] = {}
    try:
        for spec in specs:
            handle = open(spec.log_path, "wb")  # noqa: SIM115 - closed in finally
            handles.append(handle)
            procs[spec.rank] = subprocess.Popen(
                list(spec.argv),
                env=dict(spec.env),
                stdout=handle,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )
        start = time.monotonic()
        while True:
            codes = {rank: proc.poll() for rank, proc in procs.items()}
            if all(code is not None for code in codes.values()):
                break
            failed = [r for r, c in codes.items() if c not in (None, 0)]
            if failed:
                for rank, code in codes.items():
                    if code is None:
                        ended_by[rank] = "peer-failed"
                _end(procs)
                break
            elapsed = time.monotonic() - start
            if elapsed > timeout_seconds:
                for rank, code in codes.items():
                    if code is None:
                        ended_by[rank] = "timeout"
                _end(procs)
                break
            if on_tick is not None:
                on_tick(elapsed)
            time.sleep(POLL_SECONDS)
    except KeyboardInterrupt:
        for rank, proc in procs.items():
            if proc.poll() is None:
                ended_by[rank] = "interrupted"
        _end(procs)
        raise
    finally:
        _end(procs)
        for handle in handles:
            handle.close()
    return [
        RankResult(
            rank=spec.rank,
            returncode=procs[spec.rank].returncode if spec.rank in procs else None,
            log_path=spec.log_path,
            ended_by=ended_by.get(spec.rank),
        )
        for spec in specs
    ]


def _end(procs: Mapping[int, subprocess.Popen[bytes]]) -> None:
    """SIGTERM every live rank's session, SIGKILL what is left after the grace period."""
    live = [p for p in procs.values() if p.poll() is None]
    if not live:
        _reap_sessions(procs)
        return
    for proc in live:
        _signal_session(proc, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    while time.monotonic() < deadline and any(p.poll() is None for p in live):
        time.sleep(POLL_SECONDS)
    for proc in live:
        if proc.poll() is None:
            _signal_session(proc, signal.SIGKILL)
            proc.wait()
    _reap_sessions(procs)


def _reap_sessions(procs: Mapping[int, subprocess.Popen[bytes]]) -> None:
    """Kill what a rank left running in its session after it exited itself."""
    for proc in procs.values():
        _signal_session(proc, signal.SIGKILL)


def _signal_session(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)
