"""torchrun plans (one agent per node) and ``env`` plans (one process per node with
MASTER_ADDR / MASTER_PORT / WORLD_SIZE / RANK exported, as the Scnet guide launches).

torchrun's flags are its own (``torch/distributed/run.py``): ``--nnodes``,
``--nproc-per-node``, ``--node-rank``, ``--master-addr``, ``--master-port`` for a
static rendezvous (the node list is known: hosts, hostfile, a PyTorchJob pod), or
``--rdzv-backend c10d --rdzv-endpoint --rdzv-id`` where the same command starts on
every node and the rendezvous numbers the nodes (one task per node under srun).
"""

from __future__ import annotations

import os

from hpnet.errors import InputError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation
from hpnet.launch.plan import LaunchPlan, LaunchRequest, NodeCommand

__all__ = ["build_env", "build_torchrun", "is_local", "torchrun_target"]


def torchrun_target(command: tuple[str, ...]) -> tuple[str, ...]:
    """What follows torchrun's own flags: a script (torchrun runs it with its Python),
    ``-m module``, or ``--no-python`` and a program; always behind ``--``, or torchrun's
    argparse takes the program's own options for its own (``--logs`` is an ambiguous
    prefix of torchrun's ``--logs-specs``).

    >>> torchrun_target(("python3", "train.py", "--lr", "1"))
    ('--', 'train.py', '--lr', '1')
    >>> torchrun_target(("python", "-m", "hpnet", "bench"))
    ('-m', '--', 'hpnet', 'bench')
    >>> torchrun_target(("./all_reduce_perf", "-g", "1"))
    ('--no-python', '--', './all_reduce_perf', '-g', '1')
    """
    first = os.path.basename(command[0])
    if first.startswith("python") and len(command) > 1:
        if command[1] == "-m" and len(command) > 2:
            return ("-m", "--", *command[2:])
        return ("--", *command[1:])
    if command[0].endswith(".py"):
        return ("--", *command)
    return ("--no-python", "--", *command)


def fake_host_env(request: LaunchRequest, node_rank: int, nproc: int) -> dict[str, str]:
    """NCCL_HOSTID per node with --fake-hosts: NCCL reads it instead of the host's name
    and boot id (NCCL's getHostHash, src/misc/utils.cc), so nodes on one machine become
    separate NCCL hosts joined by the network transport. Each also gets its own GPUs
    (CUDA_VISIBLE_DEVICES): every node's local rank 0 would otherwise take GPU 0.

    >>> req = LaunchRequest(command=("x",), fake_hosts=True)
    >>> fake_host_env(req, 1, 2)
    {'NCCL_HOSTID': 'hpnet-fake-host1', 'CUDA_VISIBLE_DEVICES': '2,3'}
    """
    if not request.fake_hosts:
        return {}
    devices = request.visible_devices
    chosen = (
        devices[node_rank * nproc : (node_rank + 1) * nproc]
        if devices is not None
        else tuple(str(i) for i in range(node_rank * nproc, (node_rank + 1) * nproc))
    )
    return {"NCCL_HOSTID": f"hpnet-fake-host{node_rank}", "CUDA_VISIBLE_DEVICES": ",".join(chosen)}


def _nodes(context: Context, request: LaunchRequest) -> tuple[int, str, int]:
    """(nodes, master address, processes per node)."""
    hosts = context.hosts
    slots = {h.slots for h in hosts if h.slots}
    nproc = request.nproc_per_node or context.nproc_per_node
    if nproc is None and len(slots) == 1:
        nproc = slots.pop()
    if request.master_addr:
        master = request.master_addr
    elif context.master_addr:
        master = context.master_addr
    elif hosts:
        master = hosts[0].name
    else:
        master = "127.0.0.1"
    return context.num_nodes, master, nproc or 1


def _refuse_nesting(context: Context) -> None:
    if context.inside_job:
        raise InputError(
            f"already running inside a {context.kind} job ({', '.join(context.evidence)})",
            code="nested-launch",
            where="hpnet launch",
            fix="run the command itself in this job's ranks, or launch from outside the job",
        )


def _per_node(
    context: Context, local_names: frozenset[str]
) -> list[tuple[int, str | None, str | None]]:
    """(node rank, host to ssh to or None for here, host name) for each node hpnet
    starts: every listed host, or this node alone in a pod-per-node platform."""
    if context.kind in ("kubeflow", "local"):
        return [(context.node_rank or 0, None, None)]
    out: list[tuple[int, str | None, str | None]] = []
    for rank, host in enumerate(context.hosts):
        out.append((rank, None if is_local(host.name, local_names) else host.name, host.name))
    return out


