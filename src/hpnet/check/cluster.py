"""``hpnet check --all``: every rank of a launcher's job checks its node and reports to
rank 0, which prints one report for the cluster.

Each rank gathers its facts here (its node, the NCCL_* environment it actually got,
versions; the node's first rank also runs the doctor), then runs
:mod:`hpnet.check.cluster_worker` as a child process under NCCL_DEBUG=INFO with its
own NCCL_DEBUG_FILE: a job-wide all_reduce sweep, each node's own all_reduce, a ring of
node-to-node hops, and every rank's facts and NCCL log gathered on rank 0. Rank 0 then
verifies the logs and says what stands out: ranks whose environment differs from the
others', versions that differ between nodes, nodes whose doctor fails, the
inter-node transport against the intent, and nodes slower than 80% of the median.

A node is what NCCL takes for one: NCCL_HOSTID when set (fake hosts), else the host
name.

The child is the rank's worker (:mod:`hpnet.cluster.spawn`: the rank's environment
without its secrets, ended with its rank), and a secret NCCL_* value is ``<redacted>``
in the facts (:func:`hpnet.cluster.facts.nccl_environment`; and so in the report and
its files). With ``--logs DIR`` the job keeps
its files in ``DIR/check-all-<rendezvous address>-<port>``: one directory per job
(two jobs at once cannot share a rendezvous), whose gathered NCCL logs are replaced,
never mixed, by a later job's.
"""

from __future__ import annotations

import dataclasses
import json
import os
import statistics
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from hpnet.check.execute import stage_from, verify_logs
from hpnet.check.impact import CHECK_IMPACT
from hpnet.check.judge import doctor_problems, ordered, verdict, verify_problems
from hpnet.check.model import (
    CheckReport,
    ClusterNode,
    ClusterView,
    EnvMismatch,
    PortFact,
    RankFacts,
)
from hpnet.check.plan import RDMA_TRANSPORTS, StageKind, cluster_stage
from hpnet.check.run import CheckOptions
from hpnet.cluster.drift import UNSET, DriftKind, drift
from hpnet.cluster.facts import RankPlace, job_nccl, nccl_environment, physical_gpus
from hpnet.cluster.folder import job_directory, read_result
from hpnet.errors import HpnetError
from hpnet.result import Problem, Verdict

if TYPE_CHECKING:
    from hpnet.ncclog.report import VerifyReport

__all__ = ["run_cluster_check"]

SLOW_FRACTION = 0.8
#: a median of fewer values says nothing about which one is off
MIN_TO_COMPARE = 3
TIMEOUT_SECONDS = 900.0


def local_facts(
    environ: Mapping[str, str], ranks: Mapping[str, str], profile: str
) -> dict[str, Any]:
    """What this rank saw (:class:`~hpnet.check.model.RankFacts` as JSON); the node's
    first rank adds the doctor's verdict and versions."""
    place = RankPlace.of(environ, ranks)
    facts: dict[str, Any] = {**dataclasses.asdict(place), "nccl_env": nccl_environment(environ)}
    if place.local_rank == 0:
        from hpnet.cluster.facts import node_inventory  # noqa: PLC0415
        from hpnet.doctor.gather import diagnose  # noqa: PLC0415

        inventory = node_inventory(environ)
        versions = inventory.versions
        facts["gpus"] = len(inventory.gpus)
        facts["gpu_names"] = sorted({g.name for g in inventory.gpus})
        facts["ports"] = [
            dataclasses.asdict(
                PortFact(
                    name=f"{d.name}:{p.number}",
                    rate=p.rate,
                    state=getattr(p.state, "name", str(p.state)),
                    rate_gbps=p.rate_gbps,
                )
            )
            for d in inventory.rdma_devices
            for p in d.ports
        ]
        facts["driver"] = versions.nvidia_driver if versions else None
        facts["cuda"] = versions.cuda_driver if versions else None
        facts["nccl_version"] = job_nccl(versions)
        doctor = diagnose(profile=profile, environment=dict(environ))
        # every WARN and FAIL, judged as the node view judges them (hpnet.check.judge)
        facts["doctor"] = {
            "verdict": doctor.verdict.value,
            "findings": [
                {"id": c.id, "status": c.status.value, "summary": c.summary,
                 "evidence": list(c.evidence[:3]), "fix": c.fix}
                for c in doctor.checks
                if c.status.value in ("FAIL", "WARN")
            ],
        }  # fmt: skip
    return facts


