"""The NCCL debug-log parser: line shapes of every era, prefixes, streaming, bad input."""

from __future__ import annotations

import concurrent.futures
import gzip
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from hpnet.ncclog.facts import parse_nccl_log, parse_nccl_text
from hpnet.ncclog.lines import classify
from hpnet.ncclog.model import TransportKind, parse_transport
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import analyse, parse_expectation
from hpnet.ncclog.versions import format_range, hint_for
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"


@pytest.mark.parametrize(
    ("text", "kind", "label", "nic", "proxy", "gdr"),
    [
        ("NET/IB/0/GDRDMA", TransportKind.NET, "NET/IB", 0, None, True),
        ("NET/IB/1(3)/GDRDMA", TransportKind.NET, "NET/IB", 1, 3, True),
        ("NET/IB/0/GDRDMA/Shared", TransportKind.NET, "NET/IB", 0, None, True),
        ("NET/IB/1/GDRDMA(PCI)/Shared", TransportKind.NET, "NET/IB", 1, None, True),
        ("NET/Socket/0", TransportKind.NET, "NET/Socket", 0, None, False),
        ("NET/AWS Libfabric/1/GDRDMA", TransportKind.NET, "NET/AWS Libfabric", 1, None, True),
        ("NET/IBext_v8/3", TransportKind.NET, "NET/IBext_v8", 3, None, False),
        ("P2P/CUMEM/read", TransportKind.P2P, "P2P/CUMEM", None, None, False),
        ("P2P/direct pointer/read", TransportKind.P2P, "P2P/direct pointer", None, None, False),
        ("P2P/IPC/read/CE", TransportKind.P2P, "P2P/IPC", None, None, False),
        ("SHM/direct/direct", TransportKind.SHM, "SHM/direct/direct", None, None, False),
        ("direct shared memory", TransportKind.SHM, "SHM/direct shared memory", None, None, False),
        ("COLLNET/SHARP/0/GDRDMA", TransportKind.COLLNET, "CollNet/SHARP", 0, None, True),
    ],
)
def test_transport_strings_of_every_release(  # noqa: PLR0917 - the parametrized columns
    text: str, kind: TransportKind, label: str, nic: int | None, proxy: int | None, gdr: bool
) -> None:
    t = parse_transport(text)
    assert (t.kind, t.label, t.nic, t.proxy_rank, t.gdr) == (kind, label, nic, proxy, gdr)


@pytest.mark.parametrize(
    ("line", "key", "launcher_rank"),
    [
        ("vm:3177:3177 [0] NCCL INFO Using network Socket", "vm:3177", None),
        ("[1,3]<stdout>:gpu1:41:41 [3] NCCL INFO Using network IB", "gpu1:41", 3),
        ("3: node7:901:901 [3] NCCL INFO Using network IB", "node7:901", 3),
        ("[rank5]:node7:901:901 [5] NCCL INFO Using network IB", "node7:901", 5),
        # a launcher's tag outside torch's: the innermost is the process's own
        ("[rank0]:[rank4]:node7:901:901 [0] NCCL INFO Using network IB", "node7:901", 4),
        (
            "[trainer0|0]:twshared1016:1958:1958 [0] NCCL INFO Using network IB",
            "twshared1016:1958",
            0,
        ),
        ("[155] crow-19:5330:5499 [3] NCCL INFO Using network IB", "crow-19:5330", 155),
        (
            "  | 2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0] NCCL INFO Using network IB",
            "ip-10-36-29-253:79",
            None,
        ),
        (
            "10.0.87.143: 10.0.87.143: ip-10-0-87-143:14:14 [5] NCCL INFO Using network IB",
            "ip-10-0-87-143:14",
            None,
        ),
        ("<cluster_name>:924:924 [0] NCCL INFO Using network IB", "<cluster_name>:924", None),
    ],
)
def test_launcher_prefixes_and_timestamps_are_read_through(
    line: str, key: str, launcher_rank: int | None
) -> None:
    event = classify(line.encode(), "x.log")
    assert event is not None and event.process is not None
    assert event.process[0] == key
    assert event.process[3] == launcher_rank
    assert event.data[0] in {"IB", "Socket"}


