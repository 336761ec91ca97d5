"""The real-input corpus: what each file's note says a maintainer concludes, against hpnet.

Every input under ``tests/data`` whose ``.source.txt`` has an ``Expected`` block (written
before hpnet was run on the file) is graded key by key: for NCCL logs the verdict
(fatal or not), what NCCL chose (network, NICs), the transports proven inside and between
hosts, GPUDirect RDMA, the environment NCCL echoed, versions, hosts, processes, and
whether the key line is quoted as evidence; for RDMA listings the ports hpnet would select
and the transport; for nccl-tests outputs the op, ranks, rows, checking and failure.

``python -m tests.corpus`` prints the grade table (``tests/data/CORPUS.md`` and
``docs/development.md`` hold it); ``tests/unit/test_corpus.py`` asserts every check.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from collections.abc import Callable
from pathlib import Path

DATA = Path(__file__).parent / "data"


@dataclasses.dataclass(frozen=True)
class Check:
    key: str
    expected: str
    got: str
    ok: bool


def expected(note: Path) -> dict[str, str]:
    """The ``Expected`` block of a note: ``key: value`` lines (continuation lines of a
    value indented deeper are joined)."""
    text = note.read_text()
    if "\nExpected" not in text:
        return {}
    block = text.split("\nExpected", 1)[1].split("\n", 1)[1]
    values: dict[str, str] = {}
    key = None
    for line in block.splitlines():
        found = re.match(r"^\s{2}(\w+):\s?(.*)$", line)
        if found:
            key = found.group(1)
            values[key] = found.group(2).strip()
        elif key and line.strip():
            values[key] += "\n" + line.strip()
        elif not line.strip() and key:
            continue
    return values


def head(value: str) -> str:
    """The machine value: what stands before a parenthesis or `` #`` comment."""
    return re.split(r"\s+\(|\s+#|\s+--", value.split("\n", 1)[0], maxsplit=1)[0].strip()


def items(value: str) -> set[str]:
    """``a, b (c), d`` -> {a, b, d}; ``-``, ``none`` -> empty."""
    value = re.sub(r"\([^()]*\)", "", value.split("\n", 1)[0])
    return {v.strip() for v in value.split(",") if v.strip() and v.strip() not in ("-", "none")}


def inputs() -> list[tuple[Path, Path, dict[str, str]]]:
    """(data file, note, expected) for every graded input."""
    found = []
    for note in sorted(DATA.rglob("*.source.txt")):
        values = expected(note)
        if not values:
            continue
        stem = note.name.removesuffix(".source.txt")
        candidates = [p for p in note.parent.glob(stem + ".*") if p != note and p.is_file()]
        directory = note.parent / stem
        data = candidates[0] if candidates else directory
        found.append((data, note, values))
    return found


# ---------------------------------------------------------------- NCCL logs


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch.isalnum())


def _transports(labels: set[str]) -> set[str]:
    return {t.strip() for t in labels}


