"""``hpnet hang``: which rank, which group, which collective, and why a job is stuck."""

from __future__ import annotations

import argparse
import dataclasses
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.artefacts.model import RasReport

DESCRIPTION = """\
Read what a stuck job left (every rank's PyTorch Flight Recorder dump and the ranks'
logs, in the folders or files given) and say why it is stuck, per process group:

  mismatch        ranks called different collectives (op, size, dtype) at the same
                  sequence number: a program bug
  never-entered   some ranks never reached the collective the others wait in: they
                  are stuck before it, in their own work or another group
  gone / silent   a rank left no dump while the others wait: it died (its peers lost
                  the connection) or froze
  stuck-in-collective
                  every rank entered and none completed: the network or a GPU

Make a job leave the dumps: TORCH_FR_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1
TORCH_FR_DUMP_TEMP_FILE=<shared folder>/nccl_trace_rank_ on every rank (hpnet launch
--hang-capture DIR sets them). NCCL's logs (NCCL_DEBUG=INFO, one file per process) in
the folders add where each rank named ran: host, GPU, NIC, transports, WARNs. Stacks of
the stuck processes (`py-spy dump --pid P` of each, or gdb's bt) saved there say where
each waits, and which one the others wait for. The launcher's output (torchrun,
mpirun, srun, vLLM) adds the processes that ended: which first, and by which signal.

  hpnet hang /shared/job-1234/
  hpnet hang --ras node7 /shared/job-1234/        # and ask the running job's NCCL RAS
  hpnet hang --json /shared/job-1234/ > verdict.json
  hpnet hang --report out/ /shared/job-1234/       # out/report.html: ranks x collectives

Exit 0: no hang (every rank of every group reached the same collective); 1: stuck
(or errors whose cause the dumps do not show); 2: nothing to read. --json:
docs/hang-schema.md.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("paths", nargs="*", metavar="PATH", help="folders or files of the job")
    parser.add_argument(
        "--ras",
        metavar="HOST[:PORT]",
        help="also ask the running job's NCCL RAS service (NCCL 2.24+; the job's "
        "NCCL_RAS_ADDR, localhost:28028 by default) for its live status",
    )
    parser.add_argument(
        "--world",
        type=int,
        metavar="N",
        help="the job's number of ranks (WORLD_SIZE): a rank that left no dump and no log is "
        "then known to be missing",
    )
    parser.add_argument(
        "--report",
        metavar="DIR",
        help="write report.html (the ranks x sequence numbers of each group) and report.json",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace) -> int:
    from hpnet.hang.collect import collect  # noqa: PLC0415
    from hpnet.hang.verdict import judge_evidence  # noqa: PLC0415

    if args.world is not None and not 1 <= args.world <= 1 << 20:
        from hpnet.errors import UsageError  # noqa: PLC0415

        raise UsageError(
            f"--world {args.world}: not a number of ranks",
            code="bad-count",
            fix="--world the job's WORLD_SIZE (1 or more)",
        )
    if args.report:  # where the report goes is checked before any work
        from hpnet.cli.bench_output import check_output  # noqa: PLC0415

        check_output(args.report, flag="--report", directory=True)
    if not args.paths and not args.ras:
        from hpnet.errors import UsageError  # noqa: PLC0415

        raise UsageError(
            "nothing to read",
            code="usage",
            fix="hpnet hang FOLDER (the job's dumps and logs), or --ras HOST of a running job",
        )
    live = _ask_ras(args.ras) if args.ras else ()
    evidence = collect(args.paths, require=not live)
    if live:
        evidence = dataclasses.replace(evidence, ras=(*evidence.ras, *live))
    report = judge_evidence(evidence, world=args.world)
    from hpnet.hang.model import SCHEMA_VERSION  # noqa: PLC0415
    from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

    document = dumps(
        envelope(report, schema_version=SCHEMA_VERSION, after={"exit_code": report.exit_code})
    )
    if args.json:
        sys.stdout.write(document + "\n")
    else:
        from hpnet.hang.render import render_hang  # noqa: PLC0415

        sys.stdout.write(render_hang(report))
    if args.report:
        from hpnet.hang.report import write_report  # noqa: PLC0415

        page, data = write_report(report, args.report, document + "\n")
        print(f"hpnet hang: wrote {page} and {data}", file=sys.stderr)
    return report.exit_code


def _ask_ras(addr: str) -> tuple[RasReport, ...]:
    """The running job's RAS status, read as a saved ``ncclras`` report is."""
    from hpnet.artefacts.scan import read_artefacts  # noqa: PLC0415
    from hpnet.errors import InputError  # noqa: PLC0415
    from hpnet.hang.raslive import query  # noqa: PLC0415

    print(f"hpnet hang: asking NCCL RAS at {addr} ...", file=sys.stderr)
    live = query(addr)
    found = read_artefacts(f"ras://{live.addr}", live.text).ras
    if not found:
        raise InputError(
            f"the RAS service answered, but not with a status report: {live.text[:120]!r}",
            code="ras-query",
            where=f"--ras {addr}",
            fix="query it with NCCL's own client (ncclras -v) to see what it says",
        )
    return found
