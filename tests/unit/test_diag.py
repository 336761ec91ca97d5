"""NCCL's own diagnostics (2.31+ ``NCCL DIAG`` lines): every format of the table's
``binaries`` section is read, and the real 2.31.2 log's results are reported per
communicator, as a warning, never as a failure."""

from __future__ import annotations

import re

import pytest

from hpnet.cli.main import main
from hpnet.ncclog.diag import read_diag, summarize_diag
from hpnet.ncclog.formats import load_table
from hpnet.ncclog.model import LogLine
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import analyse
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"
DIAG_LOG = LOGS / "h200-fake-hosts-one-gpu-diagnostics-ras-hostid-differs-socket-nccl2.31.2.log"
PLAIN_LOG = LOGS / "h200-fake-hosts-one-gpu-socket-no-diagnostics-nccl2.31.2.log"
FAILED_LOGS = [
    LOGS / "h200-socket-ifname-nosuch0-no-interface-diagnostics-not-reached-nccl2.31.2.log",
    LOGS / "h200-nccl-net-ib-forced-no-device-diagnostics-not-reached-nccl2.31.2.log",
]
COMM = "0xcd1768909de95a8d"

#: the [INFO] messages that describe and find nothing (written out here, not taken from
#: the module's rule, so that the two check each other)
NOTES = (
    "NCCL environment: NCCL_IB_HCA=",
    "NCCL_* env var(s) differ across ranks",
    "bytes of NCCL_* env vars; comparison may be partial",
    "unavailable via NVML across",
    "CUDA driver version: unavailable across",
    "net bw: mode=",
    "net bw: multiple net devices per rank detected",
    "net bw: net devices are shared across ranks",
    "p2p: temporarily enabled context-wide CUDA peer access",
)
#: the areas of NCCL's checks (docs/nccl-log-formats.md, "NCCL DIAG lines")
AREAS = {
    "p2p", "net bw", "GPU inventory", "CUDA driver version", "ECC", "NVLink",
    "NCCL environment", "transport detect", "RAS diagnostics skipped",
}  # fmt: skip


def _fill(fmt: str) -> str:
    """An instance of a printf format, with values the reader has to find."""

    def value(found: re.Match[str]) -> str:
        conv, before, after = found.group(0), fmt[: found.start()], fmt[found.end() :]
        if conv == "%%":
            return "%"
        if conv.endswith("s"):
            if before.endswith("rank(s) "):
                return "{0,2-3}"
            if after.startswith("="):
                return "NCCL_IB_HCA"
            return "mlx5_0"
        if conv.endswith("x"):
            return "00c0ffee" if before.endswith("0x") else "00000000deadbeef"
        if conv.endswith("f"):
            return "12.5"
        return "3"

    return re.sub(r"%%|%[-0-9.]*(?:ll|l)?[sdufx]", value, fmt)


def _instances() -> list[tuple[str, str, str]]:
    """(release, format, line) for every DIAG format; a message passed through ``%s``
    (``diag_texts``) gets the tag its words call for."""
    found = []
    for release, data in load_table().binaries.items():
        for fmt in data["diag"]:  # type: ignore[union-attr]
            body = fmt.removeprefix("%s:%d NCCL DIAG ").rstrip("\n")
            if body == "%s":  # the carrier of diag_texts, below
                continue
            if body.startswith("%sp2p:"):
                tag = "[INFO] " if "only" in body else "[OK]   "
                body = tag + body.removeprefix("%s")
            for tag in ("OK", "INFO") if body.startswith("[%s]") else ("",):
                line = "vm:628 NCCL DIAG " + _fill(body.replace("[%s]", f"[{tag}]", 1))
                found.append((release, fmt, line))
        for text in data["diag_texts"]:  # type: ignore[union-attr]
            passed = re.search(r"consistent|no uncorrected|all active", text)
            tag = "[OK]   " if passed else "[INFO] "
            found.append((release, text, "vm:628 NCCL DIAG " + tag + _fill(text)))
    return found


@pytest.mark.parametrize(("release", "fmt", "line"), _instances())
def test_every_diag_format_of_the_table_is_read(release: str, fmt: str, line: str) -> None:
    read = read_diag(line)
    assert read is not None, line
    assert read.process == "vm:628"
    message = line.split(" NCCL DIAG ", 1)[1]
    if message.startswith("[OK]"):
        want = "ok"
    elif message.startswith("[INFO]"):
        note = any(n in message for n in NOTES) or re.search(r"returned 0$|Gbit/s min", message)
        want = "note" if note else "found"
    else:  # headers, summaries, "INFO RAS diagnostics skipped"
        want = "note" if message.startswith("INFO ") else "summary"
    assert read.status == want, (release, fmt)
    if want != "summary":
        assert read.area in AREAS, (release, fmt, read.area)
    if "in comm 0x%lx" in fmt:
        assert read.comm == "0x00c0ffee"
    if "rank(s) %s" in fmt:
        assert {0, 2, 3} <= set(read.ranks)
    elif re.search(r"\brank[ =]%d", fmt):
        assert 3 in read.ranks