def grade_log(path: Path, values: dict[str, str]) -> list[Check]:
    from hpnet.ncclog.read import collect_inputs, read_logs
    from hpnet.ncclog.report import analyse

    found, notes = collect_inputs([str(path)])
    report = analyse(read_logs(found, jobs=1, notes=notes))
    checks = []
    fatal = head(values.get("fatal", "")).lower()
    if fatal in ("yes", "no"):
        ok = report.fatal == (fatal == "yes") and (fatal == "no" or report.status == "FAIL")
        got = f"{'fatal' if report.fatal else 'not fatal'}, {report.status}"
        checks.append(Check("fatal", fatal, got, ok))

    networks = {n for r in report.ranks for n in r.network}
    want = head(values.get("network", "unknown"))
    if want:
        names = {_norm(n) for n in items(want)} - {"unknown"}
        got_names = {_norm(n) for n in networks}
        if not names:
            ok = not got_names
        else:
            ok = bool(got_names) and all(any(g.startswith(n) for g in got_names) for n in names)
        checks.append(Check("network", want, ", ".join(sorted(networks)) or "-", ok))

    want_nics = values.get("nics", "unknown").split("\n", 1)[0]
    if head(want_nics) not in ("unknown", ""):
        listed = {n for r in report.ranks for n in r.nic_list}
        if not listed:  # a CollNet plugin's device, when no network lists its own
            listed = {c.split(" on ", 1)[1] for r in report.ranks for c in r.collnet}
        got = {re.sub(r" \((\w+)\)$", r"/\1", n).split(" ", 1)[0] for n in listed}
        want_set = items(want_nics) if head(want_nics) != "none" else set()
        names_got = {g.split("/", 1)[0] for g in got}
        names_want = {w.split("/", 1)[0] for w in want_set}
        if not all(":" in n for n in names_got):  # a source that names no port
            names_got = {n.split(":", 1)[0] for n in names_got}
            names_want = {n.split(":", 1)[0] for n in names_want}
        linked = any("/" in g for g in got)  # the source names link layers
        links_ok = all(w in got or "/" not in w or not linked for w in want_set)
        checks.append(
            Check(
                "nics",
                want_nics,
                ", ".join(sorted(got)) or "-",
                names_got == names_want and links_ok,
            )
        )

    for key, name in (("inter", "inter_node"), ("intra", "intra_node")):
        value = head(values.get(key, ""))
        if not value:
            continue
        got_labels = set(report.transports[name])
        if value in {"unproven", "none"}:  # no connection line of this kind in the log
            ok = not got_labels
        else:
            ok = _transports(items(value)) == got_labels
        checks.append(Check(key, value, ", ".join(sorted(got_labels)) or "-", ok))

    gdr = head(values.get("gdr", "")).replace("-", " ")
    if gdr:
        got_gdr = {h.gdr for h in report.hosts if h.gdr}
        got_text = ", ".join(sorted(got_gdr)) or "unknown"
        # sockets never do GPUDirect RDMA: "no" there is what hpnet leaves out (n/a)
        rdma = any(
            t.startswith(("NET/", "CollNet")) and not t.startswith("NET/Socket")
            for t in report.transports["inter_node"]
        )
        ok = (gdr == "unknown" and not got_gdr) or got_gdr == {gdr}
        ok = ok or (gdr == "no" and not got_gdr and not rdma)
        checks.append(Check("gdr", gdr, got_text, ok))

    env = values.get("env", "-")
    if head(env) not in ("", "-", "unknown"):
        want_env = {
            e.strip() for e in re.split(r",\s*(?=NCCL_)", env.split("\n", 1)[0]) if "=" in e
        }
        got_env = {e.split(" (", 1)[0] for e in report.environment}
        checks.append(
            Check(
                "env", ", ".join(sorted(want_env)), ", ".join(sorted(got_env)), want_env <= got_env
            )
        )

    versions = values.get("versions", "")
    exact = re.findall(r"\b2\.\d+\.\d+\b", head(versions))
    if exact and not re.search(r"\d-\d|range|or later|-2\.", head(versions)):
        got_versions = set(report.nccl_versions)
        ranges = {r.version_range for r in report.ranks if r.version_range}
        ok = set(exact) <= got_versions or (
            not got_versions and bool(ranges) and all(_within(v, ranges) for v in exact)
        )
        shown = ", ".join(sorted(got_versions)) or "ranges " + "; ".join(sorted(ranges)) or "-"
        checks.append(Check("versions", ", ".join(exact), shown, ok))

    named = [h for h in report.hosts if h.host != "(no host prefix)"]
    for key, count in (
        ("hosts", len(named) or len(report.hosts)),
        ("processes", len(report.ranks)),
    ):
        value = head(values.get(key, ""))
        if value.isdigit():
            checks.append(Check(key, value, str(count), int(value) == count))

    leads = head(values.get("leads", ""))
    if leads:  # the cause the verdict must lead with (issue 24: the earliest cause first)
        errors = [f.id for f in report.findings if f.severity == "error"]
        got_lead = errors[0] if errors else "-"
        checks.append(Check("leads", leads, got_lead, got_lead == leads))

    diag = head(values.get("diag", ""))
    if diag:  # NCCL 2.31+'s own diagnostics: "none", or "3 ok, 1 found"
        statuses = [c.status for d in report.diagnostics for c in d.checks]
        got_diag = (
            f"{statuses.count('ok')} ok, {statuses.count('found')} found"
            if report.diagnostics
            else "none"
        )
        checks.append(Check("diag", diag, got_diag, got_diag == diag))

    want_facts = items(values.get("facts", ""))
    if want_facts:  # facts that explain a number (issue 24 rule 4), each on its lines
        got_facts = {f.id for f in report.facts if f.evidence}
        checks.append(
            Check(
                "facts",
                ", ".join(sorted(want_facts)),
                ", ".join(sorted(got_facts)) or "-",
                want_facts <= got_facts,
            )
        )

    quote = values.get("quote", "")
    found_quote = re.match(r"L(\d+):", quote)
    # a failure line, or the line that names the network, must be quoted as evidence
    if found_quote and re.search(
        r"NCCL WARN|Using (?:internal )?[Nn]etwork|NET/\S+ ?: Using|Bootstrap ?: Using", quote
    ):
        number = int(found_quote.group(1))
        quoted = [e for f in report.findings for e in f.evidence] + [
            e for r in report.ranks for e in r.chose_evidence
        ]
        quoted += [e for f in report.facts for e in f.evidence]
        hit = any(re.match(rf"^.*:{number}: ", e) for e in quoted)
        checks.append(Check("quote", f"L{number}", "quoted" if hit else "not quoted", hit))
    return checks