def test_warn_lines_with_timestamp_and_file_line() -> None:
    line = (
        b"[2026-11-21 23:50:29] vm:3416:3416 [0] bootstrap.cc:114 NCCL WARN Bootstrap : no "
        b"socket interface found"
    )
    event = classify(line, "x")
    assert event is not None and event.kind == "warn"
    assert event.process is not None and event.process[0] == "vm:3416"
    assert event.data == ("bootstrap.cc:114",)
    assert event.text == "Bootstrap : no socket interface found"


@pytest.mark.parametrize(
    ("message", "src", "dst", "direction", "via"),
    [
        ("Channel : 2[2] -> 0[0] [send] via NET/Socket/0", 2, 0, "send", "NET/Socket/0"),
        (
            "Channel : 0[0] -> 2[2] [receive] via NET/IB/0/GDRDMA",
            0,
            2,
            "receive",
            "NET/IB/0/GDRDMA",
        ),
        ("Ring : 3 -> 6 [receive] via NET/IB/0", 3, 6, "receive", "NET/IB/0"),  # 2.4: no brackets
        ("Ring : 155[3d000] -> 157[b2000] via P2P/IPC", 155, 157, None, "P2P/IPC"),
        ("Channel : 0[9000] 1[9000] via NET/IB/0", 0, 1, None, "NET/IB/0"),  # a guide's copy
    ],
)
def test_connection_lines(
    message: str, src: int, dst: int, direction: str | None, via: str
) -> None:
    event = classify(f"h:1:1 [0] NCCL INFO {message}".encode(), "x")
    assert event is not None and event.kind == "connection"
    got_src, _, got_dst, _, got_direction, got_via = event.data
    assert (got_src, got_dst, got_direction, got_via) == (src, dst, direction, via)


def test_ring_order_lines_are_not_connections() -> None:
    event = classify(b"h:1:1 [0] NCCL INFO Channel :    0   1   2   3", "x")
    assert event is not None and event.kind == "ring" and event.data == (0, 1, 2, 3)


def test_version_fingerprints() -> None:
    assert hint_for("bootstrap", "Bootstrap : Using eth0:10.0.0.1<0>") == ((2, 8, 3), (2, 23, 4))
    assert hint_for("plugin", "NET/Plugin: Could not find: libnccl-net.so") == ((2, 28, 3), None)
    assert hint_for("other", "anything") is None
    assert format_range(((2, 17, 1), (2, 18, 6))) == "2.17.1-2.18.6"
    log = parse_nccl_log(
        [
            "a:1:1 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>",
            "a:1:1 [0] NCCL INFO NET/Plugin : Plugin load (libnccl-net.so) returned 2 : x",
        ]
    )
    assert log.processes[0].version_range == "2.17.1-2.18.6"


def test_the_channel_number_does_not_make_connections_distinct() -> None:
    lines = [
        f"h:1:1 [0] NCCL INFO Channel {c:02d}/0 : 0[0] -> 1[1] via P2P/CUMEM" for c in range(32)
    ]
    (connection,) = parse_nccl_log(lines).processes[0].connections
    assert connection.channels == 32 and connection.transport.label == "P2P/CUMEM"


def test_parsing_in_parallel_gives_the_same_answer(tmp_path: Path) -> None:
    """Byte ranges scanned by worker processes, folded in order, equal one pass."""
    from hpnet.ncclog import read as logread

    # every log once (an exact repeat would re-init communicators at the same address
    # with the same commId, which NCCL never does), cut into ~90 ranges of 4 KiB
    parts = [p.read_bytes() for p in sorted(LOGS.glob("*.log"))]
    big = tmp_path / "all.log"
    big.write_bytes(b"\n".join(parts))
    inputs, _ = collect_inputs([str(big)])
    one = analyse(read_logs(inputs, jobs=1))
    saved = logread.RANGE_BYTES, logread.PARALLEL_MIN_BYTES, logread.RANGES_PER_WORKER
    logread.RANGE_BYTES, logread.PARALLEL_MIN_BYTES, logread.RANGES_PER_WORKER = 4096, 0, 1 << 20
    try:
        many = analyse(read_logs(inputs, jobs=2))
    finally:
        logread.RANGE_BYTES, logread.PARALLEL_MIN_BYTES, logread.RANGES_PER_WORKER = saved
    assert many == one
    # evidence keeps the line numbers of the whole file across ranges
    # and quotes the line as the file has it
    warn = next(f for f in one.findings if f.id == "completion-local-protection")
    number = int(warn.evidence[0].split(":")[1])
    line = big.read_bytes().split(b"\n")[number - 1].decode()  # NCCL ends lines with \n only
    assert warn.evidence[0] == f"{big}:{number}: {line.rstrip()}"
    assert "status=4" in line or "error 4" in line


