"""One result vocabulary (issue 16): one Finding, one Problem, one Expectation, in
:mod:`hpnet.result`, their enums JSON strings, and both users of Expectation taking it."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from hpnet.bench.gate import evaluate
from hpnet.bench.model import BenchReport, BenchRun, Measurement, Row
from hpnet.jsonout import dumps, to_data
from hpnet.ncclog.expectation import check_expectation, parse_expectation
from hpnet.result import Expectation, Finding, Problem, Severity, Status, Verdict

SRC = Path(__file__).parents[2] / "src" / "hpnet"


def _class_definitions() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                found.setdefault(node.name, []).append(f"{path.relative_to(SRC)}:{node.lineno}")
    return found


@pytest.mark.parametrize("name", ["Finding", "Problem", "Expectation"])
def test_each_result_class_is_defined_once(name: str) -> None:
    assert _class_definitions().get(name) == [f"result.py:{_line_of(name)}"]


def _line_of(name: str) -> int:
    tree = ast.parse((SRC / "result.py").read_text())
    return next(n.lineno for n in tree.body if isinstance(n, ast.ClassDef) and n.name == name)


def test_the_enums_are_their_values_in_json_and_text() -> None:
    finding = Finding(id="x", severity=Severity.WARNING, title="t")
    data = json.loads(dumps({"f": finding, "s": Status.SKIP, "v": Verdict.NOT_READY}))
    assert data["f"]["severity"] == "warning"
    assert data["s"] == "SKIP" and data["v"] == "NOT READY"
    assert to_data([Severity.ERROR, Status.PASS]) == ["error", "PASS"]
    assert json.dumps([Severity.INFO, Status.FAIL]) == '["info", "FAIL"]'
    assert f"{Severity.ERROR}|{Status.WARN:>5}|{Verdict.READY}" == "error| WARN|READY"
    assert str(Verdict.NOT_READY) == "NOT READY"
    assert Status.PASS == "PASS" and Severity("info") is Severity.INFO


def test_problem_carries_both_shapes() -> None:
    gathered = Problem(code="sysfs-unreadable", what="cannot read", where="/sys/x")
    judged = Problem(code="doctor:memlock", what="memlock too low", impact=2, fix="ulimit -l")
    assert gathered.impact is None and gathered.evidence == ()
    assert to_data(judged) == {
        "code": "doctor:memlock", "what": "memlock too low", "where": "", "impact": 2,
        "evidence": [], "fix": "ulimit -l", "fails": False,
    }  # fmt: skip


def _report(busbw_gbps: float) -> BenchReport:
    row = Row(
        size_bytes=1 << 20, count=1 << 18, dtype="float", redop="sum", root=-1,
        out_of_place=Measurement(time_us=10.0, algbw_gbps=busbw_gbps, busbw_gbps=busbw_gbps,
                                 wrong=0),
        in_place=None,
    )  # fmt: skip
    return BenchReport(
        source="test",
        runs=(BenchRun(op="all_reduce", nranks=2, rows=(row,), avg_busbw_gbps=busbw_gbps),),
    )


def test_verify_and_the_bench_gate_take_the_one_expectation() -> None:
    parsed = parse_expectation("net=ib,gdr")
    assert type(parsed) is Expectation and (parsed.net, parsed.gdr) == ("ib", True)
    [no_proof] = check_expectation(parsed, ())
    assert no_proof.expectation == "net=ib,gdr" and not no_proof.met

    both = Expectation(net="ib", busbw_gbps=100.0, op="all_reduce", source="--min-busbw 100")
    assert both.describe() == "net=ib,all_reduce busbw>=100 GB/s"
    [passed] = evaluate(_report(150.0), both)
    [failed] = evaluate(_report(50.0), both)
    assert (passed.status, failed.status) == (Status.PASS, Status.FAIL)
    assert json.loads(dumps(failed))["status"] == "FAIL"
    with pytest.raises(ValueError, match="no bus bandwidth"):
        evaluate(_report(50.0), parsed)
