"""One verdict per node (issue 25): env, doctor and check agree on every recorded node.

``hpnet env``, ``hpnet doctor`` and ``hpnet check`` give one answer for each
node-dependent decision (the transport, NCCL_IB_DISABLE, NCCL_IB_HCA,
NCCL_IB_GID_INDEX, NCCL_SOCKET_IFNAME), and check's problems are the doctor's.

Every recorded node (``tests/data/sysfs/*.tree``, ``tests/data/listings/*.txt``) is
run through the commands, in-process (:func:`hpnet.cli.main.main`), for a few profiles
(auto and those of the node's transport) and with planted faults in the environment
(:data:`FAULTS`). Three things are asserted per case:

1. **One judgement.** ``env --json`` and ``doctor --json`` carry the node's decisions
   (``decisions``: status, answer, what is unknown); they are equal. An env that
   refuses the input (exit 2) is matched by a doctor whose transport is unknown.
2. **Each command says its judgement.** env exports no value for a decided variable
   other than the answer (a value the profile set or left unset), and every flagged
   decision is among its findings; each of the doctor's owner checks has the status of
   its decision, and no fix of any check sets a decided variable to another value than
   the answer (normalised against the node: ``=mlx5_0:1`` and ``mlx5_0`` on a node with
   one mlx5_0 port are one answer).
3. **check runs on that judgement and lists the doctor's problems** (recorded trees):
   ``check --dry-run`` plans the transport env decided with env's values, and check's
   problems are the doctor's (same ids, statuses and fixes, FAIL before WARN, then by
   impact), nothing dropped or added.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
import shlex
from collections.abc import Iterator, Mapping, Sequence
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from hpnet.cli.main import main
from hpnet.node.snapshot import materialize
from tests.conftest import DATA

JSON = dict[str, Any]

#: the planted faults: environment variables set for the run
FAULTS: Mapping[str, Mapping[str, str]] = {
    "none": {},
    "gid-wrong": {"NCCL_IB_GID_INDEX": "4"},
    "hca-typo": {"NCCL_IB_HCAA": "mlx5_0"},
    "ifname-absent": {"NCCL_SOCKET_IFNAME": "nosuch0"},
    "ib-disabled": {"NCCL_IB_DISABLE": "1"},
    "hca-absent-device": {"NCCL_IB_HCA": "=mlx4_0:1,mlx5_0:1"},
    "issue-combo": {
        "NCCL_IB_DISABLE": "1",
        "NCCL_SOCKET_IFNAME": "nosuch0",
        "NCCL_IB_HCAA": "mlx5_0",
    },
}
#: the profiles judged besides auto, by the transport env --profile auto resolves
PROFILES: Mapping[str, tuple[str, ...]] = {
    "ib": ("ib", "scnet", "modelarts"),
    "roce": ("roce", "pai-lingjun", "scnet"),
    "erdma": ("erdma", "pai-dlc-erdma", "ecs-erdma"),
    "socket": ("socket",),
}
#: the decisions every command carries, and the doctor check that renders each
OWNERS = {
    "transport_decision": "vars.transport",
    "ib_disabled": "vars.ib_disabled",
    "hca": "vars.hca",
    "gid": "vars.gid",
    "ifname": "vars.ifname",
}
#: a decision's status as its doctor check shows it (an unknown interface: SKIP)
STATUS = {"ok": "PASS", "warn": "WARN", "fail": "FAIL", "unknown": "WARN", "n/a": "SKIP"}
RDMA_KINDS = ("ib", "roce", "erdma")


# ---------------------------------------------------------------- running the commands


@contextlib.contextmanager
def _environment(fault: Mapping[str, str]) -> Iterator[None]:
    """os.environ without the caller's NCCL_* and with the fault, restored after."""
    saved = dict(os.environ)
    try:
        for name in [n for n in os.environ if n.startswith("NCCL_")]:
            del os.environ[name]
        os.environ.update(fault)
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _run(args: Sequence[str], fault: Mapping[str, str]) -> tuple[int, str, str]:
    """``hpnet ARGS`` in-process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with _environment(fault), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def _json(args: Sequence[str], fault: Mapping[str, str]) -> JSON:
    """The command's JSON, or ``{"error": <code>}`` when it refused (exit 2)."""
    code, out, err = _run(args, fault)
    if code == 2 or not out.strip():
        found = re.match(r"error\[([\w-]+)\]", err)
        return {"error": found.group(1) if found else err.strip()[:80]}
    data: JSON = json.loads(out)
    return data


