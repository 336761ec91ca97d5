"""A launch as a value: what runs on which node with which environment, and which
files are written first. Engines build it (:mod:`hpnet.launch.engines`); ``--dry-run``
prints it (:func:`render_plan`); :mod:`hpnet.launch.execute` runs it.
"""

from __future__ import annotations

import dataclasses
import shlex
from collections.abc import Mapping
from typing import Literal

from hpnet.launch.envprop import Propagation, redact
from hpnet.secrets import REDACTED

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


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LaunchRequest:
    """What the user asked for, as the CLI parsed it."""

    command: tuple[str, ...]
    engine: Engine | None = None  # None: the context's natural engine
    nproc_per_node: int | None = None
    master_port: int = 29500
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

    def local_argv(self) -> tuple[str, ...]:
        """What this machine executes: the argv itself, or ssh with the remote command
        line built from shlex-quoted words (the remote shell splits it back)."""
        if self.host is None:
            return self.argv
        words = ["env", *(f"{k}={v}" for k, v in self.env.items()), *self.argv]
        remote = shlex.join(words)
        if self.workdir:
            remote = f"cd {shlex.quote(self.workdir)} && {remote}"
        ssh = ["ssh", "-o", "BatchMode=yes"]
        if self.ssh_port:
            ssh += ["-p", str(self.ssh_port)]
        return (*ssh, self.host, "--", remote)


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class GeneratedFile:
    path: str
    content: str
    purpose: str
    mode: int = 0o644


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

    @property
    def world_size(self) -> int:
        return self.num_nodes * self.nproc_per_node


def render_plan(plan: LaunchPlan) -> str:
    """``--dry-run``: exactly what would run and be written, secrets redacted."""
    lines = [
        f"# hpnet launch: {plan.engine} on {plan.num_nodes} node(s) x {plan.nproc_per_node} "
        f"process(es) = {plan.world_size} ranks (context: {plan.context})"
    ]
    prop = plan.propagation
    if prop.env:
        lines.append(f"# environment every rank gets ({len(prop.env)}):")
        width = max(len(k) for k in prop.env)
        for name, value in prop.display().items():
            lines.append(f"#   {name.ljust(width)} = {value}    ({prop.origins.get(name, '')})")
    if prop.withheld:
        lines.append(
            "# not forwarded (look like secrets; pass --env NAME to forward one): "
            + ", ".join(prop.withheld)
        )
    for note in plan.notes:
        lines.append(f"# note: {note}")
    for file in plan.files:
        lines += ["", f"# file {file.path} ({file.purpose}):", _redacted_text(file.content, prop)]
    for command in plan.commands:
        where = f" on {command.host}" if command.host else " here"
        lines += ["", f"# {command.label}{where}"]
        lines += [f"export {k}={shlex.quote(redact(k, v))}" for k, v in command.env.items()]
        lines.append(_display(command, command.argv))
        if command.remote:
            lines.append("# hpnet runs it as: " + _display(command, command.local_argv()))
    return "\n".join(lines) + "\n"


def _display(command: NodeCommand, argv: tuple[str, ...]) -> str:
    env = command.env
    secrets = [v for k, v in env.items() if v and redact(k, v) != v]
    shown = []
    for word in argv:
        text = word
        for value in secrets:
            text = text.replace(value, REDACTED)
        shown.append(text)
    return shlex.join(shown)


def _redacted_text(text: str, prop: Propagation) -> str:
    for name, value in prop.env.items():
        if value and redact(name, value) != value:
            text = text.replace(value, REDACTED)
    return text.rstrip("\n")


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
            {"path": f.path, "purpose": f.purpose, "content": _redacted_text(f.content, prop)}
            for f in plan.files
        ],
        "notes": list(plan.notes),
    }