def run_cluster_check(
    options: CheckOptions, environ: Mapping[str, str], ranks: Mapping[str, str]
) -> CheckReport | None:
    """This rank's part; rank 0 returns the cluster's report, the others None."""
    from hpnet.bench.model import BenchSpec  # noqa: PLC0415
    from hpnet.cluster import spawn  # noqa: PLC0415
    from hpnet.cluster.spawn import worker_env  # noqa: PLC0415
    from hpnet.outputfile import write_file  # noqa: PLC0415

    device = "cpu" if options.device == "cpu" else _device()
    chosen = cluster_stage(options.mode, device, int(ranks["WORLD_SIZE"])).sweep
    spec = BenchSpec(
        ops=("all_reduce",), device=device, per_iteration=False, sizes=chosen.sizes_bytes,
        iters=chosen.iters, warmup=chosen.warmup,
    )  # fmt: skip
    facts = local_facts(environ, ranks, options.profile)
    facts["spec"] = dataclasses.asdict(spec)
    rank = ranks["RANK"]
    out = job_directory(options.keep_dir, ranks)
    facts_path = os.path.join(out, f"facts.rank{rank}.json")
    write_file(facts_path, json.dumps(facts))
    ended = spawn.run_worker(
        [sys.executable, "-m", "hpnet.check.cluster_worker", facts_path, out],
        worker_env(environ, ranks, os.path.join(out, f"nccl.rank{rank}.%h.%p.log")),
        part="cluster benchmark",
        timeout_seconds=TIMEOUT_SECONDS,
        echo=False,
    )
    if not ended.ok:
        raise HpnetError(
            ended.failure(rank),
            code="check-failed",
            where=out,
            fix="rerun with --logs DIR and read the rank logs and NCCL logs there",
        )
    if rank != "0":
        return None
    return _report(options, read_result(out), out)


def inter_node_by_node(verify: VerifyReport) -> dict[str, list[str]]:
    """What NCCL's own log says each node's ranks used towards other nodes. A node is
    named as :func:`hpnet.cluster.facts.node_id` names it: ``NCCL_HOSTID`` where set,
    else the host name, which is how the log's processes are placed
    (``ProcessRow.nccl_host`` / ``host``)."""
    found: dict[str, set[str]] = {}
    for row in verify.ranks:
        name = row.nccl_host or row.host
        if name:
            found.setdefault(name, set()).update(row.inter_node)
    return {name: sorted(transports) for name, transports in found.items()}


def _device() -> str:
    from hpnet.bench.run import local_defaults  # noqa: PLC0415

    return local_defaults(1, "auto")[1]


def _has_nccl_lines(out: str) -> bool:
    """Whether the gathered logs hold NCCL's lines (gloo ranks write none)."""
    directory = os.path.join(out, "logs")
    for name in os.listdir(directory):
        with open(os.path.join(directory, name), errors="replace") as handle:
            if "NCCL INFO" in handle.read(1 << 16):
                return True
    return False


def _majority_env(facts: Sequence[RankFacts]) -> dict[str, str]:
    """The environment most ranks started with, whole (the report shows it)."""
    counted = Counter(json.dumps(f.nccl_env, sort_keys=True) for f in facts)
    return dict(json.loads(counted.most_common(1)[0][0]))


def _shown(value: str | None) -> str:
    return "(unset)" if value in (None, UNSET) else str(value)


