"""``hpnet verify``: NCCL debug logs -> which transport carried each connection."""

from __future__ import annotations

import argparse
import dataclasses
import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.artefacts.model import ArtefactFacts
    from hpnet.ncclog.model import NcclLog
    from hpnet.result import Expectation

DESCRIPTION = """\
Read NCCL debug logs (NCCL_DEBUG=INFO output of any NCCL from 2.3 on, behind mpirun,
srun or torchrun prefixes) and prove which transport every connection used: P2P,
SHM, NET/IB (with or without GPUDirect RDMA), NET/Socket, a plugin, CollNet, NVLS;
per host and per communicator; with known failure signatures, their causes and fixes.
Also read, in any mix with the logs: ncclras reports (text or JSON), PyTorch's
ProcessGroupNCCL watchdog and error text, XLA/JAX and wrapper (vLLM, SGLang, CuPy)
NCCL errors, and RCCL logs (said to be RCCL, not dated as NCCL).

  hpnet verify job.log                       one log (several: repeat; - is stdin)
  hpnet verify logs/                         a directory of per-rank logs
  hpnet verify job.log --expect net=ib,gdr   exit 1 unless inter-node traffic used
                                             IB with GPUDirect RDMA everywhere
  hpnet verify --run [--fake-hosts 2]        run a short all_reduce here and verify it

Exit 0: no error signature, and every --expect proven. Without --expect a log that
proves no transport (UNKNOWN: no connection lines) also exits 0; with --expect,
not proven is not met. 1: an error signature, or an --expect not met. 2: nothing
to judge (no NCCL lines, bad input). --json: docs/verify-schema.md.

Standard input and FIFOs (<(zcat job.log.gz)) are read as the log arrives: a stream
silent for 1 s is said to be waited for on stderr; --idle-timeout S stops waiting
after S seconds without data and judges what came (exit 2 if nothing did).
"""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class VerifyArgs:
    paths: tuple[str, ...]
    expect: str | None
    jobs: int | None
    run: bool
    fake_hosts: int | None
    nproc: int | None
    logs: str | None
    json: bool
    idle_timeout_seconds: float | None


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="log files, directories, or -")
    parser.add_argument(
        "--expect",
        metavar="SPEC",
        help="net=ib|socket|mnnvl|<plugin name>[,gdr|no-gdr]: what inter-node traffic must "
        "use (exit 1 unless the log proves it)",
    )
    parser.add_argument(
        "--jobs", type=int, metavar="N", help="worker processes for large logs (default: CPUs)"
    )
    parser.add_argument(
        "--run",
        action="store_true",
        help="run a short all_reduce over this node's GPUs with NCCL_DEBUG=INFO and verify it",
    )
    parser.add_argument(
        "--fake-hosts",
        type=int,
        metavar="K",
        help="with --run: split the GPUs into K NCCL hosts (NCCL_HOSTID) so that NCCL "
        "uses its network transport between them",
    )
    parser.add_argument("--nproc", type=int, metavar="N", help="with --run: ranks (default: GPUs)")
    parser.add_argument("--logs", metavar="DIR", help="with --run: keep the per-rank logs in DIR")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        metavar="S",
        help="stop reading standard input or a FIFO after S seconds without data, and judge "
        "what came (default: wait, saying so on stderr after 1 s)",
    )


def run(namespace: argparse.Namespace) -> int:
    args = VerifyArgs(
        paths=tuple(namespace.paths),
        expect=namespace.expect,
        jobs=namespace.jobs,
        run=namespace.run,
        fake_hosts=namespace.fake_hosts,
        nproc=namespace.nproc,
        logs=namespace.logs,
        json=namespace.json,
        idle_timeout_seconds=namespace.idle_timeout,
    )
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.ncclog.report import parse_expectation  # noqa: PLC0415

    expectation = None
    if args.expect is not None:
        try:
            expectation = parse_expectation(args.expect)
        except ValueError as exc:
            raise UsageError(
                str(exc),
                code="bad-expect",
                where=f"--expect {args.expect}",
                fix="write net=ib, net=socket, net=mnnvl or net=<plugin name>, "
                "optionally with ,gdr or ,no-gdr (comma-separated)",
            ) from None
    if args.idle_timeout_seconds is not None and not args.idle_timeout_seconds > 0:
        raise UsageError(
            "must be a number of seconds above 0",
            code="usage",
            where=f"--idle-timeout {args.idle_timeout_seconds:g}",
            fix="--idle-timeout 30",
        )
    if args.jobs is not None and args.jobs < 1:
        raise UsageError(
            "must be 1 or more", code="usage", where=f"--jobs {args.jobs}", fix="--jobs 4"
        )
    if not args.run:
        given = [
            flag
            for flag, value in (
                ("--fake-hosts", args.fake_hosts),
                ("--nproc", args.nproc),
                ("--logs", args.logs),
            )
            if value is not None
        ]
        if given:
            raise UsageError(
                f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} only with --run",
                code="usage",
                where="hpnet verify " + " ".join(given),
                fix="add --run to record a probe here, or leave them out to read logs",
            )
    if args.run:
        if args.paths:
            raise UsageError(
                "--run records its own log",
                code="usage",
                where="hpnet verify",
                fix="pass either --run or log paths",
            )
        if args.idle_timeout_seconds is not None:
            raise UsageError(
                "--idle-timeout bounds the wait for a log stream; --run records its own log",
                code="usage",
                where="hpnet verify --run --idle-timeout",
                fix="leave --idle-timeout out with --run",
            )
        from hpnet.verify.probe import run_probe  # noqa: PLC0415

        log = run_probe(nproc=args.nproc, fake_hosts=args.fake_hosts or 1, keep_dir=args.logs)
        facts: list[ArtefactFacts] = []
    else:
        if not args.paths:
            raise UsageError(
                "no log given",
                code="usage",
                where="hpnet verify",
                fix="hpnet verify job.log (or a directory, or - for stdin), or --run",
            )
        log, facts = _read(args)
    from hpnet.ncclog.read import no_cycle_collection  # noqa: PLC0415

    with no_cycle_collection():  # a large job's report: objects, no cycles
        return _answer(args, log, facts, expectation)


