"""The known-bad NCCL releases (hpnet.nccl.known_bad): cited data, checked against the
versions a real log shows (verify) and the node's NCCL (doctor)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from hpnet.doctor.checks.node import check_known_bad
from hpnet.nccl.known_bad import KNOWN_BAD, affecting
from hpnet.ncclog.read import collect_inputs, read_logs
from hpnet.ncclog.report import VerifyReport, analyse
from hpnet.result import Status
from tests.conftest import DATA

LOGS = DATA / "nccl-logs"


def _report(path: Path) -> VerifyReport:
    inputs, notes = collect_inputs([str(path)])
    return analyse(read_logs(inputs, jobs=1, notes=notes))


def _known(report: VerifyReport) -> dict[str, str]:
    return {
        f.id.removeprefix("nccl-known-bug-"): str(f.severity)
        for f in report.findings
        if f.id.startswith("nccl-known-bug-")
    }


def test_every_entry_is_cited_and_fixed_after_its_range() -> None:
    for bug in KNOWN_BAD:
        assert bug.citations, bug.id
        assert all("github.com/NVIDIA/nccl" in c or "nvidia.com" in c or "commit" in c
                   for c in bug.citations), bug.id  # fmt: skip
        assert bug.first <= bug.last, bug.id
        if bug.fixed_in:
            assert tuple(int(p) for p in bug.fixed_in.split(".")) > bug.last, bug.id
        assert bug.workaround, bug.id


def test_the_ranges_end_where_the_sources_say() -> None:
    assert [b.id for b in affecting("2.29.7+cuda12.9")] == ["pxn-ib-multinode-hang"]
    assert [b.id for b in affecting("2.30.4")] == ["pxn-ib-multinode-hang"]
    assert affecting("2.29.3") == ()  # the cuBLASMp note: "2.29.7 and above"
    assert affecting("2.30.7") == ()  # fixed
    assert {b.id for b in affecting("2.26.2")} == {
        "ras-report-during-init-crash",
        "ras-status-memory-corruption",
    }
    assert {b.id for b in affecting("2.27.7")} == {
        "ras-status-memory-corruption",
        "ras-peers-update-segfault",
    }
    assert affecting("2.25.1") == ()
    assert affecting("2.31.2") == ()
    assert affecting(None) == () and affecting("unknown") == ()


def test_a_real_log_of_an_affected_release_names_the_bug_as_a_note() -> None:
    # 2.27.5: the RAS status-query crash (#1762) needs a RAS query no log shows: a note,
    # and the healthy run stays PASS
    report = _report(LOGS / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log")
    assert _known(report) == {"ras-status-memory-corruption": "info"}
    assert report.status == "PASS"
    finding = next(f for f in report.findings if f.id.endswith("ras-status-memory-corruption"))
    assert "2.29.2" in finding.fix and "NCCL_RAS_ENABLE=0" in finding.fix
    assert "issues/1762" in finding.cause
    assert any("NCCL version 2.27.5" in quote for quote in finding.evidence)


def test_a_release_outside_every_range_gets_no_finding() -> None:
    report = _report(LOGS / "roce-9nic-ib-hca-prefix-match-gdrdma-gin-nccl2.29.3.log")
    assert _known(report) == {}


def test_the_pxn_hang_needs_two_hosts_and_ib(tmp_path: Path) -> None:
    # a real single-host IB log with its version lines rewritten to 2.30.4: one host,
    # so the multi-node hang does not apply
    text = (LOGS / "roce-9nic-ib-hca-prefix-match-gdrdma-gin-nccl2.29.3.log").read_text()
    one = tmp_path / "one-host-2.30.4.log"
    one.write_text(text.replace("NCCL version 2.29.3", "NCCL version 2.30.4"))
    assert "pxn-ib-multinode-hang" not in _known(_report(one))
    # a real two-node IB log rewritten to 2.30.4: the hang applies, a warning
    two_text = (LOGS / "roce-single-hca-gid3-two-nodes-nccl2.10.3.log").read_text()
    two = tmp_path / "two-nodes-2.30.4.log"
    two.write_text(two_text.replace("NCCL version 2.10.3", "NCCL version 2.30.4"))
    found = _known(_report(two))
    assert found.get("pxn-ib-multinode-hang") == "warning"
    # the same with NCCL_PXN_DISABLE=1 echoed by NCCL: worked around, a note
    first = two_text.splitlines()[0]
    prefix = first.split(" NCCL INFO ", 1)[0]
    echoed = f"{prefix} NCCL INFO NCCL_PXN_DISABLE set by environment to 1\n"
    three = tmp_path / "two-nodes-2.30.4-pxn-off.log"
    three.write_text(echoed + two.read_text())
    assert _known(_report(three)).get("pxn-ib-multinode-hang") == "info"


def _facts(version: str | None, env: dict[str, str]) -> object:
    from hpnet.doctor.model import Facts

    fields = {f.name for f in dataclasses.fields(Facts)}
    assert {"nccl_version", "variables"} <= fields
    return Facts(
        inventory=None,  # type: ignore[arg-type]
        variables=env,
        variables_source="environment",
        profile=None,
        nccl_version=version,
    )


def test_doctor_warns_of_a_known_bug_of_the_nodes_nccl() -> None:
    result = check_known_bad(_facts("2.30.4", {}))  # type: ignore[arg-type]
    assert result.status == Status.WARN
    assert "NCCL_PXN_DISABLE=1" in (result.fix or "")
    worked = check_known_bad(_facts("2.30.4", {"NCCL_PXN_DISABLE": "1"}))  # type: ignore[arg-type]
    assert worked.status == Status.PASS
    # a bug only a RAS query triggers: noted, not a warning
    noted = check_known_bad(_facts("2.28.9", {}))  # type: ignore[arg-type]
    assert noted.status == Status.PASS and "1762" in " ".join(noted.evidence)
    assert check_known_bad(_facts("2.30.7", {})).status == Status.PASS  # type: ignore[arg-type]
    assert check_known_bad(_facts(None, {})).status == Status.SKIP  # type: ignore[arg-type]