@cache
def _tree_root(name: str, base: str) -> str:
    """``tests/data/sysfs/<name>.tree`` materialized under ``base``, once."""
    root = Path(base) / name
    root.mkdir(parents=True, exist_ok=True)
    source = DATA / "sysfs" / f"{name}.tree"
    materialize(source.read_text(), root, source=str(source))
    return str(root)


@dataclasses.dataclass(frozen=True)
class Case:
    kind: str  # tree, listing
    name: str  # the file's stem
    profile: str
    fault: str

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.name}|{self.profile}|{self.fault}"


def _node_args(case: Case, base: str) -> list[str]:
    if case.kind == "tree":
        return ["--sysfs-root", _tree_root(case.name, base)]
    return ["--from", str(DATA / "listings" / f"{case.name}.txt")]


@cache
def _detect(kind: str, name: str, base: str) -> JSON:
    """The node as hpnet detect reads it: what answers are normalised against."""
    return _json(["detect", *_node_args(Case(kind, name, "auto", "none"), base), "--json"], {})


@cache
def _outputs(case: Case, base: str) -> Mapping[str, JSON]:
    """env, doctor, the check's dry-run plan and the check's report for one case."""
    fault = FAULTS[case.fault]
    node = _node_args(case, base)
    out = {
        "env": _json(["env", *node, "--profile", case.profile, "--json"], fault),
        "doctor": _json(["doctor", *node, "--profile", case.profile, "--json"], fault),
    }
    if case.kind == "tree":
        out["plan"] = _json(
            ["check", "--dry-run", *node, "--profile", case.profile, "--json"], fault
        )
        out["check"] = _check_report(node[1], case.profile, fault)
    return out


def _check_report(root: str, profile: str, fault: Mapping[str, str]) -> JSON:
    """What ``hpnet check --json`` prints, its stages not run (no torch needed)."""
    from hpnet.check import run as check_run
    from hpnet.check.execute import Launched
    from hpnet.check.report import report_data
    from hpnet.errors import HpnetError

    def launcher(stage: object, env: object, directory: object) -> Launched:
        return Launched(bench=None, error="not run by this test")

    options = check_run.CheckOptions(profile=profile, sysfs_root=root, device="cpu")
    try:
        with _environment(fault):
            report = check_run.run_check(options, dict(os.environ), launcher=launcher)
    except HpnetError as exc:
        return {"error": exc.code}
    data: JSON = json.loads(json.dumps(report_data(report), default=str))
    return data


# ---------------------------------------------------------------- the node


@dataclasses.dataclass(frozen=True)
class Port:
    name: str  # dev:port
    device: str
    number: int
    kind: str  # ib, roce, erdma, efa, unknown
    nccl_usable: bool  # NCCL's IB transport opens it (ACTIVE, IB or Ethernet, openable)


@dataclasses.dataclass(frozen=True)
class Node:
    ports: tuple[Port, ...]
    interfaces: tuple[str, ...] | None  # up; None: not known from the source


def _port_kind(driver: str | None, link_layer: str | None) -> str:
    """ib, roce, erdma, efa or unknown: the driver first (an EFA port may print
    "InfiniBand", an rxe or erdma port no link layer), then the link layer."""
    by_driver = {"erdma": "erdma", "efa": "efa", "rxe": "roce"}
    if driver in by_driver:
        return by_driver[driver]
    return {"InfiniBand": "ib", "Ethernet": "roce"}.get(link_layer or "", "unknown")


