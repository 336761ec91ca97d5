"""One verdict per node (issue 25): the acceptance harness, run on its own while it
fails (``python -m pytest -q tests/one_verdict.py``; it is not named ``test_*.py``, so the
suite leaves it out until every case agrees and it moves to ``tests/unit``).

``hpnet env``, ``hpnet doctor`` and ``hpnet check``
give one answer for each node-dependent decision, and check's problems are the doctor's.

Every recorded node (``tests/data/sysfs/*.tree``, ``tests/data/listings/*.txt``) is
run through the three commands, in-process (:func:`hpnet.cli.main.main`), for a few
profiles (auto and those of the node's transport) and with planted faults in the
environment (:data:`FAULTS`). From each command's JSON a small extractor takes, per
decision, a :class:`Verdict` ``(status, answer)``:

* ``status``: ``ok`` (nothing to change), ``problem`` (the command flags it or its fix
  changes it), ``unknown`` (the source does not show it, or the command refused the
  input), ``contradiction`` (the doctor's own check PASSes the value while another of
  its checks' fixes changes it).
* ``answer``: what the job runs with *after following the command's advice*,
  normalised against the node (``hpnet detect --json``), so that ``=mlx5_0:1`` and
  ``mlx5_0`` on a node with one mlx5_0 port are one answer:

  ============  =================================================================
  decision      answer
  ============  =================================================================
  ``hca``       the ports NCCL opens, ``dev:port,...`` sorted; ``none``; ``unknown``
  ``transport`` ``ib``, ``roce``, ``erdma``, ``efa``, ``socket``, ``mixed(a+b)``
  ``gid``       the index; ``auto`` (unset, NCCL chooses); ``n/a`` (no RoCE/eRDMA)
  ``ifname``    the interfaces that are up and match, sorted; ``nccl-picks`` (unset)
  ============  =================================================================

  ``no-answer``: the command says the value is wrong and gives no fix.
  ``conflict[a|b]``: one command gives two answers (two fixes, or a fix and a value).
  ``N port(s) ACTIVE (doctor's count)``: the doctor's ports.state counts another
  number of ports than NCCL would open (its words are all there is to compare).

Normalisation rules (each in one small function below, to adapt):

* an unset GID index is what NCCL's own choice picks, where the doctor's vars.gid
  evidence names it per port (``nccl_gid_picks``), for every command;
* the doctor's "leave NCCL_SOCKET_IFNAME unset, NCCL picks" contradicts no interface
  that is not flagged (the doctor cannot know NCCL's pick) (``_agree``);
* a command that refuses the input (exit 2) answers ``unknown`` for every decision.

Two tests per case: :func:`test_one_verdict_per_decision` (the verdicts agree) and,
for recorded trees, :func:`test_check_problems_are_the_doctors` (check's ``doctor:*``
problems are the doctor's WARN and FAIL checks: same ids, statuses and fixes, FAIL
before WARN as the doctor's "Fixes, most important first" lists them). Each failure is
one line per disagreeing decision: ``env=status:answer  doctor=...  check=...``.

The commands' JSON (docs/env-schema.md, docs/doctor-schema.md, docs/check-schema.md)
expose the decisions differently:

* env: ``transport``; ``variables.<NAME>.value`` and ``.layers`` (the advice is the
  highest layer but ``environment`` when a finding names the variable);
  ``findings[].code`` / ``.message``.
* doctor: only ``checks[]`` (``id``, ``status``, ``summary``, ``evidence``, ``fix``):
  the value judged is the environment (with ``--profile``: the presets overlaid by
  it); the advice is its fixes' ``export``/``unset`` lines; some facts are only in a
  summary's words (``N selected port(s) ACTIVE``, ``NCCL picks mlx5_0:1->3``).
* check: ``--dry-run --json`` gives ``transport`` and ``environment`` (the values it
  would run with) and no problems; the problems come from
  :func:`hpnet.check.run.run_check` with a launcher that runs nothing, as
  ``hpnet check --json`` prints them (``problems[]``: ``code`` ``doctor:<id>``, ``fix``;
  ``doctor_checks[]``: ``id``, ``status``). check has no ``--from``: listings are
  judged by env and doctor only.

The doctor runs with ``--profile P`` for every profile (``auto`` included), as env
and check do.
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
DECISIONS = ("hca", "transport", "gid", "ifname")
#: the variable that carries each decision
VARIABLE = {
    "hca": "NCCL_IB_HCA",
    "transport": "NCCL_IB_DISABLE",
    "gid": "NCCL_IB_GID_INDEX",
    "ifname": "NCCL_SOCKET_IFNAME",
}
#: the doctor checks that own each decision (their status is the decision's)
OWNERS = {
    "hca": ("vars.hca",),
    "transport": ("vars.ib_disabled", "vars.transport", "devices.uverbs"),
    "gid": ("vars.gid",),
    "ifname": ("vars.ifname",),
}
#: env finding codes about a decision (besides any finding whose message has NAME=)
ENV_CODES = {
    "hca": ("hca-mismatch", "profile-hca-mismatch", "no-routable-gid"),
    "transport": ("no-usable-rdma",),
    "gid": ("gid-mismatch", "profile-gid-mismatch", "no-common-gid"),
    "ifname": ("ifname-mismatch", "profile-ifname-mismatch"),
}
#: env's findings that say a value is not checked (not known), not that it is wrong
UNCHECKED_CODES = ("gid-unchecked", "listing-incomplete")
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


def transport_of(hca: str, ib_disabled: str | None, node: Node) -> str:
    """The link layer of an hca answer's ports (``socket`` when none)."""
    if (ib_disabled or "0").strip() == "1" or hca == "none":
        return "socket"
    if not re.fullmatch(r"[\w.-]+:\d+(,[\w.-]+:\d+)*", hca):
        return "unknown"
    kinds = sorted({p.kind for p in node.ports if p.name in hca.split(",")})
    return kinds[0] if len(kinds) == 1 else f"mixed({'+'.join(kinds)})"


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