def _within(version: str, ranges: set[str]) -> bool:
    """Is ``version`` inside every process's release range (``2.17.1-2.18.6``, ``>= 2.24.3``)?"""
    from hpnet.ncclog.releases import parse_range
    from hpnet.ncclog.versions import contains

    wanted = tuple(int(p) for p in version.split("."))
    return all(contains(parse_range(text), wanted) for text in ranges)


# ---------------------------------------------------------------- listings


def _env_from(path: Path) -> tuple[int, dict[str, object], str]:
    """``hpnet env --from PATH --profile auto --format json``: (exit, document, stderr)."""
    import contextlib
    import io
    import json

    from hpnet.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["env", "--from", str(path), "--profile", "auto", "--format", "json"])
    document = json.loads(out.getvalue()) if code == 0 and out.getvalue().strip() else {}
    return code, document, err.getvalue()


def selected_ports(path: Path) -> tuple[int, list[str], str]:
    """(exit, the ports ``hpnet env --from`` puts in NCCL_IB_HCA, what it said)."""
    code, document, said = _env_from(path)
    variables = document.get("variables", {})
    assert isinstance(variables, dict)
    hca = variables.get("NCCL_IB_HCA", {}).get("value") if variables else None
    ports = [p for p in str(hca or "").lstrip("=^").split(",") if p]
    findings = document.get("findings", [])
    said += "\n".join(str(f.get("message")) for f in findings if isinstance(f, dict))  # type: ignore[union-attr]
    return code, ports, said


def _detect_accepts(path: Path) -> tuple[int, str]:
    import contextlib
    import io

    from hpnet.cli.main import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["detect", "--from", str(path)])
    return code, err.getvalue()


def grade_listing(path: Path, values: dict[str, str]) -> list[Check]:
    """``hpnet detect --from`` reads it; ``hpnet env --from`` selects no port the listing
    does not show usable (a subset of the reader's ports, all of them unless hpnet says
    what the listing does not show), and refuses to guess a transport (exit 2,
    listing-incomplete) rather than turn RDMA off."""
    checks = []
    code, said = _detect_accepts(path)
    checks.append(
        Check("read", "accepted", "accepted" if code == 0 else f"refused: {said}", code == 0)
    )
    usable = head(values.get("usable", ""))
    code, got, said = selected_ports(path)
    if code == 2 and "listing-incomplete" not in said:
        return [*checks, Check("usable", usable, f"refused: {said.strip()[:160]}", False)]
    got_text = ", ".join(got) or "none"
    if usable.startswith("unknown") or usable == "none":
        ok = not got
    else:
        want = {u.strip() for u in usable.split(",")}
        lacking = re.search(r"not shown|does not show|cuts off", said)
        ok = set(got) <= want and (set(got) == want or bool(lacking))
    checks.append(Check("usable", usable, got_text, ok))
    return checks


# ---------------------------------------------------------------- nccl-tests


def grade_nccl_tests(path: Path, values: dict[str, str]) -> list[Check]:
    """``hpnet bench import``: the op, ranks, rows, checking, failure, and the verdict."""
    from hpnet.bench.load import load_result
    from hpnet.errors import HpnetError

    rows = head(values.get("rows", ""))
    try:
        report = load_result(str(path))
    except HpnetError as error:
        # a text without a table is an input error (rule 7), never a pass with no rows
        ok = rows in ("0", "")
        return [Check("read", f"rows {rows}", f"input error: {error.code}", ok)]
    runs = report.runs
    checks = []
    op = head(values.get("op", ""))
    got_ops = {r.op for r in runs}
    if op and op not in ("unknown", "several"):
        checks.append(Check("op", op, ", ".join(sorted(got_ops)), got_ops == {op}))
    ranks = head(values.get("ranks", ""))
    derivable = not re.search(r"from the post|file alone", values.get("ranks", ""))
    if ranks.isdigit() and derivable:
        got_ranks = {r.nranks for r in runs}
        shown = ", ".join(str(n) for n in got_ranks)
        checks.append(Check("ranks", ranks, shown, got_ranks == {int(ranks)}))
    if rows.isdigit():
        got_rows = sum(len(r.rows) for r in runs)
        checks.append(Check("rows", rows, str(got_rows), got_rows == int(rows)))
    failed = head(values.get("failed", "")).lower()
    if failed in ("yes", "no"):
        got_failed = any((r.out_of_bounds or 0) > 0 or r.failure for r in runs)
        got = "yes" if got_failed else "no"
        checks.append(Check("failed", failed, got, got_failed == (failed == "yes")))
    checked = head(values.get("checked", "")).lower()
    if checked in ("yes", "no"):
        got_checked = {r.checked for r in runs}
        shown = ", ".join(str(c) for c in got_checked)
        checks.append(Check("checked", checked, shown, got_checked == {checked == "yes"}))
    return checks