def _node(detected: JSON) -> Node:
    """Ports and up interfaces from ``hpnet detect --json``."""
    ports = []
    for dev in detected.get("rdma_devices", []):
        for port in dev["ports"]:
            kind = _port_kind(dev.get("driver"), port.get("link_layer"))
            usable = (
                port.get("state") == "ACTIVE"
                and not dev["name"].startswith("(")  # a name the listing cut off
                and dev.get("usable_here") is not False
                and kind in RDMA_KINDS  # net_ib init.cc skips other link layers (EFA)
            )
            ports.append(
                Port(f"{dev['name']}:{port['number']}", dev["name"], port["number"], kind, usable)
            )
    netdevs = detected.get("netdevs", [])
    up = tuple(
        n["name"]
        for n in netdevs
        if n.get("state") in ("up", "unknown") and n.get("kind") != "loopback"
    )
    return Node(tuple(ports), up if netdevs else None)


def _match_list(spec: str) -> tuple[bool, bool, list[tuple[str, int | None]]]:
    """NCCL's list syntax (``^`` excludes, ``=`` exact, else prefix; ``name[:port]``)."""
    exclude = spec.startswith("^")
    spec = spec[1:] if exclude else spec
    exact = spec.startswith("=")
    spec = spec[1:] if exact else spec
    items = []
    for item in filter(None, spec.split(",")):
        name, _, port = item.partition(":")
        items.append((name, int(port) if port.isdigit() else None))
    return exclude, exact, items


def hca_ports(value: str | None, ib_disabled: str | None, node: Node) -> str:
    """The ports NCCL opens for NCCL_IB_HCA=value (unset: every usable port)."""
    if (ib_disabled or "0").strip() == "1":
        return "none"
    usable = [p for p in node.ports if p.nccl_usable]
    if value:
        exclude, exact, items = _match_list(value)

        def named(p: Port) -> bool:
            return any(
                (p.device == n if exact else p.device.startswith(n))
                and (num is None or num == p.number)
                for n, num in items
            )

        usable = [p for p in usable if named(p) != exclude]
    return ",".join(sorted(p.name for p in usable)) or "none"


def interfaces(value: str | None, node: Node) -> str:
    """The up interfaces NCCL_SOCKET_IFNAME=value matches."""
    if value is None:
        return "nccl-picks"
    if node.interfaces is None:
        return "unknown"
    exclude, exact, items = _match_list(value)
    names = [n for n, _ in items]
    chosen = [
        i
        for i in node.interfaces
        if any(i == n if exact else i.startswith(n) for n in names) != exclude
    ]
    return ",".join(sorted(chosen)) or "none"


def gid_value(value: str | None) -> str:
    """``0x3`` -> ``3``; unset -> ``auto``."""
    if value is None:
        return "auto"
    try:
        return str(int(value, 0))
    except ValueError:
        return value


# ---------------------------------------------------------------- judgements


def _core(decision: JSON | None) -> str:
    """What must agree: status and answer (``unknown`` when no answer is known)."""
    if decision is None:
        return "none"
    answer = decision["answer"] if decision["answer_known"] else "unknown"
    return f"{decision['status']}:{answer}"


def one_judgement(env: JSON, doctor: JSON) -> list[str]:
    """env's and the doctor's decisions, where they differ."""
    if "error" in doctor:
        return [f"doctor refused: {doctor['error']}"]
    ours = doctor["decisions"]
    if "error" in env:
        said = ours["transport_decision"]
        if env["error"] == "listing-incomplete" and ours["transport"] == "unknown":
            return []
        return [
            f"env refused ({env['error']}), doctor: transport {ours['transport']} {_core(said)}"
        ]
    theirs = env["decisions"]
    differ = []
    for key in ("transport", *OWNERS):
        a = theirs.get(key) if key == "transport" else _core(theirs.get(key))
        b = ours.get(key) if key == "transport" else _core(ours.get(key))
        if a != b:
            differ.append(f"{key}: env={a}  doctor={b}")
    return differ


def _fix_lines(fix: str | None) -> list[tuple[str, str | None]]:
    """``export A=v`` / ``unset A`` lines of a fix as ``(name, value or None)``."""
    changes: list[tuple[str, str | None]] = []
    for line in (fix or "").splitlines():
        try:
            words = shlex.split(line)
        except ValueError:
            continue
        if len(words) == 2 and words[0] == "export" and "=" in words[1]:
            name, _, value = words[1].partition("=")
            changes.append((name, value))
        elif len(words) >= 2 and words[0] == "unset":
            changes.extend((name, None) for name in words[1:])
    return changes