# ---------------------------------------------------------------- verdicts


@dataclasses.dataclass(frozen=True)
class Verdict:
    status: str  # ok, problem, unknown, contradiction
    answer: str

    def __str__(self) -> str:
        return f"{self.status}:{self.answer}"


UNKNOWN = Verdict("unknown", "unknown")


def _one(answers: Sequence[str]) -> str:
    """One answer, or ``conflict[a|b]`` when a command gives several."""
    distinct = sorted(set(answers))
    return distinct[0] if len(distinct) == 1 else f"conflict[{'|'.join(distinct)}]"


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


def _changed(given: Mapping[str, str], fixes: Sequence[str | None]) -> set[str]:
    """The variables a fix gives another value than they have (or unsets)."""
    return {name for fix in fixes for name, value in _fix_lines(fix) if given.get(name) != value}


def _advised(given: Mapping[str, str], fixes: Sequence[str | None]) -> dict[str, list[str | None]]:
    """Each variable's candidate values after the fixes: the given value unless a fix
    sets or unsets it (every fix's value, so that two fixes that disagree show)."""
    told: dict[str, list[str | None]] = {}
    for fix in fixes:
        for name, value in _fix_lines(fix):
            told.setdefault(name, []).append(value)
    return {name: told.get(name, [given.get(name)]) for name in {*given, *told}}


