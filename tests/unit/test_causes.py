"""The causal model (hpnet.ncclog.causes): every WARN call site NCCL has is mapped to a
subsystem, and findings are ordered cause first, on real lines."""

from __future__ import annotations

from hpnet.ncclog.causes import SUBSYSTEMS, subsystem_of, warn_files
from hpnet.ncclog.formats import load_table
from hpnet.ncclog.precedence import explains, order_findings
from hpnet.result import Finding, Severity


def test_every_warn_site_of_every_release_has_a_subsystem() -> None:
    files = {
        str(site).rsplit(":", 1)[0]
        for entry in load_table().formats
        if entry["level"] == "WARN" and not entry.get("plugin")
        for site in (entry.get("sites") or {})  # type: ignore[union-attr]
    }
    missing = sorted(f for f in files if subsystem_of(f"WARN {f}:1 x") is None)
    assert not missing, missing


def test_subsystem_ids_are_unique_and_kebab_case() -> None:
    ids = [s.id for s in SUBSYSTEMS]
    assert len(ids) == len(set(ids))
    assert all(i == i.lower() and " " not in i for i in ids)


def test_location_names_what_broke_on_real_lines() -> None:
    # NVIDIA/nccl#1788, #1948 and pie-project/pie#500, as hpnet reads them
    assert subsystem_of("WARN transport/nvls.cc:254 Cuda failure 401 'x'").id == "nvls-setup-failed"  # type: ignore[union-attr]
    assert subsystem_of("WARN transport/p2p.cc:275 Cuda failure 101 'x'").id == "p2p-setup-failed"  # type: ignore[union-attr]
    # a message pasted without its location: the format table's sites name the file
    text = "Failed to find reverse path from remNode 0/41000 nlinks 2 to node 0/61000"
    assert warn_files(text) == (frozenset({"graph/paths.cc"}), "fatal")
    assert subsystem_of(text).id == "topology-failed"  # type: ignore[union-attr]


def _finding(id: str, line: int, *, severity: Severity = Severity.ERROR, **kw: bool) -> Finding:
    return Finding(id=id, severity=severity, title=id, evidence=(f"a.log:{line}: x",), **kw)


def test_an_async_event_leads_the_completion_errors_after_it() -> None:
    assert explains("ib-async-event", "completion-error")
    ordered = order_findings(
        [
            _finding("completion-error", 7, fatal=True),
            _finding("ib-async-event", 1, severity=Severity.WARNING),
        ],
        ["a.log"],
    )
    assert [f.id for f in ordered] == ["ib-async-event", "completion-error"]
    assert ordered[0].fatal and ordered[0].severity == "error"


def test_a_later_event_explains_nothing() -> None:
    ordered = order_findings(
        [
            _finding("completion-error", 1, fatal=True),
            _finding("ib-async-event", 7, severity=Severity.WARNING),
        ],
        ["a.log"],
    )
    assert [f.id for f in ordered] == ["completion-error", "ib-async-event"]
    assert ordered[1].severity == "warning"


def test_a_watchdog_timeout_leads_the_socket_trail_after_it() -> None:
    ordered = order_findings(
        [
            _finding("error-trail", 5, fatal=True),
            _finding("collective-timeout", 1, fatal=True, consequence=True),
        ],
        ["a.log"],
    )
    assert [f.id for f in ordered] == ["collective-timeout", "error-trail"]
