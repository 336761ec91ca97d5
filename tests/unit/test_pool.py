"""The workers a large log is read with end with hpnet, and at once when it is stopped."""

from __future__ import annotations

import os
import signal
import sys
import time

import pytest

from hpnet.errors import Terminated
from hpnet.ncclog.pool import end_workers, make_pool, stop_signals


def _running(pid: int | None) -> bool:
    """Does process ``pid`` still run (neither gone nor a zombie waiting to be reaped)?"""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="fork and prctl: Linux")
def test_a_sigterm_mid_read_raises_terminated_and_ends_the_workers_at_once() -> None:
    """`timeout 60 hpnet verify big.log` sent SIGTERM: hpnet died at once and its forked
    workers went on scanning, orphaned. Now SIGTERM raises Terminated where the read
    runs (the CLI exits 143), the handler before is put back, and the workers end."""
    before = signal.getsignal(signal.SIGTERM)
    pool = make_pool(2)
    try:
        with pytest.raises(Terminated) as caught, stop_signals() as stopped:
            future = pool.submit(_pid_after, 60)
            time.sleep(1.0)  # the workers are forked and busy
            workers = list(pool._processes.values())  # type: ignore[attr-defined]
            os.kill(os.getpid(), signal.SIGTERM)
            future.result()
        assert caught.value.signum == signal.SIGTERM and stopped
        start = time.monotonic()
        end_workers(pool, stopped)
        assert time.monotonic() - start < 3
        # asked of the kernel: Process.is_alive() stays True for a worker another thread
        # of the executor reaped first (waitpid then answers ECHILD: flaky in CI)
        assert workers and not any(_running(w.pid) for w in workers)
    finally:
        pool.shutdown(cancel_futures=True)
    assert signal.getsignal(signal.SIGTERM) == before


def test_a_read_that_was_not_stopped_leaves_its_workers_alone() -> None:
    pool = make_pool(1)
    try:
        with stop_signals() as stopped:
            assert pool.submit(_pid_after, 0).result() != os.getpid()
        end_workers(pool, stopped)
        assert not stopped and all(w.is_alive() for w in pool._processes.values())  # type: ignore[attr-defined]
    finally:
        pool.shutdown()