def test_the_table_has_diag_formats_of_both_releases() -> None:
    cases = _instances()
    assert {r for r, _, _ in cases} == {"2.31.2", "2.32.3"}
    assert len(cases) > 100


def test_lines_that_are_not_diag_lines() -> None:
    assert (
        read_diag("vm:628:628 [0] NCCL INFO NCCL_RUN_DIAGNOSTICS set by environment to 1.") is None
    )
    assert read_diag("print('NCCL DIAG')") is None


def test_a_launcher_tag_before_a_diag_line() -> None:
    read = read_diag("[rank0]:vm:628 NCCL DIAG [OK]   ECC: no uncorrected volatile errors")
    assert read is not None and read.launcher_rank == 0 and read.process == "vm:628"


def _report(path: object) -> object:
    found, notes = collect_inputs([str(path)])
    return analyse(read_logs(found, jobs=1, notes=notes))


def test_the_real_diag_lines_per_communicator() -> None:
    report = _report(DIAG_LOG)
    (entry,) = report.diagnostics  # type: ignore[attr-defined]
    assert entry.comm == COMM and entry.num_ranks == 2 and entry.processes == ("vm:628",)
    ok = [c.area for c in entry.checks if c.status == "ok"]
    assert ok == ["GPU inventory", "CUDA driver version", "ECC"]
    (found,) = [c for c in entry.checks if c.status == "found"]
    assert found.message.endswith("for NCCL_HOSTID")
    assert found.evidence.endswith(
        ":93: vm:628 NCCL DIAG [INFO] NCCL environment: mismatch across 2 ranks in comm "
        f"{COMM} for NCCL_HOSTID"
    )
    assert entry.env_differs == ("NCCL_HOSTID: host0 on rank(s) 0; host1 on rank(s) 1",)
    # the summaries name no communicator: they belong to the one vm:628's lines name
    assert entry.completed == (
        "NCCL diagnostics completed in 0.2 ms across 2 ranks",
        "RAS diagnostics completed in 3.2 ms across 2 ranks",
    )


def test_a_diag_problem_is_a_warning_never_fatal() -> None:
    report = _report(DIAG_LOG)
    (finding,) = [f for f in report.findings if f.id.startswith("diag-")]  # type: ignore[attr-defined]
    assert finding.id == "diag-env-differs" and finding.severity == "warning"
    assert not finding.fatal and not report.fatal  # type: ignore[attr-defined]
    assert "NCCL_HOSTID" in finding.title and COMM in finding.title
    assert finding.conclusions == ("NCCL_HOSTID is host0 on rank(s) 0; host1 on rank(s) 1",)
    # every quote is a line of the input, at its number
    lines = DIAG_LOG.read_text().splitlines()
    for quote in finding.evidence:
        number, text = re.match(r".*?:(\d+): (.*)$", quote).groups()  # type: ignore[union-attr]
        assert lines[int(number) - 1] == text


@pytest.mark.parametrize("path", [PLAIN_LOG, *FAILED_LOGS], ids=lambda p: p.name)
def test_no_diag_lines_no_diagnostics(path: object) -> None:
    """Diagnostics not asked for, or communicator init failed before they ran."""
    report = _report(path)
    assert report.diagnostics == ()  # type: ignore[attr-defined]
    assert not any(f.id.startswith("diag-") for f in report.findings)  # type: ignore[attr-defined]


def test_lines_naming_no_comm_of_a_process_with_two_comms_stay_apart() -> None:
    lines = [
        LogLine(source="x", line_number=n, text=t)
        for n, t in enumerate(
            [
                "a:1 NCCL DIAG [OK]   ECC: no uncorrected volatile errors across 2 ranks in comm 0x1",  # noqa: E501
                "a:1 NCCL DIAG [OK]   ECC: no uncorrected volatile errors across 4 ranks in comm 0x2",  # noqa: E501
                "a:1 NCCL DIAG [INFO] p2p: setup failed on rank 1 result=2",
            ],
            start=1,
        )
    ]
    entries = {e.comm: e for e in summarize_diag(lines)}
    assert set(entries) == {"0x1", "0x2", None}
    assert [c.ranks for c in entries[None].checks] == [(1,)]


def test_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(DIAG_LOG)]) in (0, 1)
    out = capsys.readouterr().out
    assert f"comm {COMM}, 2 ranks (printed by vm:628): 3 ok, 1 found" in out
    assert "differs: NCCL_HOSTID: host0 on rank(s) 0; host1 on rank(s) 1" in out
    assert "[diag-env-differs]" in out
