"""``hpnet isolate``: find the one bad node, NIC or link of a cluster, in one job."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Mapping
from typing import Any

DESCRIPTION = """\
Run as every rank of one job (hpnet launch, torchrun, srun, mpirun, a Kubeflow
PyTorchJob / MPIJob) and find the node, rail (GPU and NIC) or link that makes the
cluster slow, in at most four rounds inside the job:

  0 drift     every node's versions, NICs, GID indexes, MTU, limits and the NCCL
              environment its ranks received; a node unlike the majority is named
  1 pairs     every node paired with another, all pairs at once, an all_reduce each;
              robust z-scores against the cluster (and --baseline)
  2 re-pair   each node of a slow pair with a node proven good: which side is bad
  3 rails     GPU i of the bad node with GPU i of a good one: which NIC/port

Each rank's NCCL log (NCCL_DEBUG=INFO) is read per round: a rank that fell back to
sockets, ran without GPUDirect RDMA or used another NIC than its peers is a
configuration fault with its fix, not a bad node.

  hpnet launch --hosts n1,...,n64 --nproc-per-node 8 -- hpnet isolate
  export MASTER_ADDR=$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -1)
  srun -N 64 --ntasks-per-node 8 hpnet isolate --report out/ --drain
  hpnet isolate --baseline last-week.json --json > today.json

Only a measured slowdown or an error from NCCL / the network on a test's link names a
node. A test the harness could not run (a group that never formed, a store timeout,
no memory for the buffer) proves nothing: its nodes are tested again with a good
partner, and a node still untested is INCONCLUSIVE, with the cause, never an outlier.
Nor is a node slow against round 1 but not against two good nodes measured beside it
(or right after it): the load changed between rounds; it is INCONCLUSIVE too.

--drain takes each node found bad out of the scheduler (Slurm: scontrol update
State=DRAIN; Kubernetes: kubectl cordon and a NoSchedule taint, with NODE_NAME set by
the manifest hpnet launch --engine k8s writes); without it the commands are printed.
Never a node without evidence from this run, a name the scheduler reads as a set of
nodes (ALL, a number), or a name several of the job's nodes share (fake hosts).

--baseline and --groups are read by rank 0 only (the one rank that uses them).

Exit 0: no outlier, every node judged; 1: outliers named (drift alone does not
fail); 2: inconclusive (a node could not be judged), bad usage or input, the rounds
could not run, or a --drain command failed. --json:
docs/isolate-schema.md.
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--device", choices=("auto", "cuda", "cpu"), default="auto")
    parser.add_argument(
        "--bytes", metavar="SIZE", help="per all_reduce (default: 64M on GPUs, 1M on CPUs)"
    )
    parser.add_argument("--iters", type=int, default=20, metavar="N", help="timed per test")
    parser.add_argument(
        "--baseline", metavar="FILE", help="an earlier run's --json: also catch a slow cluster"
    )
    parser.add_argument(
        "--groups",
        metavar="FILE",
        help="lines 'NODE GROUP' (rack or leaf switch): a fault shared by a group is named once",
    )
    parser.add_argument("--logs", metavar="DIR", help="keep the job's files in DIR")
    parser.add_argument("--report", metavar="DIR", help="write report.html and report.json")
    parser.add_argument(
        "--drain", action="store_true", help="take the nodes found bad out of the scheduler"
    )
    parser.add_argument("--seed", type=int, default=0, help="the pairing's seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print JSON")


MAX_FILE_BYTES = 64 << 20


def _read(path: str, flag: str, what: str) -> str:
    from hpnet.inputfile import FileRole, read_regular_file  # noqa: PLC0415

    role = FileRole(
        what=what, code="unreadable", too_large_code="isolate-input-too-large", fix=f"{flag} {what}"
    )
    return read_regular_file(path, role, max_bytes=MAX_FILE_BYTES).decode("utf-8", "replace")