# ---------------------------------------------------------------- other artefacts


def grade_artefact(path: Path, values: dict[str, str]) -> list[Check]:
    """``hpnet verify`` on an ncclras report, framework error text or an RCCL log: the
    kinds read, fatal (never a pass), the collective a watchdog names, who lags in a RAS
    mismatch, a contradiction noted, the NCCL error and last warning, RCCL's version."""
    from hpnet.artefacts.judge import merge_artefacts
    from hpnet.artefacts.reading import read_with_artefacts
    from hpnet.ncclog.read import collect_inputs
    from hpnet.ncclog.report import analyse

    found, notes = collect_inputs([str(path)])
    log, facts = read_with_artefacts(found, jobs=1, notes=notes)
    report = merge_artefacts(analyse(log), facts)
    checks = []
    kinds = {k for a in report.artefacts for k in a.kinds}
    want = items(values.get("artefacts", ""))
    if want:
        checks.append(
            Check("artefacts", ", ".join(sorted(want)), ", ".join(sorted(kinds)), want == kinds)
        )
    fatal = head(values.get("fatal", "")).lower()
    if fatal in ("yes", "no"):
        ok = report.fatal == (fatal == "yes") and (fatal == "no" or report.status == "FAIL")
        checks.append(Check("fatal", fatal, f"{report.fatal}, {report.status}", ok))
    status = head(values.get("status", ""))
    if status:
        checks.append(Check("status", status, report.status, report.status == status))
    collective = head(values.get("collective", ""))
    if collective:
        op, seq, timeout = collective.split()[:3]
        got = [c for a in report.artefacts for c in a.collectives]
        ok = any(c.startswith(f"{op} SeqNum {seq} timeout {timeout} ms") for c in got)
        checks.append(Check("collective", collective, "; ".join(got) or "-", ok))
    lagging = head(values.get("lagging", ""))
    if lagging:
        op, launched = lagging.split()[:2]
        got = [s for a in report.artefacts for s in a.lagging]
        ok = any(f"lag at {op} operation {launched};" in s for s in got)
        checks.append(Check("lagging", lagging, "; ".join(got) or "-", ok))
    contradiction = head(values.get("contradiction", "")).lower()
    if contradiction in ("yes", "no"):
        got_c = any(f.id == "ras-ok-beside-timeout" for f in report.findings)
        checks.append(
            Check(
                "contradiction",
                contradiction,
                "yes" if got_c else "no",
                got_c == (contradiction == "yes"),
            )
        )
    error = head(values.get("nccl_error", ""))
    titles = " | ".join(f.title for f in report.findings)
    if error:
        checks.append(Check("nccl_error", error, titles[:200], error in titles))
    call = head(values.get("call", ""))
    if call:
        checks.append(Check("call", call, titles[:200], f"{call} failed" in titles))
    last = values.get("last_error", "").split("\n", 1)[0].strip()
    if last and last != "none":
        checks.append(Check("last_error", last, titles[:200], last in titles))
    rccl = head(values.get("rccl", ""))
    if rccl:
        got_r = {a.rccl_version for a in report.artefacts if a.rccl_version}
        want_r = set() if rccl == "none" else {rccl}
        checks.append(Check("rccl", rccl, ", ".join(sorted(got_r)) or "none", got_r == want_r))
    return checks


GRADERS: dict[str, Callable[[Path, dict[str, str]], list[Check]]] = {
    "artefact": grade_artefact,
    "nccl-log": grade_log,
    "nccl-tests": grade_nccl_tests,
}


def grade(path: Path, values: dict[str, str]) -> list[Check]:
    kind = head(values.get("kind", ""))
    grader = GRADERS.get(kind, grade_listing)
    try:
        checks = grader(path, values)
    except Exception as error:  # noqa: BLE001 - a crash is a failed check, with its text
        checks = [Check("crash", "no crash", f"{type(error).__name__}: {error}", False)]
    # what hpnet said names the input by its path: the same table in every checkout
    where = str(DATA.parent.parent) + "/"
    return [dataclasses.replace(c, got=c.got.replace(where, "")) for c in checks]


def table() -> str:
    lines = [
        "| input | kind | checks | failed checks |",
        "|---|---|---|---|",
    ]
    total = passed = 0
    for path, _note, values in inputs():
        checks = grade(path, values)
        bad = [c for c in checks if not c.ok]
        total += len(checks)
        passed += len(checks) - len(bad)
        detail = "; ".join(f"{c.key}: want {c.expected!r}, got {c.got!r}" for c in bad) or "-"
        lines.append(
            f"| {path.relative_to(DATA)} | {head(values.get('kind', ''))} | "
            f"{len(checks) - len(bad)}/{len(checks)} | {detail} |"
        )
    lines.append("")
    lines.append(f"{passed} of {total} checks agree")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(table())
