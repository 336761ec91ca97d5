"""`hpnet verify`: the defects a review found, each pinned on log lines in the formats
NCCL's source prints (the format string and its file:line@release are named where a
line is built).

Synthetic jobs are written here, not recorded: they reproduce shapes no recorded log in
tests/data/nccl-logs has (a communicator without init lines, NCCL 2.21's split
communicators, two machines of one name, multi-node NVLink). The input edge (gzip,
FIFOs, NUL bytes, long lines) and the probe are in test_verify_review_inputs.py.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.ncclog.facts import parse_nccl_log
from hpnet.ncclog.lines import classify
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import VerifyReport, analyse, parse_expectation
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"
GOOD = LOGS / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log"


def prefix(host: str, pid: int, dev: int) -> str:
    # "%s:%d:%d [%d] NCCL INFO " debug.cc:196 @2.22.3 (host:pid:tid [cudaDev])
    return f"{host}:{pid}:{pid} [{dev}] NCCL INFO "


def init_line(  # noqa: PLR0917 - the fields of NCCL's format, in its order
    p: str, comm: int, rank: int, nranks: int, dev: int, comm_id: str, state: str
) -> str:
    # "%s comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx commId 0x%llx - Init
    # START" init.cc:1574 @2.28.9
    return (
        f"{p}ncclCommInitRankConfig comm 0x{comm:x} rank {rank} nranks {nranks} cudaDev {dev} "
        f"nvmlDev {dev} busId {dev + 1}b000 commId {comm_id} - Init {state}"
    )


def nodes_line(  # noqa: PLR0917 - the fields of NCCL's format, in its order
    p: str, comm: int, rank: int, nranks: int, nnodes: int, local: int
) -> str:
    # "comm %p rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL %d"
    # init.cc:1170 @2.28.9
    return (
        f"{p}comm 0x{comm:x} rank {rank} nRanks {nranks} nNodes {nnodes} localRanks {local} "
        f"localRank {rank % local} MNNVL 0"
    )


def ring(
    p: str,
    members: Sequence[tuple[int, int, int]],
    me: int,
    *,
    intra: str = "P2P/CUMEM",
    net: str = "IB",
    nic: int = 0,
) -> list[str]:
    """One process's ring connections: ``members`` are (node, dev, pid) by rank.

    P2P: "Channel %02d/%01d : %d[%d] -> %d[%d] via P2P/%s%s%s" p2p.cc:392 @2.28.9;
    NET: "Channel %02d/%d : %d[%d] -> %d[%d] [send] via NET/%s/%d%s%s%s" net.cc:313 and
    "... [receive] via NET/..." net.cc:359 @2.28.9 (brackets: nvmlDev).
    """
    n = len(members)
    node, dev, _ = members[me]
    nxt, prv = (me + 1) % n, (me - 1) % n
    lines = []
    for channel in range(2):
        head = f"{p}Channel {channel:02d}/0 : "
        if members[nxt][0] == node:
            lines.append(f"{head}{me}[{dev}] -> {nxt}[{members[nxt][1]}] via {intra}")
        else:
            lines.append(
                f"{head}{me}[{dev}] -> {nxt}[{members[nxt][1]}] [send] via NET/{net}/{nic}/GDRDMA"
            )
        if members[prv][0] != node:
            lines.append(
                f"{head}{prv}[{members[prv][1]}] -> {me}[{dev}] [receive] via "
                f"NET/{net}/{nic}/GDRDMA"
            )
    return lines


def interleave(per_process: Iterable[list[str]]) -> list[str]:
    """Lines of several processes as one file shows them: in turns."""
    lines: list[str] = []
    queues = [list(q) for q in per_process]
    while any(queues):
        for queue in queues:
            if queue:
                lines.append(queue.pop(0))
    return lines


def report(lines: Iterable[str], expect: str | None = None) -> VerifyReport:
    return analyse(parse_nccl_log(lines), parse_expectation(expect) if expect else None)


def ids(result: VerifyReport) -> set[str]:
    return {f.id for f in result.findings}


# ------------------------------------------------------------------ 1: a comm without init lines


def three_comms(*, column_init: bool) -> list[str]:
    """2 nodes x 4 GPUs in three communicators: the world, one per node, one per GPU
    index across the nodes (data parallel); ``column_init=False`` drops the init lines of
    the last (a log cut, or a subsystem filter)."""
    gpus, nodes = 4, 2
    out = []
    for r in range(nodes * gpus):
        node, g = divmod(r, gpus)
        host, pid = f"node{node + 1}", 3000 + r
        p = prefix(host, pid, g)
        lines = [
            f"{p}Bootstrap: Using eth0:10.0.0.{node + 1}<0>",  # bootstrap.cc:121 @2.28.9
            f"{p}NET/IB : Using [0]mlx5_0:1/IB [RO]; OOB eth0:10.0.0.{node + 1}<0>",
            f"{p}Using network IB",
        ]
        comms = [
            ("0xaaaa", r, [(x // gpus, x % gpus, 3000 + x) for x in range(nodes * gpus)]),
            (f"0xbbb{node}", g, [(node, x, 3000 + node * gpus + x) for x in range(gpus)]),
            (f"0xccc{g}", node, [(x, g, 3000 + x * gpus + g) for x in range(nodes)]),
        ]
        for n, (comm_id, me, members) in enumerate(comms):
            address = 0x1000 * (n + 1) + r
            shown = column_init or not comm_id.startswith("0xccc")
            if shown:
                lines.append(init_line(p, address, me, len(members), g, comm_id, "START"))
            lines += ring(p, members, me)
            if shown:
                lines.append(init_line(p, address, me, len(members), g, comm_id, "COMPLETE"))
        out.append(lines)
    return interleave(out)


def test_a_connection_of_a_comm_without_init_lines_is_not_placed_in_another() -> None:
    """The data-parallel comm's NET lines (rank 0 -> 1 of a 2-rank comm) fit the world
    and the node comm by rank number, which place the peer on the same host. Borrowing
    the peer from them turned inter-node IB into 'NET inside the node'."""
    full = report(three_comms(column_init=True))
    cut = report(three_comms(column_init=False))
    for result in (full, cut):
        assert result.status == "PASS", result.verdict
        assert "net-inside-node" not in ids(result)
        assert result.transports["intra_node"] == ("P2P/CUMEM",)
        assert result.transports["inter_node"] == ("NET/IB/GDRDMA",)
    assert all(r.inter_node == ("NET/IB/GDRDMA",) for r in cut.ranks)


# ------------------------------------------------------------------ 2: split communicators


def split_job(version: str) -> list[str]:
    """NCCL 2.21.5-2.22.3: a 16-rank world split into one comm per node (color = node)
    and one per GPU index (color 100 + index). Those releases print, for every split
    child, "ncclCommSplit comm %p rank %d nranks %d cudaDev %d nvmlDev %d busId %lx parent
    %p color %d key %d commId 0x%llx - Init START" (init.cc:1541 @2.21.5) with commId =
    hashUniqueId() of a calloc'ed job: 0xd6f7ddbca6ef589b for every child. 2.23.4+ print
    no commId ("... color %d key %d- Init START", init.cc:1440 @2.23.4)."""
    gpus, nodes = 8, 2
    out = []
    for r in range(nodes * gpus):
        node, g = divmod(r, gpus)
        p = prefix(f"node{node + 1}", 4000 + r, g)
        lines = [
            f"{p}Bootstrap : Using eth0:10.0.0.{node + 1}<0>",  # bootstrap.cc:56 @2.21.5
            f"{p}NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [RO]; OOB eth0:10.0.0.{node + 1}<0>",
            f"{p}Using network IB",
        ]
        world = [(x // gpus, x % gpus, 4000 + x) for x in range(nodes * gpus)]
        lines.append(init_line(p, 0x1000 + r, r, 16, g, "0x77aa", "START"))
        lines += ring(p, world, r)
        splits = [
            (node, g, [(node, x, 0) for x in range(gpus)], 0x2000 + r),
            (100 + g, node, [(x, g, 0) for x in range(nodes)], 0x3000 + r),
        ]
        for color, me, members, address in splits:
            commid = " commId 0xd6f7ddbca6ef589b" if version == "2.21.5" else ""
            for state in ("START", "COMPLETE"):
                lines.append(
                    f"{p}ncclCommSplit comm 0x{address:x} rank {me} nranks {len(members)} "
                    f"cudaDev {g} nvmlDev {g} busId {g + 1}b000 parent 0x{0x1000 + r:x} "
                    f"color {color} key {me}{commid} - Init {state}"
                )
            lines += ring(p, members, me, nic=g % 2)
        out.append(lines)
    return interleave(out)


def test_split_communicators_are_not_merged_by_their_constant_commid() -> None:
    for version in ("2.21.5", "2.23.4"):
        result = report(split_job(version), "net=ib,gdr")
        assert result.status == "PASS", (version, result.verdict)
        assert "net-inside-node" not in ids(result)
        assert result.transports["intra_node"] == ("P2P/CUMEM",)
        comms = {c.id: c for c in result.communicators}
        assert "0xd6f7ddbca6ef589b" not in comms
        assert len(comms) == 1 + 2 + 8  # the world, one per node, one per GPU index
        per_node = [c for c in comms.values() if c.nranks == 8]
        assert [(c.ranks_seen, len(c.hosts)) for c in per_node] == [(8, 1), (8, 1)]
        per_gpu = [c for c in comms.values() if c.nranks == 2]
        assert all(c.inter_node == ("NET/IB/GDRDMA",) and len(c.hosts) == 2 for c in per_gpu)


# ------------------------------------------------------------------ 3: one name, two machines


def same_name_job(*, addresses: bool) -> list[str]:
    """Two 4-GPU machines both called 'ubuntu', sockets between them (no RDMA). With
    ``addresses`` each lists two interfaces ("NET/Socket : Using%s", net_socket.cc:76
    @2.28.9); without, the log has no address at all."""
    gpus = 4
    out = []
    members = [(x // gpus, x % gpus, 1000 + x) for x in range(2 * gpus)]
    for r in range(2 * gpus):
        node, g = divmod(r, gpus)
        p = prefix("ubuntu", 1000 + r, g)
        lines = [f"{p}NET/IB : No device found."]  # net_ib/init.cc:470 @2.30.7
        if addresses:
            lines += [
                f"{p}Bootstrap: Using eth0:10.0.0.{node + 1}<0>",
                f"{p}NET/Socket : Using [0]eth0:10.0.0.{node + 1}<0> "
                f"[1]eth1:192.168.0.{node + 1}<0>",
            ]
        lines += [
            f"{p}Using network Socket",
            init_line(p, 0x5500 + r, r, 8, g, "0x1234", "START"),
            nodes_line(p, 0x5500 + r, r, 8, 2, gpus),
        ]
        lines += [line.replace("NET/IB/0/GDRDMA", "NET/Socket/0") for line in ring(p, members, r)]
        lines.append(init_line(p, 0x5500 + r, r, 8, g, "0x1234", "COMPLETE"))
        out.append(lines)
    return interleave(out)


def test_two_machines_of_one_name_are_told_apart() -> None:
    """Each process lists two addresses: the old rule gave up on a process with more than
    one and merged the machines, so TCP between them read as 'NET inside the node'."""
    result = report(same_name_job(addresses=True))
    assert result.status == "FAIL" and "socket-fallback" in ids(result), result.verdict
    assert "net-inside-node" not in ids(result)
    assert {h.host for h in result.hosts} == {"ubuntu@10.0.0.1", "ubuntu@10.0.0.2"}


def test_nccls_host_count_tells_machines_apart_when_addresses_cannot() -> None:
    """No address in the log: 'localRanks 4' for 8 ranks under one name says NCCL saw
    two hosts there; their socket traffic is inter-node, not 'NET inside the node'."""
    result = report(same_name_job(addresses=False))
    assert result.status == "FAIL" and "socket-fallback" in ids(result), result.verdict
    assert "net-inside-node" not in ids(result)
    assert "hosts-indistinct" in ids(result)


def test_fake_hosts_without_their_hostid_line_are_not_called_net_inside_node() -> None:
    """The recorded --fake-hosts 2 run without its NCCL_HOSTID lines (a log without the
    ENV subsystem): NCCL's localRanks 2 for 4 ranks on 'vm' show two NCCL hosts."""
    directory = LOGS / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9"
    lines = [
        line
        for path in sorted(directory.iterdir())
        for line in path.read_text().splitlines()
        if "NCCL_HOSTID" not in line
    ]
    result = report(lines)
    assert "net-inside-node" not in ids(result)
    assert {"socket-fallback", "hosts-indistinct"} <= ids(result)
    assert result.transports["inter_node"] == ("NET/Socket",)