class _InProcessPool:
    """``concurrent.futures``' map, run here: the ranges are what is tested."""

    def map(self, *args: Any) -> Iterator[Any]:
        return map(*args)

    def submit(self, fn: Any, /, *args: Any) -> concurrent.futures.Future[Any]:
        future: concurrent.futures.Future[Any] = concurrent.futures.Future()
        future.set_result(fn(*args))
        return future

    def shutdown(self, **_: object) -> None:
        pass


@pytest.mark.parametrize(
    "path",
    sorted(p for p in LOGS.iterdir() if not p.name.endswith(".txt")),
    ids=lambda p: p.name,
)
def test_every_recorded_log_in_ranges_gives_the_same_answer(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each log (files and directories) alone, cut into ranges of 512 bytes: a range
    boundary between lines without a host prefix, or quoted with ``> ``, changes no fact."""
    from hpnet.ncclog import read as logread

    inputs, _ = collect_inputs([str(path)])
    one = analyse(read_logs(inputs, jobs=1))
    monkeypatch.setattr(logread, "RANGE_BYTES", 512)
    monkeypatch.setattr(logread, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(logread, "RANGES_PER_WORKER", 1 << 20)
    monkeypatch.setattr(logread, "_pool", lambda _workers: _InProcessPool())
    assert analyse(read_logs(inputs, jobs=2)) == one


def test_a_later_nic_list_replaces_an_earlier_one_in_ranges_as_in_one_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A line of NCCL 2.4 on lists a network's NICs whole, and folding keeps the last
    list; merging a later range had joined the two lists instead, so ``NET/IB/0`` named
    another NIC (two logs without a host prefix in one file: tests/data's ibp0..ibp7 and
    mlx5_0)."""
    from hpnet.ncclog import read as logread

    lines = [
        "NCCL INFO NET/IB : Using [0]ibp0:1/IB [1]ibp1:1/IB ; OOB ib0:10.0.0.1<0>",
        *["NCCL INFO Bootstrap timings total 0.001" for _ in range(40)],
        "NCCL INFO NET/IB : Using [0]mlx5_0:1/RoCE ; OOB br0:10.0.0.2<0>",
        "NCCL INFO Channel 00/0 : 1[1] -> 0[0] [receive] via NET/IB/0",
    ]
    path = tmp_path / "job.log"
    path.write_text("\n".join(lines) + "\n")
    inputs, _ = collect_inputs([str(path)])
    one = analyse(read_logs(inputs, jobs=1))
    assert [r.nics for r in one.ranks] == [("mlx5_0:1",)]
    monkeypatch.setattr(logread, "RANGE_BYTES", 512)
    monkeypatch.setattr(logread, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(logread, "RANGES_PER_WORKER", 1 << 20)
    monkeypatch.setattr(logread, "_pool", lambda _workers: _InProcessPool())
    assert analyse(read_logs(inputs, jobs=2)) == one


#: two processes of host ``vm``; 629's line glued to 628's after a digit ("delay 0vm:629")
_GLUED_AFTER_DIGIT = (
    "vm:628:628 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    "vm:629:629 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n"
    "vm:629:629 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
    "vm:628:628 [0] NCCL INFO Bootstrap timings total 0.000768 (create 0.000038, delay 0"
    "vm:629:629 [0] NCCL INFO Bootstrap timings total 0.000568 (create 0.000041, delay 0.0)\n"
    "vm:628:628 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
)


def _read_in_ranges(
    path: Path, range_bytes: int, monkeypatch: pytest.MonkeyPatch
) -> tuple[str, ...]:
    from hpnet.ncclog import read as logread

    monkeypatch.setattr(logread, "RANGE_BYTES", range_bytes)
    monkeypatch.setattr(logread, "PARALLEL_MIN_BYTES", 0)
    monkeypatch.setattr(logread, "RANGES_PER_WORKER", 1 << 20)
    monkeypatch.setattr(logread, "_pool", lambda _workers: _InProcessPool())
    inputs, _ = collect_inputs([str(path)])
    return tuple(p.key for p in read_logs(inputs, jobs=2).processes)


def test_a_host_glued_after_a_digit_is_cut_alike_in_every_range(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """One pass remembers 629's host ``vm`` and cuts ``0vm:629`` to it; a range that
    starts after 629's first lines guesses ``0vm`` (the run), and the folder resolves the
    guess into ``vm:629`` once every range is read: no third process, wherever cut."""
    path = tmp_path / "glued.log"
    path.write_text(_GLUED_AFTER_DIGIT)
    inputs, _ = collect_inputs([str(path)])
    one = read_logs(inputs, jobs=1)
    assert [p.key for p in one.processes] == ["vm:628", "vm:629"]
    # the glued line first in a scan: a guess, resolved the same way
    glued_first = "".join(_GLUED_AFTER_DIGIT.splitlines(keepends=True)[3:])
    assert [p.key for p in parse_nccl_text(glued_first.encode()).processes] == [
        "vm:628",
        "vm:629",
    ]
    for range_bytes in range(1, len(_GLUED_AFTER_DIGIT) + 1, 7):
        assert _read_in_ranges(path, range_bytes, monkeypatch) == ("vm:628", "vm:629")


def test_a_guessed_host_named_by_a_line_of_its_own_is_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A guess is resolved only where no line names its host: a real host ``0vm`` with
    the same pid as ``vm`` stays a process of its own, in one pass and in ranges."""
    text = _GLUED_AFTER_DIGIT + "0vm:629:629 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.2<0>\n"
    path = tmp_path / "glued.log"
    path.write_text(text)
    inputs, _ = collect_inputs([str(path)])
    one = tuple(p.key for p in read_logs(inputs, jobs=1).processes)
    assert set(one) == {"vm:628", "vm:629", "0vm:629"}
    for range_bytes in range(1, len(text) + 1, 7):
        assert set(_read_in_ranges(path, range_bytes, monkeypatch)) == set(one)


def test_a_log_forwarders_prefix_is_no_glued_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Azure ML's log forwarder puts "[<pod>, unknown_ip] " before NCCL's host: a
    forwarder's tags, not program output glued to the host. Read as glued, the pid's
    host was a guess, resolved in ranges into a host seen elsewhere that ends the name
    ("-worker-1", another log's) and kept in one pass. Real lines: the forwarder's job
    log, then a line whose host is "-worker-1"."""
    job = (
        (
            LOGS / "aml-kubernetes-log-forwarder-prefix-invalid-rank-requested-2-of-2-socket-"
            "nccl2.4.8.log"
        )
        .read_text()
        .splitlines()[:2]
    )
    other = (LOGS / "roce-completion-error12-vendor129-oneline-nccl2.8.log").read_text()
    text = "\n".join(job) + "\n" + other
    path = tmp_path / "forwarded.log"
    path.write_text(text)
    inputs, _ = collect_inputs([str(path)])
    one = tuple(p.key for p in read_logs(inputs, jobs=1).processes)
    assert one == ("job-pytorch-distr-nccl-1612503130-4b919e08-worker-1:25", "-worker-1:946")
    for range_bytes in (len(job[0]) + 1, 64, 200):
        assert _read_in_ranges(path, range_bytes, monkeypatch) == one


def test_lines_and_text_give_the_same_answer() -> None:
    data = (LOGS / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log").read_bytes()
    from_text = parse_nccl_text(data, source="x")
    from_lines = parse_nccl_log(data.decode().splitlines(), source="x")
    assert from_text.processes == from_lines.processes


@pytest.mark.parametrize(
    ("content", "why"),
    [
        (b"", "empty"),
        (b"\x00\x01\x02ELF" * 1000, "binary"),
        (b"just some text\nwithout any NCCL line at all\n" * 50, "garbage"),
    ],
)
def test_inputs_without_nccl_lines(tmp_path: Path, content: bytes, why: str) -> None:
    path = tmp_path / f"{why}.log"
    path.write_bytes(content)
    inputs, notes = collect_inputs([str(path)])
    if why == "binary":
        assert not inputs and "binary" in notes[0]
        return
    report = analyse(read_logs(inputs, jobs=1))
    assert report.status == "UNKNOWN" and not report.ranks


def test_a_truncated_log_and_invalid_utf8_are_read(tmp_path: Path) -> None:
    data = (LOGS / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log").read_bytes()
    cut = data[: len(data) // 2] + b"\xff\xfe half a line without its end"
    path = tmp_path / "cut.log"
    path.write_bytes(cut)
    inputs, _ = collect_inputs([str(path)])
    report = analyse(read_logs(inputs, jobs=1))
    assert report.ranks  # what is there is read
    assert report.status in {"PASS", "WARN", "UNKNOWN"}


def test_a_huge_line_is_cut_not_held(tmp_path: Path) -> None:
    path = tmp_path / "long.log.gz"
    with gzip.open(path, "wb") as handle:  # streamed (gzip): the stream path
        handle.write(b"x" * (9 << 20))  # longer than a block: no newline to cut at
        handle.write(b"\nvm:1:1 [0] NCCL INFO Using network IB\n")
    inputs, _ = collect_inputs([str(path)])
    log = read_logs(inputs, jobs=1)
    assert log.processes[0].networks == ("IB",)
    assert any("longer than" in n for n in log.input_notes)


def test_expectations() -> None:
    assert parse_expectation("net=socket").net == "socket"
    with pytest.raises(ValueError, match="unknown"):
        parse_expectation("speed=fast")
    inputs, _ = collect_inputs(
        [str(LOGS / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log")]
    )
    log = read_logs(inputs, jobs=1)
    assert all(r.met for r in analyse(log, parse_expectation("net=ib,gdr")).expectations)
    failed = analyse(log, parse_expectation("net=socket"))
    assert failed.status == "FAIL" and not failed.expectations[0].met
    inputs, _ = collect_inputs([str(LOGS / "h200x4-fake-hosts-2x2-net-socket-nccl2.28.9")])
    sockets = analyse(read_logs(inputs, jobs=1), parse_expectation("net=socket"))
    # sockets were asked for: the fallback is no longer an error
    assert all(f.severity != "error" for f in sockets.findings)
    assert sockets.expectations[0].met


def test_jobs_never_forks_more_workers_than_cpus_or_ranges(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--jobs 100000` once forked thousands of processes (a pool forks all its workers
    before the first task) and took the machine's memory: the pool is capped."""
    from hpnet.ncclog import read as logread

    sizes: list[int] = []
    real_pool = logread._pool

    def spy(workers: int):  # type: ignore[no-untyped-def]
        sizes.append(workers)
        return real_pool(workers)

    monkeypatch.setattr(logread, "_pool", spy)
    monkeypatch.setattr(logread, "_cpu_count", lambda: 2)
    monkeypatch.setattr(logread, "RANGE_BYTES", 4096)
    monkeypatch.setattr(logread, "PARALLEL_MIN_BYTES", 0)
    big = tmp_path / "all.log"
    big.write_bytes(b"\n".join(p.read_bytes() for p in sorted(LOGS.glob("*.log"))))
    inputs, _ = collect_inputs([str(big)])
    read_logs(inputs, jobs=100_000)
    assert sizes == [8]  # 4 per CPU
    small = tmp_path / "small.log"
    small.write_bytes(b"x" * 5000)  # two ranges
    inputs, _ = collect_inputs([str(small)])
    read_logs(inputs, jobs=100_000)
    assert sizes[1] == 2


def test_a_process_record_survives_pickling_with_its_falsy_values() -> None:
    """A range's records travel to the main process pickled, without the fields a new
    record has: a value that is falsy but not the new record's (pid 0, launcher rank 0,
    NVLS support False) must come back."""
    import pickle

    from hpnet.ncclog.process import ProcessFacts

    record = ProcessFacts(("h:0", "h", 0, 0, None))
    record.nvls_support = False
    record.devices[0] = None
    record.connections[(0, "", 1, "", None, "P2P/CUMEM")] += 2
    back = pickle.loads(pickle.dumps(record))  # noqa: S301 - its own bytes
    assert list(vars(back).items()) == list(vars(record).items())
    assert back.nvls_support is False and back.pid == 0 and back.launcher_rank == 0
    assert back.memberships is not record.memberships  # its own containers
