"""A launch as a value: what runs on which node with which environment, and which
files are written first. Engines build it (:mod:`hpnet.launch.engines`); ``--dry-run``
prints it (:func:`render_plan`); :mod:`hpnet.launch.execute` runs it.

Secrets (:func:`hpnet.secrets.is_secret`) never appear in a command line: a remote
node's secrets travel on ssh's stdin (:meth:`NodeCommand.remote_stdin`) and a fixed
``sh -c`` on the node reads them into its environment, so that no ``/proc/*/cmdline``
on either machine holds them. The printed plan is a shell script whose only
executable lines are the commands: every other line is a comment, whatever a value,
a path or a file's content holds.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from typing import Literal

from hpnet.launch.envprop import Propagation, is_secret, redact
from hpnet.launch.validate import operand
from hpnet.secrets import redact_text

__all__ = [
    "GeneratedFile",
    "LaunchPlan",
    "LaunchRequest",
    "NodeCommand",
    "plan_data",
    "render_plan",
]

Engine = Literal["torchrun", "env", "mpirun", "slurm", "k8s"]
ENGINES: tuple[Engine, ...] = ("torchrun", "env", "mpirun", "slurm", "k8s")
#: the rendezvous port when neither --master-port nor the platform gives one and the
#: nodes are not all this machine (torch's own default)
DEFAULT_MASTER_PORT = 29500


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LaunchRequest:
    """What the user asked for, as the CLI parsed it."""

    command: tuple[str, ...]
    engine: Engine | None = None  # None: the context's natural engine
    nproc_per_node: int | None = None
    #: --master-port; None: a free port when every node is this machine
    #: (:func:`hpnet.launch.rendezvous.choose_port`), else :data:`DEFAULT_MASTER_PORT`
    master_port: int | None = None
    master_addr: str | None = None  # default: the first node (or the platform's)
    ssh_port: int | None = None
    workdir: str = "."
    job_name: str = "hpnet"
    profile: str | None = None
    iface: str | None = None  # mpirun's btl_tcp_if_include
    hostfile_path: str | None = None  # the user's hostfile, passed to mpirun as is
    output_dir: str = "."  # where generated files go
    # Kubernetes
    image: str | None = None
    host_network: bool = False
    shm_size: str = "16Gi"
    resources: tuple[tuple[str, str], ...] = ()  # extra resource limits (rdma/hca: 1)
    namespace: str | None = None
    kind: Literal["pytorchjob", "mpijob"] = "pytorchjob"
    #: give each node its own NCCL_HOSTID, so that NCCL treats nodes on one machine as
    #: separate hosts and connects them through its network transport
    fake_hosts: bool = False
    #: the caller's CUDA_VISIBLE_DEVICES entries (None: unset): fake hosts on one
    #: machine split them, nproc_per_node each, so that no two nodes share a GPU
    visible_devices: tuple[str, ...] | None = None

    @property
    def port(self) -> int:
        """The rendezvous port asked for, or :data:`DEFAULT_MASTER_PORT`."""
        return DEFAULT_MASTER_PORT if self.master_port is None else self.master_port


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class NodeCommand:
    """One process hpnet starts: an engine's launcher on one node (or for all nodes)."""

    label: str  # "node 0 (gpu1)", "mpirun", "sbatch"
    host: str | None  # None: this machine
    argv: tuple[str, ...]  # the engine's command as it runs on that host
    env: Mapping[str, str]  # what hpnet sets on top of the caller's environment
    #: ssh port when ``host`` is remote; the remote command is ``env K=V ... argv``
    ssh_port: int | None = None
    workdir: str | None = None

    @property
    def remote(self) -> bool:
        return self.host is not None

    def secret_names(self) -> tuple[str, ...]:
        """The variables of ``env`` that are secrets: a remote node reads them from
        ssh's stdin, never from its command line."""
        return tuple(k for k, v in self.env.items() if is_secret(k, v)) if self.remote else ()

    def remote_stdin(self) -> str:
        """What ssh's stdin carries to the node: the secrets' values, one a line, in
        :meth:`secret_names`' order ("" when there are none). Values never hold a line
        break (:mod:`hpnet.launch.envprop` refuses them)."""
        return "".join(f"{self.env[name]}\n" for name in self.secret_names())

    def local_argv(self) -> tuple[str, ...]:
        """What this machine executes: the argv itself, or ssh with the remote command
        line built from shlex-quoted words (the remote shell splits it back). Secrets
        are read on the node by a fixed ``sh -c`` from ssh's stdin (``IFS= read -r``
        keeps every byte but the line break), then the command is exec'd with them in
        its environment."""
        if self.host is None:
            return self.argv
        hidden = set(self.secret_names())
        words = ["env", *(f"{k}={v}" for k, v in self.env.items() if k not in hidden)]
        if hidden:
            names = [k for k in self.env if k in hidden]
            reads = " && ".join(f"IFS= read -r {name}" for name in names)
            script = f'{reads} && export {" ".join(names)} && exec "$@"'
            words += ["sh", "-c", script, "hpnet-env"]
        remote = shlex.join([*words, *self.argv])
        if self.workdir:
            # a leading "-" would be an option of cd (cd -P): "./-P" is the same directory
            remote = f"cd {shlex.quote(operand(self.workdir))} && {remote}"
        ssh = ["ssh", "-o", "BatchMode=yes"]
        if self.ssh_port:
            ssh += ["-p", str(self.ssh_port)]
        return (*ssh, self.host, "--", remote)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GeneratedFile:
    path: str
    content: str
    purpose: str
    #: only the user reads a generated file (it holds forwarded values): 0o700 for a
    #: script, 0o600 for the rest
    mode: int = 0o600
    #: what --dry-run shows instead of ``content`` when the file holds a secret
    #: (the engine renders it again with the values redacted)
    shown: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LaunchPlan:
    engine: Engine
    context: str  # the launch context's kind
    num_nodes: int
    nproc_per_node: int
    commands: tuple[NodeCommand, ...]  # what hpnet starts here ((): files only)
    files: tuple[GeneratedFile, ...]
    propagation: Propagation
    notes: tuple[str, ...] = ()
    #: the port the ranks meet on, where a command hpnet starts listens on it (so that
    #: a port another process holds is named); None: none hpnet knows of
    master_port: int | None = None
    #: hpnet chose ``master_port`` free on this machine (no --master-port was given)
    port_chosen: bool = False

    @property
    def world_size(self) -> int:
        return self.num_nodes * self.nproc_per_node


