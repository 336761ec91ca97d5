"""``hpnet check``: one command, one verdict — will jobs here use the fast network, at
the bandwidth they should?"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.check.model import CheckReport

DESCRIPTION = """\
Detect this node, resolve the NCCL environment for the profile, run the doctor, run a
short all_reduce benchmark under NCCL_DEBUG=INFO (over all local GPUs, then across two
fake NCCL hosts to exercise the network transport; gloo on CPU ranks where there is
no GPU), verify in NCCL's log which transports carried the traffic against what the
environment intends, compare the bandwidth with what the links give, and print one
verdict with the fixes in order of impact.

  hpnet check                          this node, the profile detected from the hardware
  hpnet check --profile pai-dlc-erdma  against a platform's prescription
  hpnet check --full --report out/     a longer sweep, and an HTML page with the JSON

With --logs DIR each run keeps its rank logs in a new directory of its own inside DIR
(check-<date>-<time>-<unique>, named in the report's notes).

--dry-run prints the plan: the stages (intra-node, across 2 fake hosts, cpu), their
ranks, GPUs and sizes, what each verifies; nothing is run.

--sysfs-root DIR (or a recorded .tree file) judges a recorded node by what it records
(detect, env, doctor, the plan for its GPUs) and runs no benchmark: a benchmark
measures the machine it runs on, not the recording. The stages are listed as not run,
and the verdict follows a live node's rules on what the record shows.

Exit 0: ready; 1: not ready (the first fix says why); 2: bad usage, or --report
could not be written (the report is printed); 130 (Ctrl-C) or 128 + N (signal N:
143 for SIGTERM): stopped, after printing and saving (--report) what was judged until
then, marked incomplete. --json: docs/check-schema.md.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", default="auto", help="the platform profile (default: auto)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="1 MiB to 256 MiB (the default)")
    mode.add_argument(
        "--full",
        action="store_true",
        help="NCCL on GPUs: 8 B to 1 GiB (gloo on CPUs runs its one sweep, 1 to 512 KiB)",
    )
    parser.add_argument(
        "--sysfs-root",
        default="/",
        metavar="DIR",
        help="judge a recorded node (a directory or a .tree file) by what it records: "
        "no benchmark runs, as it would measure this machine",
    )
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    parser.add_argument("--nproc", type=int, metavar="N", help="local ranks (default: GPUs, or 2)")
    parser.add_argument(
        "--logs",
        metavar="DIR",
        help="keep the benchmarks' rank logs in a new directory of this run's own inside DIR "
        "(with --all: in DIR, which the job's ranks share)",
    )
    parser.add_argument("--report", metavar="DIR", help="write report.html and report.json to DIR")
    parser.add_argument(
        "--all",
        action="store_true",
        help="under a launcher (hpnet launch, torchrun, mpirun, srun): every rank checks, "
        "rank 0 prints one report for the cluster",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help="detect, run the doctor and print the stages the check would run; run no "
        "benchmark (with --sysfs-root: planned for the recorded node's GPUs)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(ns: argparse.Namespace) -> int:
    from hpnet.check.run import CheckOptions, run_check  # noqa: PLC0415
    from hpnet.cli.bench import _check_torch, check_output  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    get_profile(ns.profile)  # a misspelled profile is a usage error before any work
    if ns.dry_run:
        return _dry_run(ns)
    # where the report and the logs go is checked now, not after the benchmarks
    if ns.report:
        check_output(ns.report, flag="--report", directory=True)
        for name in ("report.json", "report.html"):
            inside = os.path.join(ns.report, name)
            if os.path.lexists(inside):
                check_output(inside, flag="--report")
    if ns.logs:
        check_output(ns.logs, flag="--logs", directory=True)
    from hpnet.node.sysfs import FsRoot  # noqa: PLC0415

    # a recorded node is judged by its record, with no benchmark (hpnet.check.run): it
    # needs neither torch nor this machine's GPUs
    measured = ns.all or FsRoot(ns.sysfs_root).is_live
    if ns.nproc is not None and not ns.all and measured:  # --nproc 1000: refused now
        from hpnet.bench.run import local_defaults  # noqa: PLC0415

        local_defaults(ns.nproc, ns.device)
    if measured:
        _check_torch()
    options = CheckOptions(
        profile=ns.profile,
        mode="full" if ns.full else "quick",
        sysfs_root=ns.sysfs_root,
        device=ns.device,
        nproc=ns.nproc,
        keep_dir=ns.logs,
    )

    def progress(message: str) -> None:
        print(f"hpnet check: {message}", file=sys.stderr, flush=True)

    if ns.all:
        from hpnet.bench.run import launcher_ranks  # noqa: PLC0415
        from hpnet.check.cluster import run_cluster_check  # noqa: PLC0415
        from hpnet.errors import UsageError  # noqa: PLC0415

        ranks = launcher_ranks(os.environ)
        if ranks is None:
            raise UsageError(
                "--all needs a job: no launcher's rank variables here",
                code="usage",
                where="hpnet check --all",
                fix="hpnet launch --hosts n1,n2 --nproc-per-node 8 -- hpnet check --all "
                "(or torchrun / mpirun / srun)",
            )
        cluster_report = run_cluster_check(options, os.environ, ranks)
        if cluster_report is None:  # not rank 0: rank 0 reports for the job
            return 0
        from hpnet.launch.verdict import report_verdict  # noqa: PLC0415

        # under hpnet launch the verdict is a line, not a failed rank (launch/verdict.py)
        return report_verdict(_finish(ns, cluster_report, progress))
    else:

        def keep(partial: CheckReport) -> None:
            """Ctrl-C or SIGTERM: print and save what was judged (the report says it is
            incomplete, and what was stopped); the command then exits as interrupted."""
            progress(f"{partial.incomplete}: the report holds what was judged until then")
            _finish(ns, partial, progress, raise_unsaved=False)

        report = run_check(options, os.environ, progress=progress, on_interrupt=keep)
    return _finish(ns, report, progress)


def _run_info(ns: argparse.Namespace) -> dict[str, str]:
    """When, by which hpnet, where and how the report was made (issue 26: a saved report
    said none of it); the command line as typed, credentials in it redacted."""
    import datetime  # noqa: PLC0415
    import shlex  # noqa: PLC0415
    import socket  # noqa: PLC0415

    from hpnet import __version__  # noqa: PLC0415
    from hpnet.secrets import redact_text  # noqa: PLC0415

    words = tuple(getattr(ns, "command_line", ()) or ("hpnet", "check"))
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "hpnet": __version__,
        "host": socket.gethostname(),
        "command": redact_text(shlex.join(words)),
    }