def _decide(
    values: Mapping[str, list[str | None]],
    node: Node,
    statuses: Mapping[str, str],
    *,
    stated_transport: str | None = None,
    unknown: Sequence[str] = (),
    gid_picks: Mapping[str, int] | None = None,
    no_answer: Sequence[str] = (),
) -> dict[str, Verdict]:
    """The four verdicts from advised values (shared by the three extractors).

    ``stated_transport``: the command's own word (env, check) instead of the ports'
    link layer; ``unknown``: decisions the command says it cannot tell; ``gid_picks``:
    what NCCL's own GID choice picks per port (the doctor's evidence) for an unset
    index; ``no_answer``: decisions flagged with no fix.
    """

    def pick(name: str) -> list[str | None]:
        return values.get(name, [None])

    disabled = pick("NCCL_IB_DISABLE")[-1]
    hcas = [hca_ports(v, d, node) for v in pick("NCCL_IB_HCA") for d in pick("NCCL_IB_DISABLE")]
    hca = "unknown" if "hca" in unknown else _one(hcas)
    if stated_transport is not None:
        transport = "socket" if (disabled or "0").strip() == "1" else stated_transport
        if hca == "unknown" and transport != "socket":
            # the command's word for a transport whose ports it cannot tell: the node
            # does not show that it carries it (the profile asked for it)
            transport = "unknown"
    else:
        transport = (
            "unknown" if hca == "unknown" else _one([transport_of(h, disabled, node) for h in hcas])
        )
    gids = []
    for value in pick("NCCL_IB_GID_INDEX"):
        gid = gid_value(value)
        if gid == "auto" and gid_picks and re.fullmatch(r"[\w.:,-]+", hca):
            chosen = {gid_picks[p] for p in hca.split(",") if p in gid_picks}
            gid = str(chosen.pop()) if len(chosen) == 1 else gid
        gids.append(gid)
    if transport in ("ib", "efa", "socket"):  # InfiniBand routes by LID: no GID index
        gid = "n/a"
    elif "gid" in unknown or transport == "unknown":
        gid = "unknown"
    else:
        gid = _one(gids)
    ifname = (
        "unknown"
        if "ifname" in unknown
        else _one([interfaces(v, node) for v in pick("NCCL_SOCKET_IFNAME")])
    )
    answers = {"hca": hca, "transport": transport, "gid": gid, "ifname": ifname}
    verdicts = {}
    for decision, answer in answers.items():
        said = "no-answer" if decision in no_answer else answer
        status = "unknown" if said == "unknown" else statuses.get(decision, "ok")
        verdicts[decision] = Verdict(status, said)
    return verdicts


#: what an env finding proposes instead of the value it flags
PROPOSED = (
    r"; (\S+) would\b",  # ifname-mismatch: "... matches no interface ...; =eth2 would"
    r"GID (\d+) works on every selected port",  # gid-mismatch
    r"usable \w+ ports are (\S+)$",  # hca-mismatch
    r": using (\S+)$",  # profile-*-mismatch
)


def _env_advice(var: JSON, messages: Sequence[str]) -> str | None:
    """The value env advises for a variable its findings flag: the one a finding
    proposes, else the highest layer but the environment's (what --override-env sets)."""
    for message in messages:
        for pattern in PROPOSED:
            found = re.search(pattern, message)
            if found:
                return found.group(1)
    layers = [layer for layer in var["layers"] if layer["origin"] != "environment"]
    value: str | None = layers[-1]["value"] if layers else var["value"]
    return value


def nccl_gid_picks(doctor: JSON) -> dict[str, int]:
    """What NCCL's own GID choice picks per port (``mlx5_0:1->3``), from the doctor's
    vars.gid: a fact of the node, used to read every command's "leave it unset"."""
    found = {}
    for check in doctor.get("checks", []):
        if check["id"] == "vars.gid":
            text = " ".join([check["summary"], *check["evidence"]])
            found = {p: int(i) for p, i in re.findall(r"([\w.-]+:\d+)->(\d+)", text)}
    return found


