"""One rank of ``hpnet isolate``: the rounds, inside one job.

    python -m hpnet.isolate.worker SPEC.json OUTDIR

Started by :mod:`hpnet.isolate.run` in every rank of a launcher's job as the rank's
worker (:mod:`hpnet.cluster.spawn`: the rank's variables, ``NCCL_DEBUG=INFO``,
``NCCL_DEBUG_FILE=OUTDIR/nccl.rank<R>.log``). Imports torch. Every rank sends its
node's facts to rank 0, which holds the decision
(:class:`hpnet.isolate.engine.Isolation`); then, round after round, rank 0 broadcasts
the round's tests, each rank that is in a test forms the test's group (only the
members take part, so a round of 512 pairs costs each rank one group: see
:func:`_group`) and times ``iters`` all_reduces of ``bytes`` on it, cuts what NCCL
logged during the round into
``OUTDIR/round<N>/rank<R>.log`` and reads it (:mod:`hpnet.isolate.observe`); rank 0
gathers the samples and the observations and records the round. Rank 0 writes
``OUTDIR/result.json``.

A test's sample *i* is the slowest member's time of all_reduce *i* (each member's clock
starts after the same all_reduce completes on its GPU); its bus bandwidth is
``bytes * 2(n-1)/n / time`` (nccl-tests' all_reduce factor, src/all_reduce.cu).
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import time
from collections.abc import Mapping
from typing import Any

from hpnet.bench.backends import RankContext
from hpnet.cluster.drift import UNSET
from hpnet.cluster.folder import write_result
from hpnet.cluster.gather import gather_json, nccl_debug_file, ranks_by_node
from hpnet.cluster.spawn import die_with_parent
from hpnet.errors import HpnetError
from hpnet.isolate.engine import Isolation
from hpnet.isolate.harness import error_source
from hpnet.isolate.model import Baseline, ErrorSource, Measurement, Round, Test
from hpnet.isolate.observe import Observation, config_issues, observe_log
from hpnet.isolate.scoring import SHARED_CPU

__all__ = ["main"]

WARMUP = 2
#: how long one sample lasts, about (see _timed)
SAMPLE_SECONDS = 0.02
#: ... on CPU ranks (gloo), which share the host's cores with each other and with
#: everything else: a scheduler quantum (4-10 ms) lost in a 20 ms sample halves it
CPU_SAMPLE_SECONDS = 0.1
MAX_REPEAT = 64
GROUP_TIMEOUT = datetime.timedelta(minutes=5)
_MIXED = " (differs between its ranks)"


def _merge_rank_env(node: dict[str, str], rank: Mapping[str, str]) -> None:
    """A node's NCCL environment is what every one of its ranks received: a variable a
    rank got otherwise than the node's first rank (or not at all) makes the node's value
    ``"a | b (differs between its ranks)"``, which then differs from the majority and
    shows in round 0 (a launcher that sets a variable for some local ranks only)."""
    for key in sorted({k for k in (*node, *rank) if k.startswith("env.")}):
        first, mine = node.get(key, UNSET), rank.get(key, UNSET)
        values = first.removesuffix(_MIXED).split(" | ") if first.endswith(_MIXED) else [first]
        if mine not in values:
            node[key] = " | ".join(sorted({*values, mine})) + _MIXED


class Job:
    """This rank's place in the job: which node and rail each rank is."""

    def __init__(self, every: list[dict[str, Any]]) -> None:
        by_node = ranks_by_node(every)
        self.nodes: list[str] = list(by_node)
        self.facts: dict[str, dict[str, str]] = {}
        #: node -> (scheduler, its name for the node), where a rank knew it
        self.scheduler: dict[str, list[str]] = {}
        for mine in every:
            node = mine["node"]
            if node not in self.facts:
                self.facts[node] = mine["facts"]
            else:
                _merge_rank_env(self.facts[node], mine["facts"])
            if mine.get("scheduler"):
                self.scheduler.setdefault(node, list(mine["scheduler"]))
        # a node's rails are its ranks in local-rank order (fake hosts on one machine
        # have local ranks 2, 3 for their rails 0, 1); a rail's NIC is the one closest
        # to the GPU its rank runs on, as the rank found it by the GPU's PCI address
        self.rank_of: dict[tuple[str, int], int] = {}
        self.rail_of: dict[int, int] = {}
        for node, ranks in by_node.items():
            self.facts[node] = dict(self.facts[node])
            for rail, rank in enumerate(sorted(ranks, key=lambda r: (int(every[r]["rail"]), r))):
                self.rank_of[(node, rail)] = rank
                self.rail_of[rank] = rail
                if every[rank].get("nic"):
                    self.facts[node][f"rail.{rail}.nic"] = every[rank]["nic"]
        #: the rails every node has (rails 0 .. rails-1)
        self.rails = min(len(ranks) for ranks in by_node.values())

    def members(self, test: Test) -> list[int]:
        rails = range(self.rails) if test.rail is None else (test.rail,)
        return sorted(self.rank_of[(node, r)] for node in (test.a, test.b) for r in rails)