def _finish(
    ns: argparse.Namespace,
    report: CheckReport,
    progress: Callable[[str], None],
    *,
    raise_unsaved: bool = True,
) -> int:
    """Print the report, then write --report. It is printed first: a report that
    cannot be written still shows (secrets redacted). With ``raise_unsaved`` False (an
    interrupted check, which exits as interrupted) a report that cannot be written is
    only named."""
    from hpnet.errors import HpnetError  # noqa: PLC0415

    report = dataclasses.replace(report, run=_run_info(ns))
    if ns.json:
        from hpnet.check.report import report_data  # noqa: PLC0415
        from hpnet.jsonout import dumps  # noqa: PLC0415

        print(dumps(report_data(report)))
    else:
        from hpnet.render.check import render_check  # noqa: PLC0415

        print(render_check(report), end="")
    if ns.report:
        from hpnet.check.report import write_report  # noqa: PLC0415

        sys.stdout.flush()
        try:
            write_report(ns.report, report)
        except HpnetError as exc:
            if raise_unsaved:
                raise
            print(exc.render(), file=sys.stderr)
        else:
            html, data = (os.path.join(ns.report, n) for n in ("report.html", "report.json"))
            progress(f"wrote {html} and {data}")
    return report.exit_code


def _dry_run(ns: argparse.Namespace) -> int:
    from hpnet.check.run import CheckOptions, dry_run  # noqa: PLC0415
    from hpnet.errors import UsageError  # noqa: PLC0415

    if ns.all or ns.report:
        raise UsageError(
            "--dry-run prints one node's plan: it runs nothing, and writes no report",
            code="usage",
            where="--dry-run with " + ("--all" if ns.all else "--report"),
            fix="hpnet check --dry-run (on each node: hpnet launch ... -- hpnet check --dry-run)",
        )
    options = CheckOptions(
        profile=ns.profile,
        mode="full" if ns.full else "quick",
        sysfs_root=ns.sysfs_root,
        device=ns.device,
        nproc=ns.nproc,
    )
    plan = dry_run(options, os.environ)
    if ns.json:
        from hpnet.check.plan import plan_data  # noqa: PLC0415
        from hpnet.jsonout import dumps  # noqa: PLC0415

        print(dumps(plan_data(plan)))
    else:
        from hpnet.render.check import render_plan  # noqa: PLC0415

        print(render_plan(plan), end="")
    return 0