def _groups(path: str) -> dict[str, str]:
    from hpnet.errors import InputError  # noqa: PLC0415

    groups: dict[str, str] = {}
    text = _read(path, "--groups", "a file of 'NODE GROUP' lines")
    for number, line in enumerate(text.splitlines(), 1):
        words = line.split("#", 1)[0].split()
        if not words:
            continue
        if len(words) != 2:
            raise InputError(
                f"line {number} is not 'NODE GROUP': {line[:80]!r}",
                code="bad-groups",
                where=f"--groups {path}:{number}",
                fix="one node and its group (rack, leaf switch) per line",
            )
        groups[words[0]] = words[1]
    return groups


def _options(ns: argparse.Namespace, *, rank0: bool) -> Any:
    """The run's options; the files (--baseline, --groups) are read by rank 0 only, the
    one rank that uses them (another node may not have them: no shared file system)."""
    from hpnet.bench.formulas import parse_size  # noqa: PLC0415
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.inputfile import parse_json  # noqa: PLC0415
    from hpnet.isolate.model import Baseline  # noqa: PLC0415
    from hpnet.isolate.run import IsolateOptions  # noqa: PLC0415

    if not 1 <= ns.iters <= 1000:
        raise UsageError(
            f"--iters {ns.iters}", code="usage", where="--iters", fix="--iters 1 to 1000"
        )
    try:
        size = parse_size(ns.bytes) if ns.bytes is not None else None
    except ValueError as exc:
        raise UsageError(
            str(exc), code="bad-size", where=f"--bytes {ns.bytes}", fix="--bytes 4 to 4G, e.g. 64M"
        ) from None
    if size is not None and not 4 <= size <= 1 << 32:
        raise UsageError(
            f"--bytes {ns.bytes}", code="usage", where="--bytes", fix="--bytes 4 to 4G"
        )
    baseline: dict[str, Any] | None = None
    if ns.baseline and rank0:
        fix = "--baseline the --json output of an earlier hpnet isolate"
        text = _read(ns.baseline, "--baseline", "an earlier run's --json")
        data = parse_json(text, source=ns.baseline, fix=fix)
        Baseline.from_json(data)  # a bad baseline is refused before the job runs
        assert isinstance(data, dict)  # noqa: S101 - from_json refuses anything else
        baseline = data
    return IsolateOptions(
        device=ns.device,
        bytes=size,
        iters=ns.iters,
        baseline=baseline,
        groups=_groups(ns.groups) if ns.groups and rank0 else None,
        keep_dir=ns.logs,
        seed=ns.seed,
    )


def _drain_for(
    outlier: Mapping[str, Any], nodes: list[str], schedulers: Mapping[str, list[str]]
) -> tuple[list[str], str | None]:
    """The scheduler commands that take an outlier's node out of service, or why none.

    Only a node or rail outlier of this run, with evidence, on a node whose scheduler
    name is its own: fake hosts on one machine (``NCCL_HOSTID``) share the machine's
    Slurm or Kubernetes name, and draining it would take the healthy ones with it."""
    from hpnet.isolate.drain import drain_commands, is_one_node, shown  # noqa: PLC0415

    node = outlier.get("node")
    if outlier["kind"] not in ("node", "rail") or not node:
        return [], None
    if node not in nodes or not outlier.get("evidence"):
        return [], f"{node} was not named with evidence in this run"
    if node not in schedulers:
        return [], (
            f"no scheduler name for {node} (Slurm's SLURMD_NODENAME, Kubernetes' NODE_NAME)"
        )
    scheduler, name = schedulers[node]
    sharing = sorted(n for n, (_, other) in schedulers.items() if other == name)
    if len(sharing) > 1:
        return [], (
            f"{scheduler} names {len(sharing)} of this job's nodes {name!r} "
            f"({', '.join(sharing[:4])}): draining it would take healthy ones too"
        )
    if not is_one_node(name):
        return [], f"{scheduler} reads the name {name!r} as a set of nodes"
    reason = f"{outlier['fault']} fault" + (
        f" on rail {outlier['rail']}" if outlier.get("rail") is not None else ""
    )
    commands = [shown(c) for c in drain_commands(scheduler, name, reason, outlier["fault"])]
    return commands, None if commands else f"{scheduler} does not accept the name {name!r}"