def render_plan(plan: LaunchPlan) -> str:
    """``--dry-run``: exactly what would run and be written, secrets redacted. The
    text is a shell script whose only executable lines are the commands: headers,
    notes and the files' contents are comments, one ``#`` for every line they span.
    """
    lines = [
        _comment(
            f"hpnet launch: {plan.engine} on {plan.num_nodes} node(s) x {plan.nproc_per_node} "
            f"process(es) = {plan.world_size} ranks (context: {plan.context})"
        )
    ]
    prop = plan.propagation
    if prop.env:
        lines.append(_comment(f"environment every rank gets ({len(prop.env)}):"))
        width = max(len(k) for k in prop.env)
        for name, value in prop.display().items():
            origin = prop.origins.get(name, "")
            lines.append(_comment(f"  {name.ljust(width)} = {value}    ({origin})"))
    if prop.withheld:
        lines.append(
            _comment(
                "not forwarded (look like secrets; pass --env NAME to forward one): "
                + ", ".join(prop.withheld)
            )
        )
    for note in plan.notes:
        lines.append(_comment(f"note: {note}"))
    for file in plan.files:
        lines += ["", _comment(f"file {file.path} ({file.purpose}):")]
        lines.append(_comment(_redacted_text(_shown(file), prop)))
    for command in plan.commands:
        where = f" on {command.host}" if command.host else " here"
        lines += ["", _comment(f"{command.label}{where}")]
        for name, value in command.env.items():
            if redact(name, value) != value:
                # a runnable `export NAME='<redacted>'` would set the placeholder: a
                # secret is a comment (issue 26, item 4)
                lines.append(
                    _comment(f"{name}: a secret, passed from this shell's environment when "
                             "hpnet launch runs the plan (not shown)")
                )  # fmt: skip
            else:
                lines.append(f"export {name}={shlex.quote(value)}")
        lines.append(_display(command, command.argv))
        if command.remote:
            lines.append(_comment("hpnet runs it as: " + _display(command, command.local_argv())))
            if command.secret_names():
                names = command.secret_names()
                carried = " ".join(f"{k}={redact(k, command.env[k])}" for k in names)
                lines.append(_comment(f"on ssh's stdin, never in a command line: {carried}"))
    return "\n".join(lines) + "\n"


def _comment(text: str) -> str:
    """``text`` as shell comment lines: a shell ends a comment at a line feed only,
    so each line the text spans gets its own ``#``.

    >>> print(_comment("a\\n$(touch x)"))
    # a
    # $(touch x)
    """
    return "\n".join(f"# {line}" if line else "#" for line in text.split("\n"))


def _shown(file: GeneratedFile) -> str:
    return file.content if file.shown is None else file.shown


def _secret_values(env: Mapping[str, str]) -> list[tuple[str, str]]:
    """(value, what to show instead) for each secret, longest first."""
    found = [(v, redact(k, v)) for k, v in env.items() if v and is_secret(k, v)]
    return sorted(found, key=lambda pair: -len(pair[0]))


def _display(command: NodeCommand, argv: tuple[str, ...]) -> str:
    secrets = _secret_values(command.env)
    shown = []
    for word in argv:
        text = word
        for value, replacement in secrets:
            text = text.replace(value, replacement)
        shown.append(redact_text(text))
    return shlex.join(shown)


def _redacted_text(text: str, prop: Propagation) -> str:
    for value, replacement in _secret_values(prop.env):
        text = text.replace(value, replacement)
    return "\n".join(redact_text(line) for line in text.rstrip("\n").split("\n"))


def plan_data(plan: LaunchPlan) -> dict[str, object]:
    """The plan as JSON data, secrets redacted (``--dry-run --json``)."""
    prop = plan.propagation
    return {
        "engine": plan.engine,
        "context": plan.context,
        "num_nodes": plan.num_nodes,
        "nproc_per_node": plan.nproc_per_node,
        "world_size": plan.world_size,
        "env": prop.display(),
        "env_origins": dict(prop.origins),
        "withheld": list(prop.withheld),
        "commands": [
            {
                "label": c.label,
                "host": c.host,
                "env": {k: redact(k, v) for k, v in c.env.items()},
                "argv": shlex.split(_display(c, c.argv)),
                "runs_as": shlex.split(_display(c, c.local_argv())),
            }
            for c in plan.commands
        ],
        "files": [
            {"path": f.path, "purpose": f.purpose, "content": _redacted_text(_shown(f), prop)}
            for f in plan.files
        ],
        "notes": list(plan.notes),
    }
