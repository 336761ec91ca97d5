"""``hpnet hang`` on real NCCL jobs that hung on GPUs (issue 27): planted hangs recorded on
the lent GPU machine (tests/data/flight-recorder/nccl-*, each .source.txt says what a
correct tool concludes), NCCL's RAS asked live during two of them (tests/data/hang/
ras-live-*), and the live RAS query itself, against a server that answers as NCCL's
src/ras/client_support.cc does, with a recorded answer."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from hpnet.errors import InputError
from hpnet.hang.collect import collect
from hpnet.hang.flight import load_dump
from hpnet.hang.judge import judge
from hpnet.hang.raslive import parse_addr, query
from hpnet.hang.verdict import judge_evidence
from tests.conftest import DATA

FR = DATA / "flight-recorder"
RAS = DATA / "hang"
ROOT = Path(__file__).parents[2]

#: recording -> (kind, ranks named, group, sequence number, ranks waiting there)
PLANTED = {
    "nccl-torch2.11-w2-skip-rank1": ("never-entered", (1,), "0", 3, (0,)),
    "nccl-torch2.11-w4-kill-rank2": ("gone", (2,), "0", 2, (3,)),
    "nccl-torch2.11-w4-stop-rank1": ("silent", (1,), "0", 3, (0, 2, 3)),
    "nccl-torch2.11-w2-net-rank1": ("stuck-in-collective", (0, 1), "0", 3, ()),
    "nccl-torch2.11-w4-size-rank1": ("mismatch", (1,), "0", 3, ()),
    "nccl-torch2.11-w3-subgroup-rank0": ("never-entered", (0,), "1", 3, (1,)),
}


def _hpnet(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "hpnet", *args],
        capture_output=True, text=True, timeout=60, check=False, cwd=ROOT,
    )  # fmt: skip


@pytest.mark.parametrize("name", sorted(PLANTED))
def test_every_nccl_hang_is_named_with_its_rank_kind_and_collective(name: str) -> None:
    report = judge_evidence(collect([str(FR / name)]))
    kind, ranks, pg, seq, waiting = PLANTED[name]
    first = report.causes[0]
    assert (report.status, first.kind, first.ranks, first.pg, first.seq, first.waiting) == (
        "hang", kind, ranks, pg, seq, waiting,
    )  # fmt: skip
    assert len(report.causes) == 1, report.causes  # one fault, one cause


def test_a_rank_that_stops_leaves_every_group_waiting_and_is_one_cause() -> None:
    # NCCL issues a rank's next collectives without waiting: rank 0 waits in the world
    # group's #3 and the subgroup's #2, both for rank 1
    report = judge_evidence(collect([str(FR / "nccl-torch2.11-w2-skip-rank1")]))
    (cause,) = report.causes
    assert cause.also_in == ("all_reduce #2 of group 1 (undefined)",)
    assert "rank 0: in #3 all_reduce [1024] Float (started), then 1 more scheduled" in (
        cause.evidence
    )


def test_a_killed_rank_is_gone_because_its_peers_lost_it_before_any_timeout() -> None:
    report = judge_evidence(collect([str(FR / "nccl-torch2.11-w4-kill-rank2")]))
    (cause,) = report.causes
    # rank 3 never completed the all_gather the killed rank fed: it waits inside it, it is
    # not behind in its own work
    assert "rank 3: in #2 _all_gather_base [1024] Float (started)" in cause.evidence
    assert "ranks 0, 1: in #3 all_reduce [1024] Float (started), then 1 more scheduled" in (
        cause.evidence
    )
    closed = [e for e in report.errors if e.peer_closed]
    timeouts = [e for e in report.errors if e.timeout]
    assert closed and min(e.at for e in closed if e.at) < min(
        (e.at for e in timeouts if e.at), default=float("inf")
    )
    # where it ran, by its NCCL log, and its neighbour's WARN
    where = {p.rank: p for p in report.places}
    assert (where[2].host_id, where[2].gpu, where[2].network) == ("plant-host-2", 0, "Socket")
    assert any("Connection closed by remote peer" in w for w in where[3].warnings)
    assert (
        where[3].warnings[0].startswith(f"{FR / 'nccl-torch2.11-w4-kill-rank2'}/nccl.vm.4942.log:")
    )


def test_a_frozen_rank_is_silent_its_peers_timed_out_first() -> None:
    report = judge_evidence(collect([str(FR / "nccl-torch2.11-w4-stop-rank1")]))
    assert report.causes[0].kind == "silent"
    assert report.without_dump == (1,)


def test_a_stalled_network_names_every_rank_and_the_links_their_nccl_logs_show() -> None:
    done = _hpnet("hang", str(FR / "nccl-torch2.11-w2-net-rank1"))
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == (
        "hpnet hang: STUCK — every rank entered all_reduce #3 of group 0 (default_pg) and none "
        "completed it"
    )
    assert "connect them over NET/Socket/0 (eth0 192.0.2.2; hosts plant-host-0, plant-host-1)" in (
        done.stdout
    )
    assert (
        "  rank 1: host vm (NCCL host plant-host-1), pid 661, GPU 1 (bus 70), Socket via eth0 "
        "192.0.2.2, transports NET/Socket/0"
    ) in lines
    assert lines[-1] == (
        f"Read under {FR / 'nccl-torch2.11-w2-net-rank1'}: 2 Flight Recorder dump(s) (format "
        "2.10), 2 NCCL log(s), 14 error line(s) of the ranks"  # with each rank's status
    )  # when the dump signal came ("Received a dump signal ... Last enqueued NCCL work: 4")
    assert len(lines) <= 24  # one screen
    data = json.loads(_hpnet("hang", "--json", str(FR / "nccl-torch2.11-w2-net-rank1")).stdout)
    assert [p["transports"] for p in data["places"]] == [["NET/Socket/0"], ["NET/Socket/0"]]


def test_a_clean_nccl_job_whose_dumps_hold_only_active_collectives_names_no_one() -> None:
    # torch leaves "entries" out of a dump of only the active collectives when none is
    dump = FR / "nccl-torch2.11-w3-clean" / "nccl_trace_rank_0"
    assert "entries" not in json.loads(dump.read_bytes())
    assert load_dump(str(dump), dump.read_bytes()).entries == ()
    done = _hpnet("hang", str(FR / "nccl-torch2.11-w3-clean"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("hpnet hang: NO HANG — no rank recorded a collective in flight")


def test_a_rank_that_dumped_no_entries_is_placed_by_its_pg_status() -> None:
    # rank 2 left the subgroup plant's job cleanly: its dump lists no collective, its
    # pg_status says it enqueued the world group's #6, as ranks 0 and 1 did
    report = judge_evidence(collect([str(FR / "nccl-torch2.11-w3-subgroup-rank0")]))
    world = next(g for g in report.groups if g.pg == "0")
    assert dict(world.last) == {0: 6, 1: 6, 2: 6}
    assert [c.pg for c in report.causes] == ["1"]


def test_ras_asked_during_a_skipped_collective_names_the_rank_behind() -> None:
    for ext in ("txt", "json"):
        done = _hpnet("hang", str(RAS / f"ras-live-2.28.9-rank1-skipped-allreduce-mismatch.{ext}"))
        assert done.returncode == 1
        assert done.stdout.startswith(
            "hpnet hang: STUCK — rank 1 launched AllReduce operations up to 1, rank 0 up to 2"
        ), done.stdout


def test_ras_running_ok_during_a_stalled_network_is_not_called_no_hang() -> None:
    # RAS said RUNNING OK while both ranks sat in a stalled all_reduce: equal counts are a
    # running job or a collective stuck on every rank alike
    for ext in ("txt", "json"):
        done = _hpnet("hang", str(RAS / f"ras-live-2.28.9-stalled-network-running-ok.{ext}"))
        assert done.returncode == 1, done.stdout
        assert done.stdout.startswith("hpnet hang: UNKNOWN — the RAS report shows no dead"), (
            done.stdout
        )


class _RasServer:
    """Answers as NCCL's RAS service does (src/ras/client_support.cc, 2.28.9): ``SERVER
    PROTOCOL 2`` to the client's protocol line, ``OK`` to TIMEOUT, ``OK`` to ``SET FORMAT
    json`` from 2.28.7 on (before: ``ERROR: Unknown command``), then the report of
    ``VERBOSE STATUS`` and the connection closed. The report is a recorded one."""

    def __init__(self, text: bytes, json_report: bytes, *, has_format: bool = True) -> None:
        self.text, self.json, self.has_format = text, json_report, has_format
        self.commands: list[str] = []
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn, conn.makefile("rb") as lines:
                fmt = "text"
                for raw in lines:
                    cmd = raw.decode().strip()
                    self.commands.append(cmd)
                    if cmd.upper().startswith("CLIENT PROTOCOL "):
                        conn.sendall(b"SERVER PROTOCOL 2\n")
                    elif cmd.upper().startswith("TIMEOUT "):
                        conn.sendall(b"OK\n")
                    elif cmd.upper().startswith("SET FORMAT ") and self.has_format:
                        fmt = cmd.split()[-1].lower()
                        conn.sendall(b"OK\n")
                    elif cmd.upper() in ("STATUS", "VERBOSE STATUS"):
                        conn.sendall(self.json if fmt == "json" else self.text)
                        break
                    else:
                        conn.sendall(f"ERROR: Unknown command {cmd}\n".encode())


@pytest.fixture
def ras_server() -> Iterator[_RasServer]:
    stem = RAS / "ras-live-2.28.9-rank1-skipped-allreduce-mismatch"
    server = _RasServer(Path(f"{stem}.txt").read_bytes(), Path(f"{stem}.json").read_bytes())
    yield server
    server.sock.close()


def test_the_live_query_speaks_ncclras_protocol_and_takes_json_where_offered(
    ras_server: _RasServer,
) -> None:
    live = query(f"127.0.0.1:{ras_server.port}")
    assert ras_server.commands == [
        "CLIENT PROTOCOL 2", "TIMEOUT 5", "SET FORMAT json", "VERBOSE STATUS",
    ]  # fmt: skip
    assert (live.protocol, live.format) == (2, "json")
    assert live.text.encode() == ras_server.json


def test_the_live_query_falls_back_to_text_before_2_28_7() -> None:
    stem = RAS / "ras-live-2.28.9-rank1-skipped-allreduce-mismatch"
    server = _RasServer(Path(f"{stem}.txt").read_bytes(), b"", has_format=False)
    try:
        live = query(f"127.0.0.1:{server.port}")
    finally:
        server.sock.close()
    assert live.format == "text" and live.text.startswith("NCCL version 2.28.9")


def test_hang_ras_gives_the_verdict_of_the_running_job(ras_server: _RasServer) -> None:
    done = _hpnet("hang", "--ras", f"127.0.0.1:{ras_server.port}")
    assert done.returncode == 1, done.stderr
    assert done.stdout.startswith("hpnet hang: STUCK — rank 1 launched AllReduce operations")
    assert "asking NCCL RAS at 127.0.0.1:" in done.stderr


def test_hang_ras_on_a_port_nobody_listens_on_is_a_clear_error() -> None:
    with socket.create_server(("127.0.0.1", 0)) as free:
        port = free.getsockname()[1]
    done = _hpnet("hang", "--ras", f"127.0.0.1:{port}")
    assert done.returncode == 2
    assert "error[ras-query]: cannot query NCCL's RAS service" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("given", ["", ":28028", "host:port", "host:0", "[fe80::1"])
def test_a_bad_ras_address_is_refused_before_any_connection(given: str) -> None:
    with pytest.raises(InputError, match="not a RAS address"):
        parse_addr(given)


def test_a_rank_that_never_completed_what_its_peer_completed_is_named_alone() -> None:
    # the stalled-network recording (both ranks started all_reduce #3, none completed),
    # with rank 0's #3 marked completed, as a rank whose peer's data all came would
    # record it: rank 1 alone waited for data that never came
    evidence = collect([str(FR / "nccl-torch2.11-w2-net-rank1")])
    dumps = [
        replace(
            d,
            entries=tuple(
                replace(e, state="completed") if (e.pg, e.seq) == ("0", 3) else e for e in d.entries
            ),
        )
        if d.rank == 0
        else d
        for d in evidence.dumps
    ]
    first = judge(dumps, evidence.errors).causes[0]
    assert (first.kind, first.ranks, first.seq) == ("stuck-in-collective", (1,), 3)
    assert first.headline() == (
        "rank 1 entered all_reduce #3 of group 0 (default_pg) and never completed it; rank 0 did"
    )
    assert first.evidence == ("rank 1: #3 started", "rank 0: #3 completed")
    assert first.fix.startswith("rank 1 never received all of this collective that rank 0")