def _same(name: str, a: str | None, b: str | None, node: Node, transport: str) -> bool:
    """Two values of a decided variable that NCCL reads alike on this node."""
    if name == "NCCL_IB_HCA":
        return hca_ports(a, None, node) == hca_ports(b, None, node)
    if name == "NCCL_IB_HCA (renamed)":  # a typo's value carried over: the user's choice
        chosen, answer = hca_ports(a, None, node), hca_ports(b, None, node)
        return chosen != "none" and set(chosen.split(",")) <= set(answer.split(","))
    if name == "NCCL_IB_GID_INDEX":
        return gid_value(a) == gid_value(b)
    if name == "NCCL_SOCKET_IFNAME":
        return a == b or interfaces(a, node) == interfaces(b, node) != "unknown"
    if name == "NCCL_IB_DISABLE":
        off = {None, "0"} if transport in RDMA_KINDS else {"1"}
        return (
            (a or None) == (b or None)
            or (a in off and b in off)
            or (transport == "socket" and {a, b} <= {None, "0", "1"})
        )
    return a == b


def env_says(env: JSON, node: Node) -> list[str]:
    """env exports the answers it owns and names every flagged decision."""
    if "error" in env:
        return []
    wrong = []
    messages = [f["message"] for f in env["findings"]]
    for key, decision in env["decisions"].items():
        if key == "transport" or decision is None:
            continue
        name = decision["variable"]
        exported = env["variables"].get(name, {}).get("value")
        if (
            key != "transport_decision"
            and decision["answer_known"]
            and decision["origin"] in (None, "profile")
            and name in env["variables"]
            and not _same(name, exported, decision["answer"], node, env["transport"])
        ):
            wrong.append(f"env exports {name}={exported!r}, its answer is {decision['answer']!r}")
        if decision["status"] in ("warn", "fail") and not any(
            decision["summary"] in m for m in messages
        ):
            wrong.append(f"env does not say: {decision['summary']}")
    return wrong


def doctor_says(doctor: JSON, node: Node) -> list[str]:
    """Each owner check has its decision's status; no fix contradicts an answer."""
    if "error" in doctor:
        return []
    decisions, checks = doctor["decisions"], {c["id"]: c for c in doctor["checks"]}
    wrong = []
    for key, check_id in OWNERS.items():
        decision = decisions.get(key)
        check = checks.get(check_id)
        if decision is None or check is None:
            continue
        want = STATUS[decision["status"]]
        if key == "ifname" and decision["status"] == "unknown":
            want = "SKIP"
        if check["status"] != want:
            wrong.append(f"{check_id} {check['status']}, its decision is {decision['status']}")
    answers = {
        d["variable"]: d
        for k, d in decisions.items()
        if k not in ("transport", "transport_decision") and d is not None and d["answer_known"]
    }
    for check in doctor["checks"]:
        if check["status"] not in ("WARN", "FAIL"):
            continue
        lines = _fix_lines(check["fix"])
        renames = any(value is None for _, value in lines) and any(v for _, v in lines)
        for name, value in lines:
            decided = answers.get(name)
            judged_as = f"{name} (renamed)" if renames and name == "NCCL_IB_HCA" else name
            if decided is not None and not _same(
                judged_as, value, decided["answer"], node, decisions["transport"]
            ):
                wrong.append(
                    f"{check['id']}'s fix sets {name}={value!r}, the answer is "
                    f"{decided['answer']!r}"
                )
    return wrong


def plan_says(plan: JSON | None, env: JSON) -> list[str]:
    """``check --dry-run`` runs on the transport env decided, with env's answers."""
    if plan is None or "error" in env:
        return []
    if "error" in plan:
        return [f"check --dry-run refused ({plan['error']}), env did not"]
    wrong = []
    if plan["transport"] != env["decisions"]["transport"]:
        wrong.append(f"check runs on {plan['transport']}, env decided {env['transport']}")
    for name, var in env["variables"].items():
        if not name.startswith("NCCL_"):
            continue  # the plan shows the NCCL environment the stages run with
        if var["value"] is not None and plan["environment"].get(name) not in (
            var["value"],
            "<redacted>",
        ):
            wrong.append(
                f"check runs with {name}={plan['environment'].get(name)!r}, env says "
                f"{var['value']!r}"
            )
    return wrong