def _agreement(
    facts: Sequence[RankFacts], leaders: Mapping[str, RankFacts]
) -> tuple[list[EnvMismatch], list[str], list[Problem]]:
    """Ranks whose NCCL environment differs from the strict majority's, per variable, as
    isolate judges nodes (:func:`hpnet.cluster.drift.drift`): with no strict majority (2
    ranks that disagree) no rank is named, every side is; versions that differ between
    nodes."""
    by_rank = {str(f.rank): {f"env.{k}": v for k, v in f.nccl_env.items()} for f in facts}
    named: dict[int, list[str]] = {}
    problems = []
    for found in drift(by_rank, per_node_keys=()):
        name = found.key.removeprefix("env.")
        if found.kind is DriftKind.DIFFERS and found.node is not None:
            named.setdefault(int(found.node), []).append(
                f"{name}={_shown(found.value)} (others: {_shown(found.majority_value)})"
            )
            continue
        sides: dict[str, list[str]] = {}
        for rank, env in by_rank.items():
            sides.setdefault(_shown(env.get(found.key)), []).append(rank)
        problems.append(
            Problem(
                impact=CHECK_IMPACT["cluster:env"],
                what=f"the ranks disagree on {name} and no value has a majority: which one "
                "the job meant is not known",
                code="cluster:env",
                evidence=tuple(
                    f"{name}={value} on rank(s) {', '.join(ranks)}"
                    for value, ranks in sorted(sides.items())
                )[:5],
                fix="start every rank with the same environment: hpnet launch carries it "
                "(or set it in the job's spec, not in one node's shell)",
            )
        )
    mismatches = []
    for fact in facts:
        differs = named.get(fact.rank)
        if differs:
            mismatches.append(EnvMismatch(rank=fact.rank, node=fact.node, differs=tuple(differs)))
            problems.append(
                Problem(
                    impact=CHECK_IMPACT["cluster:env"],
                    what=f"rank {fact.rank} on {fact.node} got a different NCCL environment "
                    "from the other ranks",
                    code="cluster:env",
                    evidence=tuple(differs[:5]),
                    fix="start every rank with the same environment: hpnet launch carries it "
                    "(or set it in the job's spec, not in one node's shell)",
                )
            )
    versions = []
    for key in ("nccl_version", "driver", "cuda"):
        values = {name: fact.version(key) for name, fact in leaders.items() if fact.version(key)}
        if len(set(values.values())) > 1:
            text = ", ".join(f"{name}: {value}" for name, value in values.items())
            versions.append(f"{key} differs: {text}")
            problems.append(
                Problem(
                    impact=CHECK_IMPACT["cluster:versions"],
                    what=f"nodes run different {key.replace('_', ' ')}s",
                    code=f"cluster:{key}",
                    evidence=(text,),
                    fix="give every node the same image and driver",
                )
            )
    return mismatches, versions, problems


def _slow(
    intra: Mapping[str, float], ring: Sequence[dict[str, Any]]
) -> tuple[float | None, float | None, list[str], list[Problem]]:
    """Nodes and node-to-node links below 80% of the median."""
    median_intra = statistics.median(intra.values()) if intra else None
    median_ring = statistics.median(h["gbps"] for h in ring) if ring else None
    slow, problems = [], []
    for name, value in intra.items():
        if len(intra) >= MIN_TO_COMPARE and median_intra and value < SLOW_FRACTION * median_intra:
            slow.append(name)
            problems.append(
                Problem(
                    impact=CHECK_IMPACT["cluster:slow-node"],
                    what=f"{name}: its own all_reduce is slower than the other nodes'",
                    code="cluster:slow-node",
                    evidence=(f"busbw {value:.2f} GB/s against a median of {median_intra:.2f}",),
                    fix="test that node alone (hpnet check on it): GPUs, NVLink, clocks, other "
                    "jobs",
                )
            )
    for hop in ring:
        if (
            len(ring) >= MIN_TO_COMPARE
            and median_ring
            and hop["gbps"] < SLOW_FRACTION * median_ring
        ):
            slow.append(f"{hop['from']}->{hop['to']}")
            problems.append(
                Problem(
                    impact=CHECK_IMPACT["cluster:slow-link"],
                    what=f"the link {hop['from']} -> {hop['to']} is slower than the others",
                    code="cluster:slow-link",
                    evidence=(f"{hop['gbps']:.2f} GB/s against a median of {median_ring:.2f}",),
                    fix="check both nodes' NICs (rate, errors, the switch port) with hpnet doctor",
                )
            )
    return median_intra, median_ring, slow, problems


def _hardware(leaders: Mapping[str, RankFacts], profile: str) -> list[Problem]:
    """Nodes without a GPU, or without an active RDMA port (the port's typed state)."""
    problems = []
    without_gpu = [name for name, fact in leaders.items() if not fact.gpus]
    if without_gpu:
        problems.append(
            Problem(
                impact=CHECK_IMPACT["hardware:gpu"],
                what=f"{len(without_gpu)} of {len(leaders)} node(s) have no NVIDIA GPU visible",
                code="hardware:gpu",
                evidence=(", ".join(without_gpu[:8]),),
                fix="run the job on GPU nodes (in a container: --gpus all; check "
                "CUDA_VISIBLE_DEVICES)",
            )
        )
    without_rdma = [name for name, fact in leaders.items() if not any(p.active for p in fact.ports)]
    if without_rdma and profile != "socket":
        problems.append(
            Problem(
                impact=CHECK_IMPACT["hardware:rdma"],
                what=f"{len(without_rdma)} of {len(leaders)} node(s) have no active RDMA port: "
                "their traffic goes over TCP sockets, typically 4-10x slower",
                code="hardware:rdma",
                evidence=(", ".join(without_rdma[:8]),),
                fix="RDMA instance types, and their devices passed into the containers "
                "(--device=/dev/infiniband/uverbsN --device=/dev/infiniband/rdma_cm)",
            )
        )
    return problems