def _round_of(ctx: RankContext, current: Round | None) -> Round | None:
    """Rank 0's round on every rank (None: the rounds are over)."""
    from hpnet.jsonout import to_data  # noqa: PLC0415

    data = json.dumps(to_data(current)).encode() if ctx.rank == 0 else None
    header = None if data is None else len(data).to_bytes(8, "big")
    length = int.from_bytes(ctx.broadcast_bytes(header, 8), "big")
    raw = json.loads(ctx.broadcast_bytes(data, length).decode())
    if raw is None:
        return None
    tests = tuple(Test(**t) for t in raw["tests"])
    return Round(number=raw["number"], name=raw["name"], purpose=raw["purpose"], tests=tests)


def _buffer(ctx: RankContext, size: int) -> Any:
    """The test's buffer: allocated before the members agree to go (an allocation that
    fails on one member must not leave the others waiting in a collective)."""
    return ctx.torch.ones(max(size // 4, 1), dtype=ctx.torch.float32, device=ctx.device)


def _group(ctx: RankContext, members: list[int], key: str) -> Any:
    """The test's process group, formed by its members alone under a store prefix
    that names the test (``hpnet-isolate/<round>/<test>``): the same on every member
    by construction, and never the same for two tests.

    Not ``torch.distributed.new_group(..., use_local_synchronization=True)``: torch
    names such a group by its ranks and by how many groups this process has already
    made (distributed_c10d._hash_ranks_to_str: ``len(_world.pg_names)``), so two
    members that sat in different numbers of earlier tests (the odd node out of
    round 1, a control pair of round 3) wait for each other under different names
    until the timeout. The backend classes are torch's own, made as
    ``_new_process_group_helper`` makes them; their collectives are called on the
    backend directly (the group is not registered in torch's world)."""
    dist = ctx.dist
    from torch.distributed import distributed_c10d  # noqa: PLC0415

    store = dist.PrefixStore(f"hpnet-isolate/{key}/", distributed_c10d._get_default_store())
    rank, size = members.index(ctx.rank), len(members)
    if not ctx.cuda:
        return dist.ProcessGroupGloo(store, rank, size, GROUP_TIMEOUT)
    options = dist.ProcessGroupNCCL.Options()
    options._timeout = GROUP_TIMEOUT
    for name, value in (("global_ranks_in_group", members), ("group_name", key)):
        if hasattr(options, name):  # fields of newer torch releases
            setattr(options, name, value)
    return dist.ProcessGroupNCCL(store, rank, size, options)


def _all_reduce(ctx: RankContext, group: Any, buf: Any, *, maximum: bool = False) -> None:
    options = ctx.dist.AllreduceOptions()
    options.reduceOp = ctx.dist.ReduceOp.MAX if maximum else ctx.dist.ReduceOp.SUM
    group.allreduce([buf], options).wait()


def _timed(ctx: RankContext, group: Any, buf: Any, iters: int) -> list[float]:
    """Seconds per all_reduce of ``buf`` among ``members``, ``iters`` samples.

    A sample is the mean of ``repeat`` back-to-back all_reduces, ``repeat`` chosen by
    the members together (the largest any of them needs) so that a sample lasts about
    :data:`SAMPLE_SECONDS`: one scheduler hiccup on a busy host then cannot halve a
    sample and pass for a flapping link, while a link that drops for a moment still
    drags a sample down."""
    torch = ctx.torch
    for _ in range(WARMUP):
        _all_reduce(ctx, group, buf)
    ctx.sync()
    start = time.perf_counter()
    _all_reduce(ctx, group, buf)
    ctx.sync()
    once = max(time.perf_counter() - start, 1e-6)
    seconds = SAMPLE_SECONDS if ctx.cuda else CPU_SAMPLE_SECONDS
    wanted = torch.tensor([min(MAX_REPEAT, max(1, round(seconds / once)))], device=ctx.device)
    _all_reduce(ctx, group, wanted, maximum=True)
    repeat = int(wanted.item())
    times = []
    for _ in range(iters):
        start = time.perf_counter()
        for _ in range(repeat):
            _all_reduce(ctx, group, buf)
        ctx.sync()
        times.append((time.perf_counter() - start) / repeat)
    return times


def _one_line(exc: BaseException) -> str:
    # one line: NCCL's errors run over several ("Last error:\n...")
    return " ".join(f"{type(exc).__name__}: {exc}".split())[:400]


def _failure(result: dict[str, Any], exc: BaseException, *, harness: bool = False) -> None:
    """Record a test's error and what it is evidence of (:mod:`hpnet.isolate.harness`)."""
    result["error"] = _one_line(exc)
    source = ErrorSource.HARNESS if harness else error_source(type(exc).__name__, str(exc))
    result["source"] = source.value


def _run_test(
    ctx: RankContext,
    job: Job,
    test: Test | None,
    key: str,
    spec: Mapping[str, Any],
    *,
    groups: list[Any],
) -> dict[str, Any]:
    """This rank's part of the round's tests: its samples or its error. Every rank
    calls it (the members agree over the job's group whether each test can go). The
    test's group is kept in ``groups`` until the job ends (no member closes its end
    while another may still be reading)."""
    result: dict[str, Any] = {"times": [], "error": None, "source": None, "observation": None}
    buf = None
    if test is not None:
        try:
            buf = _buffer(ctx, int(spec["bytes"]))
        except Exception as exc:  # noqa: BLE001 - a failed test is a measurement
            _failure(result, exc, harness=True)  # an allocation says nothing of the link
    ready = [row[0] == 0 for row in ctx.gather([0.0 if result["error"] is None else 1.0])]
    if test is not None and buf is not None:
        members = job.members(test)
        if all(ready[r] for r in members):
            try:
                group = _group(ctx, members, key)
                groups.append(group)
                result["times"] = _timed(ctx, group, buf, int(spec["iters"]))
            except Exception as exc:  # noqa: BLE001 - a failed test is a measurement
                _failure(result, exc)
    return result


def _cut_log(log: str, offset: int, target: str) -> int:
    """Copy what NCCL wrote to ``log`` since ``offset`` into ``target``; the new offset."""
    os.makedirs(os.path.dirname(target), exist_ok=True)
    try:
        with open(log, "rb") as source:
            source.seek(offset)
            data = source.read()
    except OSError:
        data = b""
    with open(target, "wb") as handle:
        handle.write(data)
    return offset + len(data)


def _measurements(
    job: Job, current: Round, results: list[dict[str, Any]], size: int
) -> list[Measurement]:
    observations = [
        Observation.from_data(r["observation"]) for r in results if r.get("observation")
    ]
    issues = config_issues(observations)
    found = []
    for test in current.tests:
        members = job.members(test)
        n = len(members)
        error, source = _test_error([results[r] for r in members])
        rows = [results[r]["times"] for r in members]
        samples: tuple[float, ...] = ()
        if error is None and all(rows):
            slowest = [max(column) for column in zip(*rows, strict=False)]
            samples = tuple(size * 2 * (n - 1) / n / t / 1e9 for t in slowest if t > 0)
        if error is None and not samples:  # a member measured nothing: nothing ran
            error, source = "no samples from every member", ErrorSource.HARNESS
        nodes = {test.a, test.b}
        rails = None if test.rail is None else {test.rail}
        mine = tuple(i for i in issues if i.node in nodes and (rails is None or i.rail in rails))
        found.append(
            Measurement(
                test=test, samples_gbps=samples, error=error, error_source=source, issues=mine
            )
        )
    return found


def _test_error(results: list[dict[str, Any]]) -> tuple[str | None, ErrorSource]:
    """A test's error from its members' own: an error on the link (any member's) is
    the test's, else the harness's; a member that timed out waiting names no cause
    where another member's error does."""
    failed = [r for r in results if r.get("error")]
    if not failed:
        return None, ErrorSource.NETWORK
    network = [r for r in failed if r.get("source") == ErrorSource.NETWORK.value]
    chosen = sorted(
        network or failed,
        key=lambda r: "timed out" in r["error"].lower() or "timeout" in r["error"].lower(),
    )[0]
    return chosen["error"], ErrorSource.NETWORK if network else ErrorSource.HARNESS


def rounds(ctx: RankContext, spec: Mapping[str, Any], out: str) -> dict[str, Any] | None:
    """Every rank's part; rank 0 returns the result."""
    mine = {key: spec[key] for key in ("node", "rail", "facts", "scheduler")}
    mine["nic"] = _my_nic(ctx, spec.get("nics") or {})
    job = Job(gather_json(ctx, mine))
    isolation = drift = None
    if ctx.rank == 0:
        baseline = Baseline.from_json(spec["baseline"]) if spec.get("baseline") else None
        isolation = Isolation(
            job.nodes,
            job.rails,
            groups=spec.get("groups"),
            baseline=baseline,
            seed=spec["seed"],
            thresholds=None if ctx.cuda else SHARED_CPU,
        )
        drift = isolation.drift(job.facts, per_node_keys=spec["per_node_keys"])
    log = nccl_debug_file(os.environ, os.getpid())
    offset = 0
    size, iters = int(spec["bytes"]), int(spec["iters"])
    where = (spec["node"], job.rail_of[ctx.rank])
    groups: list[Any] = []
    while True:
        current = _round_of(ctx, isolation.next_round() if isolation else None)
        if current is None:
            break
        index, test = next(
            ((i, t) for i, t in enumerate(current.tests) if ctx.rank in job.members(t)),
            (-1, None),
        )
        result = _run_test(ctx, job, test, f"{current.number}/{index}", spec, groups=groups)
        ctx.barrier()
        if test is not None:
            path = os.path.join(out, f"round{current.number}", f"rank{ctx.rank}.log")
            offset = _cut_log(log, offset, path) if log else offset
            seen = observe_log(path, rank=ctx.rank, node=where[0], rail=where[1])
            result["observation"] = seen.to_data()
        gathered = gather_json(ctx, result)
        if isolation is not None:
            isolation.record(_measurements(job, current, gathered, size))
        if ctx.rank == 0:
            print(
                f"hpnet isolate: round {current.number} ({current.name}): "
                f"{len(current.tests)} tests done",
                file=sys.stderr,
                flush=True,
            )
    for group in groups:  # every member is past the last round's gather
        shutdown = getattr(group, "shutdown", None)
        if shutdown is not None:
            shutdown()
    if isolation is None:
        return None
    from hpnet.jsonout import to_data  # noqa: PLC0415

    return {
        "nodes": job.nodes,
        "rails": job.rails,
        "bytes": size,
        "iters": iters,
        "backend": "nccl" if ctx.cuda else "gloo",
        "scheduler": job.scheduler,
        "drift": to_data(drift),
        "verdict": to_data(isolation.verdict()),
    }


def _my_nic(ctx: RankContext, nics: Mapping[str, str]) -> str | None:
    """The NIC closest to this rank's GPU, found by the GPU's PCI address (CUDA's
    numbering under CUDA_VISIBLE_DEVICES is not NVML's); None on CPUs or unknown."""
    if not ctx.cuda:
        return None
    props = ctx.torch.cuda.get_device_properties(ctx.device)
    bus = getattr(props, "pci_bus_id", None)
    if bus is None:
        return None
    domain, device = getattr(props, "pci_domain_id", 0), getattr(props, "pci_device_id", 0)
    return nics.get(f"{domain:04x}:{bus:02x}:{device:02x}.0")


def main(argv: list[str]) -> int:
    try:
        return _main(argv)
    except HpnetError as exc:  # a job of one node, a bad baseline: said in one line
        print(exc.render(), file=sys.stderr)
        return 2


def _main(argv: list[str]) -> int:
    die_with_parent()
    with open(argv[1]) as handle:
        spec = json.load(handle)
    out = argv[2]
    ranks = {k: os.environ[k] for k in ("RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")}
    ranks["LOCAL_RANK"] = os.environ.get("LOCAL_RANK", "0")
    # the job's own group is gloo on GPUs too: the tests' NCCL groups are then made
    # fresh by their members alone (a split of a world NCCL communicator would need
    # every rank)
    ctx = RankContext(
        {"device": spec["device"], "backend": "gloo", "dtype": "float",
         "redop": "sum", "root": 0, "timeout_s": spec.get("timeout_s")},
        ranks,
    )  # fmt: skip
    result = rounds(ctx, spec, out)
    if result is not None:
        write_result(out, result)
    ctx.dist.destroy_process_group()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