def is_local(name: str, local_names: frozenset[str]) -> bool:
    """This machine: one of its names or addresses, or any loopback address.

    >>> is_local("127.0.0.2", frozenset()), is_local("vm", frozenset({"vm"}))
    (True, True)
    >>> is_local("n2", frozenset())
    False
    """
    import ipaddress  # noqa: PLC0415

    if name in local_names or name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def build_torchrun(
    request: LaunchRequest,
    context: Context,
    propagation: Propagation,
    *,
    local_names: frozenset[str],
) -> LaunchPlan:
    _refuse_nesting(context)
    nnodes, master, nproc = _nodes(context, request)
    port = context.master_port or request.port
    target = torchrun_target(request.command)
    notes: list[str] = []
    env = dict(propagation.env)
    if context.kind == "slurm":
        # one agent per node as a Slurm step: the same argv everywhere, c10d numbers them
        argv = (
            "srun", f"--nodes={nnodes}", "--ntasks-per-node=1", "--kill-on-bad-exit=1",
            "--export=ALL", "torchrun", "--nnodes", str(nnodes), "--nproc-per-node", str(nproc),
            "--rdzv-backend", "c10d", "--rdzv-endpoint", f"{master}:{port}",
            "--rdzv-id", request.job_name, *target,
        )  # fmt: skip
        srun = NodeCommand(label="srun (one torchrun per node)", host=None, argv=argv, env=env)
        return LaunchPlan(
            engine="torchrun", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
            commands=(srun,), files=(), propagation=propagation, master_port=port,
        )  # fmt: skip
    commands = []
    for rank, ssh_host, name in _per_node(context, local_names):
        node_env = {**env, **fake_host_env(request, rank, nproc)}
        argv = (
            "torchrun", "--nnodes", str(nnodes), "--nproc-per-node", str(nproc),
            "--node-rank", str(rank), "--master-addr", master, "--master-port", str(port),
            *target,
        )  # fmt: skip
        commands.append(
            NodeCommand(
                label=f"node {rank}" + (f" ({name})" if name and not ssh_host else ""),
                host=ssh_host,
                argv=argv,
                env=node_env,
                ssh_port=request.ssh_port,
                workdir=request.workdir if ssh_host else None,
            )
        )
    if context.kind == "kubeflow":
        notes.append(
            f"this pod is node {context.node_rank or 0} of {nnodes}: every pod of the job "
            "runs the same hpnet launch"
        )
    return LaunchPlan(
        engine="torchrun", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
        commands=tuple(commands), files=(), propagation=propagation, notes=tuple(notes),
        master_port=port,
    )  # fmt: skip


def build_env(
    request: LaunchRequest,
    context: Context,
    propagation: Propagation,
    *,
    local_names: frozenset[str],
) -> LaunchPlan:
    """One process per node with torch's env:// variables (the Scnet guide's launch)."""
    _refuse_nesting(context)
    nnodes, master, nproc = _nodes(context, request)
    if nproc != 1:
        raise InputError(
            f"the env engine starts one process per node, not {nproc}",
            code="usage",
            where=f"--nproc-per-node {nproc}",
            fix="use --engine torchrun for several processes per node",
        )
    port = context.master_port or request.port
    commands = []
    for rank, ssh_host, name in _per_node(context, local_names):
        env = {
            "MASTER_ADDR": master,
            "MASTER_PORT": str(port),
            "WORLD_SIZE": str(nnodes),
            "RANK": str(rank),
            **propagation.env,
            **fake_host_env(request, rank, 1),
        }
        commands.append(
            NodeCommand(
                label=f"node {rank}" + (f" ({name})" if name and not ssh_host else ""),
                host=ssh_host,
                argv=request.command,
                env=env,
                ssh_port=request.ssh_port,
                workdir=request.workdir if ssh_host else None,
            )
        )
    # a forwarded MASTER_PORT (--env MASTER_PORT=...) is the one rank 0 listens on
    meet = propagation.env.get("MASTER_PORT", str(port))
    return LaunchPlan(
        engine="env", context=context.kind, num_nodes=nnodes, nproc_per_node=1,
        commands=tuple(commands), files=(), propagation=propagation,
        master_port=int(meet) if meet.isdigit() else None,
    )  # fmt: skip