def _answer(
    args: VerifyArgs, log: NcclLog, facts: list[ArtefactFacts], expectation: Expectation | None
) -> int:
    """The report on ``log``, printed; the exit code."""
    from hpnet.ncclog.report import analyse  # noqa: PLC0415

    report = analyse(log, expectation)
    if args.run is False and facts:
        from hpnet.artefacts.judge import merge_artefacts  # noqa: PLC0415

        report = merge_artefacts(report, facts)
    if report.status == "UNKNOWN" and not report.ranks and not report.findings:
        from hpnet.errors import InputError  # noqa: PLC0415

        notes = "; ".join(report.unknowns[:-1]) if len(report.unknowns) > 1 else ""
        fix = (
            "run the job with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,NET) and pass its output"
        )
        tests = [p for p in args.paths if _is_nccl_tests_output(p)]
        if tests or log.placements:
            # a benchmark's own output: its numbers are read elsewhere
            fix = (
                "this is nccl-tests output: `hpnet bench import "
                f"{shlex.quote(tests[0]) if tests else 'FILE'}`"
                " reads its results; to see which transport carried them, rerun it with "
                "NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,NET and pass that output here"
            )
        raise InputError(
            "no NCCL debug lines" + (f" ({notes})" if notes else ""),
            code="no-nccl-lines",
            where=", ".join(args.paths) or "the probe",
            fix=fix,
        )
    if args.json:
        from hpnet.jsonout import dump_envelope  # noqa: PLC0415

        print(dump_envelope(report, schema_version=1))
    else:
        from hpnet.render.verify import render_verify  # noqa: PLC0415

        print(render_verify(report), end="")
    return 1 if report.status == "FAIL" else 0


def _read(args: VerifyArgs) -> tuple[NcclLog, list[ArtefactFacts]]:
    from hpnet.artefacts.reading import read_with_artefacts  # noqa: PLC0415
    from hpnet.ncclog.read import ProgressPrinter, collect_inputs  # noqa: PLC0415

    inputs, notes = collect_inputs(args.paths)
    if not inputs:
        from hpnet.errors import InputError  # noqa: PLC0415

        raise InputError(
            "no readable text log: " + "; ".join(notes[:3]),
            code="no-log",
            where=", ".join(args.paths),
            fix="pass the NCCL debug log (text written with NCCL_DEBUG=INFO)",
        )
    return read_with_artefacts(
        inputs,
        jobs=args.jobs,
        progress=ProgressPrinter("hpnet verify"),
        notes=notes,
        idle_timeout_seconds=args.idle_timeout_seconds,
        waiting=_say_waiting,
    )


def _say_waiting(message: str) -> None:
    import sys  # noqa: PLC0415

    print(f"hpnet verify: {message}", file=sys.stderr, flush=True)


def _is_nccl_tests_output(path: str) -> bool:
    """Does the start of ``path`` read like nccl-tests' output (its parameter line, its
    device table or its summary)?"""
    import os  # noqa: PLC0415
    import stat  # noqa: PLC0415

    try:
        # a regular file only: a FIFO's open would wait for a writer (its log was read)
        if path == "-" or not stat.S_ISREG(os.stat(path).st_mode):
            return False
        with open(path, "rb") as handle:
            head = handle.read(1 << 16)
    except OSError:
        return False
    return any(
        mark in head for mark in (b"nGpus ", b"# Using devices", b"Avg bus bandwidth", b"busbw")
    )