# ---------------------------------------------------------------- problems


def doctor_problems(doctor: JSON) -> list[tuple[str, str, str | None]]:
    """The doctor's problems as its "Fixes, most important first" list orders them:
    FAIL before WARN, then by impact (hpnet.check.impact), then in report order."""
    from hpnet.check.impact import doctor_impact

    if "error" in doctor:
        return []
    flagged = [c for c in doctor["checks"] if c["status"] in ("FAIL", "WARN")]
    ordered = sorted(
        flagged, key=lambda c: (c["status"] != "FAIL", doctor_impact(c["id"], c["status"]))
    )
    return [(c["id"], c["status"], c["fix"]) for c in ordered]


def check_problems(report: JSON) -> list[tuple[str, str, str | None]]:
    """check's problems that come from the doctor, in check's order, with the status
    its ``doctor_checks`` gives them."""
    if "error" in report:
        return []
    status = {c["id"]: c["status"] for c in report["doctor_checks"]}
    return [
        (
            p["code"].removeprefix("doctor:"),
            status.get(p["code"].removeprefix("doctor:"), "?"),
            p["fix"],
        )
        for p in report["problems"]
        if p["code"].startswith("doctor:")
    ]


# ---------------------------------------------------------------- the cases


def _sources() -> list[tuple[str, str]]:
    trees = [("tree", p.stem) for p in sorted((DATA / "sysfs").glob("*.tree"))]
    listings = [
        ("listing", p.stem)
        for p in sorted((DATA / "listings").glob("*.txt"))
        if not p.name.endswith(".source.txt") and p.name != "SOURCE.txt"
    ]
    return trees + listings


def _cases() -> list[Case]:
    """auto and the profiles of the transport ``env --profile auto`` resolves; a
    listing env refuses is judged with auto only (env's answer: unknown)."""
    import tempfile

    cases = []
    with tempfile.TemporaryDirectory(prefix="hpnet-one-verdict-") as base:
        for kind, name in _sources():
            env = _json(["env", *_node_args(Case(kind, name, "auto", "none"), base), "--json"], {})
            profiles = ("auto", *PROFILES.get(env.get("transport", ""), ()))
            cases += [Case(kind, name, p, f) for p in profiles for f in FAULTS]
    _tree_root.cache_clear()
    return cases


CASES = _cases()
TREE_CASES = [c for c in CASES if c.kind == "tree"]


@pytest.fixture(scope="session")
def base(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("one-verdict"))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_one_verdict_per_decision(case: Case, base: str) -> None:
    """env and doctor judge each decision alike, and each says what it judged."""
    out = _outputs(case, base)
    node = _node(_detect(case.kind, case.name, base))
    differ = [
        *one_judgement(out["env"], out["doctor"]),
        *env_says(out["env"], node),
        *doctor_says(out["doctor"], node),
        *plan_says(out.get("plan"), out["env"]),
    ]
    if differ:  # a one-line failure: a traceback per case would cost more than the case
        pytest.fail("\n".join(differ), pytrace=False)


@pytest.mark.parametrize("case", TREE_CASES, ids=[c.id for c in TREE_CASES])
def test_check_problems_are_the_doctors(case: Case, base: str) -> None:
    """check lists the doctor's problems: the same ids, statuses and fixes, FAIL
    before WARN, nothing dropped or added."""
    out = _outputs(case, base)
    check, doctor = check_problems(out["check"]), doctor_problems(out["doctor"])
    if check != doctor:
        pytest.fail(
            f"check:  {_problem_list(check)}\ndoctor: {_problem_list(doctor)}", pytrace=False
        )


def _problem_list(problems: Sequence[tuple[str, str, str | None]]) -> str:
    return "; ".join(f"{i} {s} fix={f!r}" for i, s, f in problems) or "(none)"