def env_verdicts(env: JSON, node: Node, picks: Mapping[str, int]) -> dict[str, Verdict]:
    """env: the advice is each variable's value, or, when a finding names the variable
    (the environment's value is kept and disagrees), the highest other layer's; a
    "did you mean NCCL_X? rename" finding advises NCCL_X=<the misspelled one's value>."""
    if "error" in env:
        return dict.fromkeys(DECISIONS, UNKNOWN)
    variables, findings = env["variables"], env["findings"]
    statuses: dict[str, str] = {}
    values: dict[str, list[str | None]] = {}
    for decision, name in VARIABLE.items():
        about = [
            f
            for f in findings
            if (f"{name}=" in f["message"] or f["code"] in ENV_CODES[decision])
            and f["code"] not in UNCHECKED_CODES
        ]
        if about:
            statuses[decision] = "problem"
        var = variables.get(name)
        if var is None:
            continue
        flagged = [f["message"] for f in findings if f"{name}=" in f["message"]]
        values[name] = [_env_advice(var, flagged) if flagged else var["value"]]
    for finding in findings:
        renamed = re.search(r"rename (NCCL_\w+) to (NCCL_\w+)", finding["message"])
        if finding["code"] == "unknown-variable" and renamed:
            wrong, right = renamed.groups()
            value = variables.get(wrong, {}).get("value")
            values.setdefault(right, [None]).append(value)
            for decision, name in VARIABLE.items():
                if name == right:
                    statuses[decision] = "problem"
    incomplete = any(f["code"] == "listing-incomplete" for f in findings)
    unknown = []
    if incomplete and not (values.get("NCCL_IB_HCA") or [None])[0]:
        unknown.append("hca")
    if (incomplete and not (values.get("NCCL_IB_GID_INDEX") or [None])[0]) or any(
        f["code"] == "gid-unchecked" for f in findings
    ):
        unknown.append("gid")
    if node.interfaces is None and not (values.get("NCCL_SOCKET_IFNAME") or [None])[0]:
        unknown.append("ifname")
    return _decide(
        values, node, statuses, stated_transport=env["transport"], unknown=unknown, gid_picks=picks
    )


def _status_from(checks: Sequence[JSON], decision: str, changed: set[str]) -> str:
    """ok / problem / contradiction from the owner checks and who changes the variable
    (ports.state FAILs when no selected port is ACTIVE: NCCL falls back to sockets)."""
    owners = [c for c in checks if c["id"] in OWNERS[decision]]
    if any(c["status"] in ("WARN", "FAIL") for c in owners):
        return "problem"
    if decision == "transport" and any(
        c["id"] == "ports.state" and c["status"] == "FAIL" for c in checks
    ):
        return "problem"
    if VARIABLE[decision] in changed:
        return (
            "contradiction"
            if any(c["status"] == "PASS" for c in owners if c["id"] == OWNERS[decision][0])
            else "problem"
        )
    return "ok"


def doctor_verdicts(doctor: JSON, node: Node, given: Mapping[str, str]) -> dict[str, Verdict]:
    """doctor: the value judged is ``given`` (the environment over the profile's
    presets); the advice is its WARN/FAIL checks' fixes."""
    if "error" in doctor:
        return dict.fromkeys(DECISIONS, UNKNOWN)
    checks = {c["id"]: c for c in doctor["checks"]}
    flagged = [c for c in doctor["checks"] if c["status"] in ("WARN", "FAIL")]
    values = _advised(given, [c["fix"] for c in flagged])
    changed = _changed(given, [c["fix"] for c in flagged])
    statuses = {d: _status_from(doctor["checks"], d, changed) for d in DECISIONS}

    def text(cid: str) -> str:
        """A check's summary and evidence, as one line."""
        check = checks.get(cid, {})
        return " ".join([check.get("summary", ""), *check.get("evidence", [])])

    unknown = []
    if re.search(r"does not show|is not shown", text("ports.state")) and (
        "NCCL_IB_HCA" not in changed  # a fix that names ports is an answer all the same
    ):
        unknown.append("hca")
    if "no usable RoCE/eRDMA port with a known GID table" in text("vars.gid") and any(
        p.kind in ("roce", "erdma") and p.nccl_usable for p in node.ports
    ):
        unknown.append("gid")
    if "not known from this source" in text("vars.ifname"):
        unknown.append("ifname")
    picks = nccl_gid_picks(doctor)
    no_answer = [
        d
        for d in DECISIONS
        if any(
            c["status"] in ("WARN", "FAIL") and not c["fix"]
            for c in flagged
            if c["id"] == OWNERS[d][0]
        )
    ]
    verdicts = _decide(
        values, node, statuses, unknown=unknown, gid_picks=picks, no_answer=no_answer
    )
    # the doctor's own count of the ports NCCL takes, where no fix names them
    said = re.match(r"(\d+) selected port\(s\) ACTIVE", text("ports.state"))
    hca, disabled = verdicts["hca"], (values.get("NCCL_IB_DISABLE") or [None])[-1]
    counted = 0 if hca.answer == "none" else len(hca.answer.split(","))
    if (
        said
        and "NCCL_IB_HCA" not in changed
        and hca.answer != "unknown"
        and disabled != "1"
        and int(said.group(1)) != counted
    ):
        verdicts["hca"] = Verdict(hca.status, f"{said.group(1)} port(s) ACTIVE (doctor's count)")
    return verdicts


