"""Plan and run ``hpnet bench``: local ranks (one per GPU, or N CPU ranks), or this
process as one rank of a job another launcher started.

The plan (:class:`BenchPlan`: the spec every rank gets, their argv and environment) is
built first and has no side effects; :func:`run_plan` executes it through
:mod:`hpnet.localrun` and reads rank 0's results. The ranks inherit the caller's
environment without its secrets (:func:`hpnet.localrun.inheritable_env`). Rank 0 keeps
its rows in a result file after every size, so that a rank that fails, Ctrl-C or a
SIGTERM / SIGHUP to hpnet loses none of them: the report says why it is incomplete.
Under torchrun, mpirun + ``hpnet launch``, or srun (RANK and WORLD_SIZE set),
:func:`run_in_launcher` runs the worker in this process instead; which of the two, and
how many local ranks, :mod:`hpnet.bench.ranks` says.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import shutil
import signal
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from hpnet.bench.memory import killed_note
from hpnet.bench.model import BenchReport, BenchSpec, average_busbw, report_from_data
from hpnet.bench.rank_logs import ProgressEcho, last_line, port_taken, port_taken_in
from hpnet.bench.ranks import launcher_ranks, local_defaults
from hpnet.bench.train import TrainSpec
from hpnet.errors import HpnetError, InputError, Terminated
from hpnet.node.sysfs import FsRoot

# launcher_ranks and local_defaults (hpnet.bench.ranks) are looked up here by the CLI
# and the check, where tests replace them
__all__ = [
    "BenchPlan",
    "check_memory",
    "launcher_ranks",
    "local_defaults",
    "plan_local",
    "run_in_launcher",
    "run_plan",
]

#: what a bench rank needs beyond the caller's environment
RANK_ENV = {"PYTHONUNBUFFERED": "1"}
TIMEOUT_SECONDS = 3600.0


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class BenchPlan:
    nproc: int
    device: str  # cuda or cpu
    fake_hosts: int
    spec: BenchSpec | TrainSpec
    argv: tuple[str, ...]  # the worker's argv, without the spec and result paths
    rank_env: tuple[dict[str, str], ...]  # only what hpnet sets


def plan_local(
    spec: BenchSpec | TrainSpec,
    *,
    nproc: int,
    device: str,
    port: int,
    python: str,
    fake_hosts: int = 1,
    worker: str = "hpnet.bench.worker",
) -> BenchPlan:
    """Every local rank's environment (pure). ``fake_hosts`` > 1 gives groups of ranks
    different NCCL_HOSTID values: NCCL then uses its network transport between them."""
    if nproc < 1:
        raise InputError(
            "needs at least one rank", code="usage", where=f"--nproc {nproc}", fix="--nproc 2"
        )
    if fake_hosts < 1 or fake_hosts > nproc:
        raise InputError(
            f"cannot split {nproc} rank(s) into {fake_hosts} hosts",
            code="usage",
            where=f"--fake-hosts {fake_hosts}",
            fix=f"use 1 to {nproc}",
        )
    envs = []
    for rank in range(nproc):
        env = dict(RANK_ENV)
        env.update(
            RANK=str(rank),
            WORLD_SIZE=str(nproc),
            LOCAL_RANK=str(rank),
            LOCAL_WORLD_SIZE=str(nproc),
            MASTER_ADDR="127.0.0.1",
            MASTER_PORT=str(port),
        )
        if fake_hosts > 1:
            # exactly K hosts, as even as the ranks allow (4 ranks, K=3: 0 1 | 2 | 3)
            env["NCCL_HOSTID"] = f"hpnet-fake-host{rank * fake_hosts // nproc}"
        envs.append(env)
    return BenchPlan(
        nproc=nproc,
        device=device,
        fake_hosts=fake_hosts,
        spec=spec,
        argv=(python, "-m", worker),
        rank_env=tuple(envs),
    )


def check_memory(spec: BenchSpec, *, nproc: int, device: str, fs_root: str = "/") -> None:
    """Refuse, before any rank starts, a CPU sweep whose ``nproc`` local ranks cannot
    fit the memory this machine has available (:func:`hpnet.bench.memory.check_fits`;
    InputError ``not-enough-memory``). GPU ranks keep their buffers on the GPUs: not
    checked. ``fs_root``: where proc/meminfo is read (a planted one in tests)."""
    if device != "cpu" or not spec.sizes:
        return
    from hpnet.bench.memory import check_fits  # noqa: PLC0415

    check_fits(spec.ops, spec.sizes, spec.dtype, nproc=nproc, root=FsRoot(fs_root))


def _report(
    data: Mapping[str, Any], metadata: Mapping[str, Any], *, incomplete: str | None = None
) -> BenchReport:
    runs = []
    for run in data["runs"]:
        rows = run["rows"]
        failed = sum(
            1
            for row in rows
            for placement in ("out_of_place", "in_place")
            if row.get(placement) and (row[placement].get("wrong") or 0) > 0
        )
        runs.append(dict(run, out_of_bounds=failed))
    report = report_from_data(
        {
            "runs": runs,
            "metadata": {**(data.get("metadata") or {}), **metadata},
            "incomplete": incomplete,
        },
        source="hpnet bench",
    )
    return dataclasses.replace(
        report,
        runs=tuple(
            dataclasses.replace(run, avg_busbw_gbps=average_busbw(run.rows)) for run in report.runs
        ),
    )


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class RanksOutcome:
    """What the local ranks left: rank 0's result file (None if none was written, or
    not complete when ``failure`` says why) and where their logs are. ``interrupted``:
    the Ctrl-C (KeyboardInterrupt) or SIGTERM / SIGHUP (Terminated) that stopped them,
    to be raised again once the rows are kept."""

    data: dict[str, Any] | None
    failure: str | None
    directory: str
    interrupted: BaseException | None = None
    #: the rendezvous port was taken (EADDRINUSE in a rank's log)
    port_taken: bool = False
    #: the failed rank was killed by SIGKILL, by the out-of-memory killer for certain
    #: or most likely (``failure`` says which; :func:`hpnet.bench.memory.killed_note`)
    out_of_memory: bool = False


def execute(
    plan: BenchPlan,
    *,
    environ: Mapping[str, str],
    keep_dir: str | None = None,
    progress: bool = True,
    fs_root: str = "/",
) -> RanksOutcome:
    """Start the plan's ranks, echo rank 0's progress, wait, read rank 0's result.
    ``fs_root``: where /proc and /sys/fs/cgroup are read (the out-of-memory killer's
    counter), a planted tree in tests."""
    directory = keep_dir or tempfile.mkdtemp(prefix="hpnet-bench-")
    with _own_directory(directory):
        return _execute_in(
            plan, directory, environ=environ, keep_dir=keep_dir, progress=progress, fs_root=fs_root
        )


@contextlib.contextmanager
def _own_directory(directory: str) -> Iterator[None]:
    """Hold ``directory`` for one run: a second ``hpnet bench --logs DIR`` at the same
    time is refused instead of mixing its ranks' files with this one's. The lock
    (flock) goes with the process, however it ends."""
    try:
        os.makedirs(directory, exist_ok=True)
        handle = open(os.path.join(directory, ".hpnet-bench.lock"), "a")  # noqa: SIM115
    except OSError as exc:
        raise InputError(
            f"cannot keep the rank logs there: {exc.strerror or exc}",
            code="unwritable",
            where=directory,
            fix="--logs a directory you own",
        ) from None
    import fcntl  # noqa: PLC0415 - POSIX only, as the ranks' sessions are

    with handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                "another hpnet bench is running with its rank logs in this directory",
                code="logs-in-use",
                where=directory,
                fix="give each run a --logs directory of its own, or wait for the other",
            ) from None
        yield


def _execute_in(
    plan: BenchPlan,
    directory: str,
    *,
    environ: Mapping[str, str],
    keep_dir: str | None,
    progress: bool,
    fs_root: str,
) -> RanksOutcome:
    from hpnet.bench.memory import oom_kills  # noqa: PLC0415
    from hpnet.localrun import (  # noqa: PLC0415
        RankSpec,
        describe_exit,
        first_failure,
        inheritable_env,
        run_ranks,
    )
    from hpnet.outputfile import write_file  # noqa: PLC0415

    spec_path = os.path.join(directory, "spec.json")
    result_path = os.path.join(directory, "result.json")
    # a result left by an earlier run in --logs DIR must not pass for this one's
    with contextlib.suppress(FileNotFoundError):
        os.unlink(result_path)
    # --logs DIR may be shared: a symlink planted at spec.json is replaced, not followed
    write_file(spec_path, json.dumps(dataclasses.asdict(plan.spec)))
    base = inheritable_env(environ)  # what a remote rank cannot see, a local one must not
    specs = [
        RankSpec(
            rank=rank,
            argv=(*plan.argv, spec_path, result_path),
            env={**base, **plan.rank_env[rank]},
            log_path=os.path.join(directory, f"rank{rank}.log"),
        )
        for rank in range(plan.nproc)
    ]
    echo = ProgressEcho(specs[0].log_path) if progress else None
    oom_before = oom_kills(FsRoot(fs_root))
    started = time.monotonic()
    try:
        results = run_ranks(specs, timeout_seconds=TIMEOUT_SECONDS, on_tick=echo)
    except (KeyboardInterrupt, Terminated) as exc:  # the ranks are ended by now
        if echo is not None:
            echo(time.monotonic() - started, final=True)
        return RanksOutcome(
            data=_read_result(result_path),
            failure=stopped_by(exc),
            directory=directory,
            interrupted=exc,
        )
    if echo is not None:
        echo(time.monotonic() - started, final=True)
    failed = [r for r in results if not r.ok]
    data = _read_result(result_path)
    if failed or data is None or not data.get("complete"):
        # the rank that failed first on its own, not one hpnet ended because of it
        first = first_failure(results) or (failed[0] if failed else results[0])
        tail = last_line(first.log_path)
        how = describe_exit(first) if not first.ok else "exited with 0 but left no complete result"
        oom = None
        if first.returncode == -signal.SIGKILL and first.ended_by is None:
            oom = killed_note(oom_before, oom_kills(FsRoot(fs_root)), _need_text(plan))
        if oom is not None:
            how += f": {oom}; use a smaller -e or fewer --nproc"
        what = f"rank {first.rank} {how}" + (f" (its log ends: {tail})" if tail and oom else "")
        if tail and not oom:
            what += f": {tail}"
        taken = any(port_taken_in(r.log_path) for r in failed)
        if taken:
            port = plan.rank_env[0].get("MASTER_PORT", "?")
            what = (
                f"the rendezvous port {port} on 127.0.0.1 is taken (EADDRINUSE: address already "
                f"in use), so the ranks could not meet; {what}"
            )
        return RanksOutcome(
            data=data,
            failure=what,
            directory=directory,
            port_taken=taken,
            out_of_memory=oom is not None,
        )
    if keep_dir is None:
        shutil.rmtree(directory, ignore_errors=True)
    return RanksOutcome(data=data, failure=None, directory=directory)


def _need_text(plan: BenchPlan) -> str | None:
    """``about 3.3 GiB per rank, 6.6 GiB for 2 ranks``: what the plan's CPU ranks need
    (:func:`hpnet.bench.memory.rank_need_bytes`); None for GPU ranks and training."""
    from hpnet.bench.memory import gib, rank_need_bytes  # noqa: PLC0415

    spec = plan.spec
    if plan.device != "cpu" or not isinstance(spec, BenchSpec) or not spec.sizes:
        return None
    need = rank_need_bytes(spec.ops, spec.sizes, spec.dtype, plan.nproc)
    return f"about {gib(need)} per rank, {gib(need * plan.nproc)} for {plan.nproc} ranks"


def run_plan(
    plan: BenchPlan | Callable[[int], BenchPlan],
    *,
    environ: Mapping[str, str],
    metadata: Mapping[str, Any],
    keep_dir: str | None = None,
    progress: bool = True,
    on_interrupt: Callable[[BenchReport], None] | None = None,
    fs_root: str = "/",
) -> BenchReport:
    """Run a collective sweep's ranks (``plan``, or a function of the rendezvous port
    that makes it: then a port taken meanwhile is retried on another); the report
    holds every row measured, also when a rank failed part-way (``incomplete`` says
    why); HpnetError when none was.

    Ctrl-C or a SIGTERM / SIGHUP ends the ranks; the rows measured until then go to
    ``on_interrupt`` (to be printed and saved) as a report marked incomplete, and the
    KeyboardInterrupt or :class:`~hpnet.errors.Terminated` is raised again, so that
    the command still exits as interrupted (130, 128 + the signal).
    """
    if callable(plan):
        outcome = execute_with_port(
            plan, environ=environ, keep_dir=keep_dir, progress=progress, fs_root=fs_root
        )
    else:
        outcome = execute(
            plan, environ=environ, keep_dir=keep_dir, progress=progress, fs_root=fs_root
        )
    data = outcome.data
    measured = data is not None and any(run["rows"] for run in data.get("runs", ()))
    if outcome.interrupted is not None:
        if data is None or not measured:
            if keep_dir is None:  # nothing measured: no directory of logs to leave behind
                shutil.rmtree(outcome.directory, ignore_errors=True)
            raise outcome.interrupted
        partial = _report(
            data,
            metadata,
            incomplete=f"{outcome.failure} before the sweep's end (rank logs: {outcome.directory})",
        )
        try:
            if on_interrupt is not None:
                on_interrupt(partial)
        finally:  # whatever keeping the rows met, the command exits as interrupted
            raise outcome.interrupted
    if outcome.failure is None and data is not None:
        return _report(data, metadata)
    failure = outcome.failure or "no result"
    if data is None or not measured:
        if outcome.port_taken:
            raise HpnetError(
                failure,
                code="port-taken",
                where=os.path.join(outcome.directory, "rank0.log"),
                fix="another process took the free port hpnet chose (a new one on each of "
                "its tries): rerun, and if it keeps happening see what takes the ports "
                "(ss -ltnp)",
            )
        if outcome.out_of_memory:
            raise HpnetError(
                failure,
                code="out-of-memory",
                where=os.path.join(outcome.directory, "rank0.log"),
                fix="a smaller largest size (-e) or fewer ranks (--nproc); "
                "`hpnet bench --device cpu` refuses a sweep that cannot fit MemAvailable",
            )
        raise HpnetError(
            failure,
            code="bench-failed",
            where=os.path.join(outcome.directory, "rank0.log"),
            fix="read the rank logs in " + outcome.directory,
        )
    # the rows measured before the failure are results too: keep them
    return _report(data, metadata, incomplete=f"{failure} (rank logs: {outcome.directory})")


def stopped_by(exc: BaseException) -> str:
    """``stopped by SIGINT (Ctrl-C)``, ``stopped by SIGTERM``: what ended a run."""
    import signal  # noqa: PLC0415

    if isinstance(exc, Terminated):
        try:
            return f"stopped by {signal.Signals(exc.signum).name}"
        except ValueError:
            return f"stopped by signal {exc.signum}"
    return "stopped by SIGINT (Ctrl-C)"


def execute_with_port(
    build: Callable[[int], BenchPlan],
    *,
    environ: Mapping[str, str],
    keep_dir: str | None = None,
    progress: bool = True,
    attempts: int = 3,
    fs_root: str = "/",
) -> RanksOutcome:
    """:func:`execute` the plan ``build(port)`` makes, on a new free port when the
    last one was taken before rank 0 could bind it."""
    from hpnet.localrun import free_port  # noqa: PLC0415

    def attempt() -> RanksOutcome:
        plan = build(free_port())
        return execute(plan, environ=environ, keep_dir=keep_dir, progress=progress, fs_root=fs_root)

    outcome = attempt()
    for _ in range(attempts - 1):
        if outcome.interrupted is not None:
            break
        if not (port_taken(outcome.failure) and outcome.data is None):
            break
        outcome = attempt()
    return outcome


def _read_result(path: str) -> dict[str, Any] | None:
    try:
        with open(path) as handle:
            data = json.load(handle)
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def run_in_launcher(
    spec: BenchSpec,
    *,
    ranks: Mapping[str, str],
    metadata: Mapping[str, Any],
    checkpoint_path: str | None = None,
) -> BenchReport | None:
    """Run as one rank of a launcher's job; rank 0 returns the report, the others None.
    With ``checkpoint_path`` rank 0 keeps the rows measured so far there."""
    from hpnet.bench import worker  # noqa: PLC0415

    def checkpoint(data: dict[str, Any]) -> None:
        if checkpoint_path:
            worker.write_json(checkpoint_path, data)

    data = worker.run(dataclasses.asdict(spec), ranks, checkpoint=checkpoint)
    return None if data is None else _report(data, metadata)


def metadata(argv: Sequence[str], environ: Mapping[str, str]) -> dict[str, Any]:
    """What makes two results comparable: the command, NCCL_* settings, this node.
    A value that holds a credential is ``<redacted>`` (:func:`hpnet.secrets.redact`)."""
    import platform  # noqa: PLC0415

    from hpnet import __version__  # noqa: PLC0415
    from hpnet.secrets import redact, redact_text  # noqa: PLC0415

    return {
        "hpnet": __version__,
        "command": [redact_text(arg) for arg in argv],
        "nccl_env": {k: redact(k, v) for k, v in sorted(environ.items()) if k.startswith("NCCL_")},
        "node": platform.node(),
        "python": platform.python_version(),
        "time": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