def test_p2p_and_shm_disabled_on_one_host_is_still_net_inside_node() -> None:
    """localRanks 1 there (NCCL's islands, not hosts): no evidence of a second host."""
    inputs, _ = collect_inputs(
        [str(LOGS / "h200x4-net-socket-inside-node-p2p-shm-disabled-nccl2.28.9")]
    )
    result = analyse(read_logs(inputs, jobs=1))
    assert "net-inside-node" in ids(result) and "hosts-indistinct" not in ids(result)


# ------------------------------------------------------------------ 4: multi-node NVLink


def mnnvl_job(*, peers_known: bool = True) -> list[str]:
    """Two 4-GPU trays of one NVLink domain: P2P crosses the hosts ("via P2P/%s" with
    "MNNVL" when comm->MNNVL, p2p.cc:392 @2.28.9; p2p.cc:143-146 lets a non-local peer
    through) and NVLS spans them ("NVLS comm %p headRank %d ...", nvls.cc:340)."""
    gpus = 4
    members = [(x // gpus, x % gpus, 1000 + x) for x in range(2 * gpus)]
    out = []
    for r in range(2 * gpus):
        node, g = divmod(r, gpus)
        p = prefix(f"tray{node + 1}", 1000 + r, g)
        lines = [f"{p}Bootstrap: Using eth0:10.0.0.{node + 1}<0>"]
        if peers_known:
            lines += [
                init_line(p, 0x5500 + r, r, 8, g, "0x77", "START"),
                nodes_line(p, 0x5500 + r, r, 8, 2, gpus).replace("MNNVL 0", "MNNVL 1"),
            ]
        # P2P prints the sending side only (p2pSendSetup)
        sends = [line for line in ring(p, members, r, intra="P2P/MNNVL") if "[receive]" not in line]
        lines += [line.replace(" [send] via NET/IB/0/GDRDMA", " via P2P/MNNVL") for line in sends]
        lines.append(f"{p}NVLS comm 0x{0x5500 + r:x} headRank {g} nHeads 4 nvlsRanks 8")
        out.append(lines)
    return interleave(out)


def test_p2p_over_multi_node_nvlink_is_inter_node_between_hosts() -> None:
    result = report(mnnvl_job())
    assert set(result.transports["inter_node"]) == {"P2P/MNNVL", "NVLS"}, result.verdict
    assert result.transports["intra_node"] == ("P2P/MNNVL",)
    assert {h.host for h in result.hosts} == {"tray1", "tray2"}
    crossing = [r for r in result.ranks if "P2P/MNNVL" in r.inter_node]
    assert {r.process for r in crossing} == {"tray1:1003", "tray2:1007"}
    assert report(mnnvl_job(), "net=mnnvl").expectations[0].met


# ------------------------------------------------------------------ 5: retries are not failures

#: "Call to ibv_modify_qp failed with %d %s, %s, retrying %d/%d after %u msec of sleep"
#: INFO(NCCL_NET) ibvwrap.cc:281 @2.24.3 (qpMsg: ibvwrap.cc:266)
QP_MSG = (
    "Call to ibv_modify_qp failed with 110 Connection timed out, on dev mlx5_0:1, curr state "
    "INIT, next state RTR, local GID index 3, local GID ::ffff:10.0.0.1, remote GID "
    "::ffff:10.0.0.2"
)
RETRY = f"node1:3000:3000 [0] NCCL INFO {QP_MSG}, retrying 1/3 after 100 msec of sleep"
#: CUDACHECKIGNORE: INFO(NCCL_ALL,"%s:%d Cuda failure '%s'") checks.h:34 @2.28.9
IGNORED = "node1:3000:3000 [0] NCCL INFO init.cc:1539 Cuda failure 'out of memory'"
#: the retries ran out: WARN("Call to ibv_modify_qp failed with %d %s, %s") ibvwrap.cc:291
GAVE_UP = f"node1:3000:3042 [0] misc/ibvwrap.cc:291 NCCL WARN {QP_MSG}"


def test_retried_and_ignored_calls_do_not_fail_a_healthy_job() -> None:
    result = report([*three_comms(column_init=True), RETRY, IGNORED])
    assert result.status == "PASS", result.verdict
    assert all(f.severity == "info" for f in result.findings)
    assert "retried-calls" in ids(result)
    failed = report([*three_comms(column_init=True), RETRY, "", GAVE_UP])
    assert failed.status == "FAIL" and "modify-qp-etimedout" in ids(failed)


# ------------------------------------------------------------------ 7: no line crashes the parser


def test_a_hex_looking_rank_is_not_a_rank(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`_FIELDS` read every value as hex, then int() failed: exit 3 (an internal error)."""
    path = tmp_path / "x.log"
    path.write_text(
        "node1:1:1 [0] NCCL INFO comm 0x1 rank 1a nranks 16 cudaDev 0 busId 1b000 - Init COMPLETE\n"
    )
    code = main(["verify", str(path)])
    out = capsys.readouterr().out
    assert code == 0 and out.startswith("hpnet verify: UNKNOWN")  # a process, nothing proven
    assert "Communicators" not in out


def mutate(line: str, rng: random.Random) -> str:
    """One edit a damaged or hostile log could hold: a character replaced, a span cut or
    doubled, two words swapped, a hex or huge number or a control character put in."""
    if not line:
        return line
    at = rng.randrange(len(line))
    choice = rng.randrange(6)
    if choice == 0:
        return line[:at] + rng.choice("0123456789abcdefx:[]()/-= \t.,<>#") + line[at + 1 :]
    if choice == 1:
        return line[:at] + line[at + rng.randrange(1, 12) :]
    if choice == 2:
        return line[:at] + line[at : at + rng.randrange(1, 24)] + line[at:]
    if choice == 3:
        words = line.split(" ")
        i, j = rng.randrange(len(words)), rng.randrange(len(words))
        words[i], words[j] = words[j], words[i]
        return " ".join(words)
    if choice == 4:
        return (
            line[:at] + rng.choice(["1a", "0x1f", "-1", "99999999999999999999", "ff"]) + line[at:]
        )
    return line[:at] + rng.choice(["\x00", "\x1b[2J", "\r", "\ufffd", "\x7f"]) + line[at:]


def test_mutated_real_lines_never_crash_the_analysis() -> None:
    """A fuzz run of 4000 mutated real lines found only the hex rank; this keeps it so."""
    from hpnet.render.verify import render_verify

    rng = random.Random(20261122)  # noqa: S311 - a reproducible fuzz, not a secret
    real = [
        line
        for path in sorted(LOGS.glob("*.log"))
        for line in path.read_text(errors="replace").splitlines()
        if "NCCL" in line
    ]
    for _ in range(200):
        lines = [mutate(rng.choice(real), rng) for _ in range(20)]
        render_verify(analyse(parse_nccl_log(lines), parse_expectation("net=ib,gdr")))


# ------------------------------------------------------------------ 13-16: line shapes


def test_warn_lines_with_a_function_or_a_plugins_pretty_function_keep_their_process() -> None:
    """2.30.7: "[%d] %s:%d (%s) NCCL WARN %s\\n" (debug.cc:345 @2.30.7); aws-ofi-nccl
    passes __PRETTY_FUNCTION__ as the file (docs/nccl-log-formats.md section 8)."""
    lines = {
        "transport/net_ib.cc:1984 (ncclIbTest)": "[2026-03-02 09:14:05] node1:4711:4790 [3] "
        "transport/net_ib.cc:1984 (ncclIbTest) NCCL WARN NET/IB: Got completion from peer "
        "10.0.0.2<47319> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) len=0 "
        "vendor err 129 (Send) localGid ::ffff:10.0.0.1 remoteGids::ffff:10.0.0.2 hca mlx5_3",
        "int nccl_net_ofi_rdma_connect(nccl_net_ofi_ep_t*, nccl_net_ofi_conn_handle_t*):1234": (
            "node1:4711:4790 [3] int nccl_net_ofi_rdma_connect(nccl_net_ofi_ep_t*, "
            "nccl_net_ofi_conn_handle_t*):1234 NCCL WARN NET/OFI Unable to connect"
        ),
    }
    for where, line in lines.items():
        event = classify(line.encode(), "x.log")
        assert event is not None and event.kind == "warn"
        assert event.process == ("node1:4711", "node1", 4711, None, 3)
        assert event.data == (where,)
    log = parse_nccl_log(
        ["node1:4711:4711 [3] NCCL INFO NCCL version 2.30.7+cuda13.0", *lines.values()]
    )
    assert [p.key for p in log.processes] == ["node1:4711"]
    assert "transport/net_ib.cc:1984 (ncclIbTest)" in log.processes[0].warnings[0].text


def test_merged_and_rail_nic_listings() -> None:
    """NCCL_IB_MERGE_NICS (2.20.3-2.23.4): " [%d]={" + "[%d] %s:%d/%s" + "}"
    (net_ib.cc:313 @2.20.3); 2.30.7 rail and plane: " [%d]%s:%d" + ":%d" + ":%d" + "/%s"
    (net_ib/init.cc:494-504 @2.30.7)."""
    merged = classify(
        b"node1:1:1 [0] NCCL INFO NET/IB : Using [0]={[0] mlx5_0:1/IB, [1] mlx5_0:2/IB} "
        b"[1]mlx5_1:1/IB ; OOB ib0:10.1.0.1<0>",
        "x",
    )
    assert merged is not None and merged.data[1] == (
        (0, "mlx5_0:1+mlx5_0:2", None, "IB", None),
        (1, "mlx5_1", 1, "IB", None),
    )
    rails = classify(
        b"node1:1:1 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1:3/IB [1]mlx5_1:1::2/RoCE "
        b"[RO]; OOB ib0:10.1.0.1<0>",
        "x",
    )
    assert rails is not None and rails.data[1] == (
        (0, "mlx5_0", 1, "IB", None),
        (1, "mlx5_1", 1, "RoCE", None),
    )
    job = [
        line.replace(
            "NET/IB : Using [0]mlx5_0:1/IB", "NET/IB : Using [0]={[0] mlx5_0:1/IB, [1] mlx5_0:2/IB}"
        )
        for line in three_comms(column_init=True)
    ]
    result = report(job)
    assert result.status == "PASS" and result.nics == ("mlx5_0:1+mlx5_0:2",), result.verdict
    assert "={" not in result.verdict


def test_libibverbs_missing_on_nccl_2_30() -> None:
    """2.30.3+: INFO "Count not open %s" (sic) for each library tried (ibvsymbols.cc:86
    @2.30.7): only libibverbs.so.1, the last, failing means there is none."""
    base = [
        "vm:1:1 [0] NCCL INFO NCCL version 2.30.7+cuda13.0",
        "vm:1:1 [0] NCCL INFO Count not open libibverbs.so",
    ]
    assert "libibverbs-missing" not in ids(report(base))  # the -dev link only
    missing = report([*base, "vm:1:1 [0] NCCL INFO Count not open libibverbs.so.1"])
    assert "libibverbs-missing" in ids(missing)
    assert (
        parse_nccl_log([*base, "vm:1:1 [0] NCCL INFO Count not open libibverbs.so.1"])
        .processes[0]
        .ib_no_device
    )


def test_glued_lines_are_split_where_the_prefix_is_recognisable() -> None:
    job = three_comms(column_init=True)
    # program output in front of an NCCL prefix (unflushed stdout of the training loop)
    front = [
        f"Epoch 1 step 3 loss=0.52{line}" if i % 40 == 39 else line for i, line in enumerate(job)
    ]
    # a connection line with the next line glued on without a space
    sends = [i for i, line in enumerate(job) if "[send] via NET" in line]
    for i in sends[:3]:
        job[i] = job[i] + job[i + 1]
    expected = report(three_comms(column_init=True))
    for lines in (front, job):
        result = report(lines)
        assert {h.host for h in result.hosts} == {"node1", "node2"}
        assert len(result.ranks) == 8
        assert result.verdict == expected.verdict
        assert result.transports == expected.transports


# ------------------------------------------------------------------ 19-21 and --expect


def test_the_verify_page_states_the_number_of_signatures() -> None:
    from hpnet.ncclog.signatures import SIGNATURES

    page = (Path(__file__).parents[2] / "docs" / "verify.md").read_text()
    assert f"and {len(SIGNATURES)} known failure signatures" in page


def test_unknown_exits_0_without_expect_and_1_with_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """What docs/verify.md and --help say: nothing proven is no failure unless asked for."""
    path = tmp_path / "started.log"
    path.write_text(
        "vm:1:1 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\nvm:1:1 [0] NCCL INFO Using network IB\n"
    )
    assert main(["verify", str(path)]) == 0
    assert capsys.readouterr().out.startswith("hpnet verify: UNKNOWN")
    assert main(["verify", str(path), "--expect", "net=ib"]) == 1
    assert "expect net=ib: NOT MET" in capsys.readouterr().out
    page = (Path(__file__).parents[2] / "docs" / "verify.md").read_text()
    assert "Without `--expect`, a log that\nproves no transport (status UNKNOWN" in page


def test_control_characters_from_a_log_are_shown_escaped(tmp_path: Path) -> None:
    from hpnet.render.verify import render_verify

    evil = "evil \x1b]0;PWNED\x07\x1b[31mred\x1b[0m \x1b[2K\rfake line \u202ereversed"
    lines = [
        "node1:1:1 [0] NCCL INFO Using network IB",
        "",
        f"node1:1:1 [0] misc/socket.cc:1 NCCL WARN {evil}",
        "n\x1b[2Jode:2:2 [0] NCCL INFO NET/IB : Using [0]mlx\x1b[5m5_0:1/IB ; OOB eth0:1.2.3.4<0>",
    ]
    text = render_verify(report(lines))
    assert not [c for c in text if (ord(c) < 0x20 and c != "\n") or c == "\u202e"]
    # colour and title sequences are removed as the log is read (a terminal would not
    # show them either); what remains of a control character is shown escaped
    assert "PWNED" not in text and "\x1b" not in text
    assert "\\x0dfake line" in text and "\\u202ereversed" in text


def test_expect_rejects_what_it_cannot_mean(capsys: pytest.CaptureFixture[str]) -> None:
    for spec in ("net=ib;gdr", "net=ib,net=socket", "gdr,no-gdr", "net=", "net=ib gdr;"):
        assert main(["verify", str(GOOD), "--expect", spec]) == 2, spec
        assert "error[bad-expect]" in capsys.readouterr().err
    assert main(["verify", str(GOOD), "--expect", "net=IB, gdr"]) == 0


def test_no_version_unknown_when_rank_0_printed_the_version() -> None:
    """Up to 2.21 rank 0 prints a bare "NCCL version" line (init.cc, printed at VERSION
    level without the host:pid prefix): the version is known."""
    job = three_comms(column_init=True)  # 2.28 lines, no version line of their own
    assert any("no NCCL version line" in u for u in report(job).unknowns)
    bare = report(["NCCL version 2.28.9+cuda12.4", *job])
    assert bare.nccl_versions == ("2.28.9",)
    assert not any("no NCCL version line" in u for u in bare.unknowns)


def test_what_nccls_source_does_after_a_warn_decides_failure_or_warning() -> None:
    """A WARN no signature knows: fatal where NCCL's source returns an error after it
    (src/hpnet/ncclog/data/nccl_formats.json), a warning where it goes on, whatever the
    rest of the process's log shows."""
    went_on = report(
        [
            "node1:1:2 [0] graph/xml.cc:172 NCCL WARN Error : XML parser is limited to 1024 nodes",
            "node1:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC",
            "node1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 cudaDev 0 busId 1000 - Init COMPLETE",
        ]
    )
    failure = next(f for f in went_on.findings if f.id == "topology-failed")
    assert failure.severity == "error" and failure.fatal and went_on.status == "FAIL"
    trail = report(
        [
            "node1:1:2 [0] misc/rings.cc:355 NCCL WARN Could not create rings, falling back on "
            "simple ring",
            "node1:1:2 [0] NCCL INFO init.cc:1 -> 5",
        ]
    )
    assert "topology-failed" not in ids(trail)
    warning = next(f for f in trail.findings if f.id == "other-warnings")
    assert warning.severity == "warning" and not warning.fatal
    # the same text from a line no release prints it from: the failing path decides
    moved = report(
        [
            "node1:1:2 [0] misc/rings.cc:1 NCCL WARN Could not create rings, falling back on "
            "simple ring",
            "node1:1:2 [0] NCCL INFO init.cc:1 -> 5",
        ]
    )
    assert "topology-failed" in ids(moved)


def test_aws_ofi_nccls_provider_line_without_a_nic_count_names_the_provider() -> None:
    # aws-ofi-nccl before v1.1 prints "NET/OFI Selected Provider is efa" (no count): a
    # real two-pod EKS run of nccl-tests
    log = (
        DATA
        / "nccl-tests"
        / "all_reduce-eks-efa-2node-v100-kubectl-settrace-ncclinfo-ncclTests2.0-2.9.txt"
    )
    inputs, _ = collect_inputs([str(log)])
    result = analyse(read_logs(inputs))
    assert [h.chose for h in result.hosts] == [("NET/AWS Libfabric over efa",)] * 2
    assert any(
        "NET/OFI Selected Provider is efa" in e for h in result.hosts for e in h.chose_evidence
    )


def _without_prefixes(name: str) -> list[str]:
    """A real log as people paste it: NCCL's messages without ``host:pid:tid [d] NCCL
    INFO|WARN``."""
    prefix = re.compile(
        r"^.*?\S+:\d+:\d+ \[-?\d+\](?: \S+:\d+(?: \([^)]*\))?)? NCCL (?:INFO|WARN) "
    )
    text = (DATA / "nccl-logs" / name).read_text()
    return [prefix.sub("", line) for line in text.splitlines()]


def test_warns_pasted_without_their_prefix_are_read_by_their_format() -> None:
    # docker's 64 MB /dev/shm: "Call to posix_fallocate failed : No space left on device"
    # (fatal in NCCL's source) and the SHM segment error, pasted alone
    lines = _without_prefixes(
        "docker-dev-shm-full-posix-fallocate-warn-level-no-libibverbs-nccl2.7.3.log"
    )
    result = report(lines)
    assert result.status == "FAIL" and result.fatal
    shm = next(f for f in result.findings if f.fatal)
    assert any(
        e.endswith("Call to posix_fallocate failed : No space left on device") for e in shm.evidence
    )
    # GCP FastSocket's WARNs, after which the plugin went on ("Connected after 1000
    # retries"): a warning, not a failure, and not a refused log either
    result = report(
        _without_prefixes("gcp-fastsocket-incoming-cpu-warn-max-retry-nonfatal-ncclunknown.log")
    )
    assert result.status == "UNKNOWN" and not result.fatal
    warned = next(f for f in result.findings if f.id == "other-warnings")
    assert warned.severity == "warning"
    assert any(e.endswith("Cannot get incoming CPU.") for e in warned.evidence)


def test_a_program_line_that_only_starts_like_a_warn_is_not_one() -> None:
    result = report(["Call to posix_fallocate: my program's own words", "step 10 loss 0.5"])
    assert not result.findings