def check_verdicts(
    plan: JSON, report: JSON, node: Node, picks: Mapping[str, int]
) -> dict[str, Verdict]:
    """check: the plan's environment and transport, with its problems' fixes applied."""
    if "error" in plan or "error" in report:
        return dict.fromkeys(DECISIONS, UNKNOWN)
    problems = report["problems"]
    values = _advised(plan["environment"], [p["fix"] for p in problems])
    changed = _changed(plan["environment"], [p["fix"] for p in problems])
    statuses = {}
    for decision in DECISIONS:
        codes = {f"doctor:{cid}" for cid in OWNERS[decision]}
        if decision == "transport":
            codes.add("hardware:rdma")
        hit = any(p["code"] in codes for p in problems) or VARIABLE[decision] in changed
        statuses[decision] = "problem" if hit else "ok"
    no_answer = [
        d
        for d in DECISIONS
        if any(p["code"] == f"doctor:{OWNERS[d][0]}" and not p["fix"] for p in problems)
    ]
    return _decide(
        values,
        node,
        statuses,
        stated_transport=plan["transport"],
        no_answer=no_answer,
        gid_picks=picks,
    )


def _given(profile: str, fault: Mapping[str, str]) -> dict[str, str]:
    """What the doctor judges: the profile's presets overlaid by the environment."""
    from hpnet.profiles import get_profile

    presets = {s.name: s.value for s in get_profile(profile).settings}
    return {**presets, **fault}


def _agree(a: Verdict, b: Verdict, decision: str) -> bool:
    """Equal; for the interface, the doctor's "leave it unset, NCCL picks" contradicts
    no answer that is not a problem (the doctor cannot know NCCL's pick)."""
    if decision == "ifname" and b.answer == "nccl-picks" and "problem" not in (a.status, b.status):
        return True
    return a == b


# ---------------------------------------------------------------- problems


def doctor_problems(doctor: JSON) -> list[tuple[str, str, str | None]]:
    """The doctor's problems as a user reads them: FAIL before WARN, in report order."""
    if "error" in doctor:
        return []
    flagged = [c for c in doctor["checks"] if c["status"] in ("FAIL", "WARN")]
    ordered = [c for c in flagged if c["status"] == "FAIL"] + [
        c for c in flagged if c["status"] == "WARN"
    ]
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


def _verdicts(case: Case, base: str) -> dict[str, dict[str, Verdict]]:
    out = _outputs(case, base)
    node = _node(_detect(case.kind, case.name, base))
    picks = nccl_gid_picks(out["doctor"])
    found = {
        "env": env_verdicts(out["env"], node, picks),
        "doctor": doctor_verdicts(out["doctor"], node, _given(case.profile, FAULTS[case.fault])),
    }
    if "plan" in out:
        found["check"] = check_verdicts(out["plan"], out["check"], node, picks)
    return found


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_one_verdict_per_decision(case: Case, base: str) -> None:
    """env, doctor and check give one (status, answer) for each decision."""
    found = _verdicts(case, base)
    differ = []
    for decision in DECISIONS:
        env = found["env"][decision]
        others = {k: v[decision] for k, v in found.items() if k != "env"}
        if not all(_agree(env, v, decision) for v in others.values()):
            row = "  ".join(f"{k}={v[decision]}" for k, v in found.items())
            differ.append(f"{decision}: {row}")
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