def cluster_problems(
    facts: Sequence[RankFacts], leaders: Mapping[str, RankFacts], profile: str
) -> list[Problem]:
    """What the nodes' own facts say: hardware, and every doctor WARN and FAIL of
    each node, weighed as the node view weighs them (hpnet.check.judge)."""
    problems = _hardware(leaders, profile)
    for name, fact in leaders.items():
        problems += doctor_problems(fact.doctor, node=name)
    return problems


def _report(options: CheckOptions, result: dict[str, Any], out: str) -> CheckReport:
    from hpnet.bench.run import _report as bench_report  # noqa: PLC0415
    from hpnet.result import Expectation  # noqa: PLC0415

    cluster = result["cluster"]
    facts = [RankFacts.from_data(f) for f in cluster["facts"]]
    nodes: dict[str, list[int]] = cluster["nodes"]
    leaders = {name: facts[ranks[0]] for name, ranks in nodes.items()}
    mismatches, version_mismatches, problems = _agreement(facts, leaders)
    intra = {k: v for k, v in cluster["intra"].items() if v}
    ring = [hop for hop in cluster["ring"] if hop.get("gbps")]
    median_intra, median_ring, slow, slow_problems = _slow(intra, ring)
    problems += slow_problems
    problems += cluster_problems(facts, leaders, options.profile)
    any_ports = any(p.active for fact in leaders.values() for p in fact.ports)
    transport = "rdma" if any_ports else "socket"
    expectation = Expectation(net="ib") if transport in RDMA_TRANSPORTS else None
    verify = verify_logs(os.path.join(out, "logs"), expectation) if _has_nccl_lines(out) else None
    bench = bench_report({"runs": result["runs"], "metadata": result["metadata"]}, {})
    stage = stage_from(
        "cluster", str(result["metadata"].get("backend")), len(facts), bench, verify, None,
        error=None, kind=StageKind.CLUSTER.value,
    )  # fmt: skip
    if verify is not None:
        problems += verify_problems(stage, verify)
    ordered_problems = ordered(problems)
    inter_node = inter_node_by_node(verify) if verify is not None else {}
    node_rows = tuple(
        ClusterNode(
            node=name,
            ranks=tuple(ranks),
            gpus=leaders[name].gpus,
            rdma_ports=tuple(p.described for p in leaders[name].ports),
            doctor=leaders[name].doctor_verdict,
            nccl_version=leaders[name].nccl_version,
            driver=leaders[name].driver,
            cuda=leaders[name].cuda,
            intra_busbw_gbps=cluster["intra"].get(name),
            ring_busbw_gbps=next((h["gbps"] for h in ring if h["from"] == name), None),
            inter_node=tuple(inter_node.get(name, [])),
        )
        for name, ranks in nodes.items()
    )
    ready = verdict(ordered_problems)
    headline = (
        ordered_problems[0].what
        if ready == Verdict.NOT_READY
        else (
            f"{len(nodes)} nodes agree (environment, versions), "
            + (
                f"inter-node {', '.join(stage.transports.inter_node)}, "
                if stage.transports.inter_node or stage.transports.intra_node
                else ""
            )
            + "no node or link below 80% of the median"
        )
    )
    return CheckReport(
        verdict=ready,
        headline=headline,
        node=f"cluster of {len(nodes)} node(s), {len(facts)} rank(s)",
        profile=options.profile,
        transport=transport,
        gpus=physical_gpus(leaders.values()),
        gpu_name=", ".join(sorted({n for f in leaders.values() for n in f.gpu_names})) or None,
        rdma_ports=tuple(p.described for f in leaders.values() for p in f.ports),
        problems=ordered_problems,
        stages=(stage,),
        doctor=dict(Counter(str(f.doctor_verdict) for f in leaders.values())),
        doctor_checks=(),
        environment=_majority_env(facts),
        notes=(f"the cluster's logs and results are in {out}",) if options.keep_dir else (),
        mode=options.mode,
        cluster=ClusterView(
            nodes=node_rows,
            env_mismatches=tuple(mismatches),
            version_mismatches=tuple(version_mismatches),
            median_intra_busbw_gbps=median_intra,
            median_ring_busbw_gbps=median_ring,
            slow_nodes=tuple(slow),
        ),
    )