def result_data(result: Mapping[str, Any]) -> dict[str, Any]:
    """The JSON of a run: the job's shape, the verdict's fields at the top (so that it
    reads back as a --baseline), each outlier with its scheduler commands (or why it
    has none)."""
    from hpnet.jsonout import envelope  # noqa: PLC0415

    verdict = dict(result["verdict"])
    schedulers = result.get("scheduler", {})
    outliers = []
    for outlier in verdict.pop("outliers"):
        commands, why_not = _drain_for(outlier, result["nodes"], schedulers)
        outliers.append({**outlier, "drain": commands, "not_drained": why_not})
    inconclusive = verdict.get("inconclusive") or []
    status = "outliers" if outliers else "inconclusive" if inconclusive else "no-outlier"
    body = {
        "status": status,
        "nodes": result["nodes"],
        "rails": result["rails"],
        "backend": result["backend"],
        "bytes": result["bytes"],
        "iters": result["iters"],
        "outliers": outliers,
        **verdict,
        "files": result.get("files"),
    }
    return envelope(body, schema_version=1)


def _drain(data: Mapping[str, Any]) -> int:
    """Run each outlier's commands; the number that failed."""
    import shlex  # noqa: PLC0415

    from hpnet.runner import SubprocessRunner  # noqa: PLC0415

    runner = SubprocessRunner()
    failed = 0
    for outlier in data["outliers"]:
        if outlier.get("not_drained"):
            print(
                f"hpnet isolate: --drain: {outlier['not_drained']}: not drained",
                file=sys.stderr,
            )
    for outlier in data["outliers"]:
        for command in outlier["drain"]:
            done = runner(shlex.split(command), timeout_seconds=60)
            state = (
                "done" if done.ok else f"FAILED ({done.returncode}: {done.stderr.strip()[:200]})"
            )
            print(f"hpnet isolate: {command}: {state}", file=sys.stderr)
            failed += 0 if done.ok else 1
    return failed


def run(ns: argparse.Namespace) -> int:
    from hpnet.bench.run import launcher_ranks  # noqa: PLC0415
    from hpnet.cli.bench import _check_torch, check_output  # noqa: PLC0415
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.isolate.run import run_isolate  # noqa: PLC0415

    ranks = launcher_ranks(os.environ)
    if ranks is None:
        raise UsageError(
            "hpnet isolate runs as every rank of one job: no launcher's rank variables here",
            code="usage",
            where="hpnet isolate",
            fix="hpnet launch --hosts n1,n2,... --nproc-per-node 8 -- hpnet isolate "
            "(or torchrun / srun / mpirun)",
        )
    rank0 = ranks["RANK"] == "0"
    options = _options(ns, rank0=rank0)
    if ns.report and rank0:  # rank 0 writes it
        check_output(ns.report, flag="--report", directory=True)
    if ns.logs:
        check_output(ns.logs, flag="--logs", directory=True)
    _check_torch()
    result = run_isolate(options, os.environ, ranks)
    if result is None:  # not rank 0: rank 0 reports for the job
        return 0
    data = result_data(result)
    if ns.json:
        from hpnet.jsonout import dumps  # noqa: PLC0415

        print(dumps(data))
    else:
        from hpnet.render.isolate import render_isolate  # noqa: PLC0415

        print(render_isolate(data), end="")
    if ns.report:
        from hpnet.isolate.report import write_report  # noqa: PLC0415

        sys.stdout.flush()
        write_report(ns.report, data)
    from hpnet.launch.verdict import report_verdict  # noqa: PLC0415

    if ns.drain and _drain(data):
        return report_verdict(2)
    # inconclusive: the rounds could not judge every node (exit 2, as when they
    # cannot run), never a pass; under hpnet launch the verdict is a line, not a
    # failed rank (launch/verdict.py)
    return report_verdict({"outliers": 1, "inconclusive": 2}.get(data["status"], 0))
