"""Open MPI mpirun plans, in the shape the guides write them.

Three layouts, picked by the profile:

* ``ecs-erdma`` (seed 002, "Step 4: performance tests"): ``mpirun --allow-run-as-root
  -np 16 -npernode 8 --hostfile hostfile.txt -x PATH -x LD_LIBRARY_PATH -x
  NCCL_DEBUG=INFO --bind-to none -mca btl_tcp_if_include eth0 <program>``;
* ``modelarts`` (seed 003, "Comandos de arranque"): ``mpirun -np N -hostfile F -mca
  plm_rsh_args "-p <sshd port>" -tune <env file> -bind-to none -map-by slot -x ...
  -mca pml ob1 -mca btl ^openib -mca plm_rsh_no_tree_spawn true <program>``, where the
  env file carries worker-0's variables with the platform's prefixes;
* any other profile: the same options as ModelArts' minus its platform specifics,
  ``-npernode`` and ``btl_tcp_if_include`` when an interface is known.

Forwarding: a value hpnet resolved or ``--env`` gave goes as ``-x NAME=VALUE``; a value
this process already has (matched by prefix) as ``-x NAME``, which mpirun copies from
its own environment, so that its value never appears in the process table. Secrets
named with ``--env`` go the same way, by name.
"""

from __future__ import annotations

import os

from hpnet.errors import InputError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation, looks_secret
from hpnet.launch.plan import GeneratedFile, LaunchPlan, LaunchRequest, NodeCommand

__all__ = ["build_mpirun"]

#: what the guides always forward by name
ALWAYS = ("PATH", "LD_LIBRARY_PATH")


def _forward_args(propagation: Propagation, skip: tuple[str, ...] = ()) -> list[str]:
    args = []
    for name, value in propagation.env.items():
        if name in skip:
            continue
        by_name = propagation.origins.get(name, "").startswith("environment") or looks_secret(name)
        args += ["-x", name if by_name else f"{name}={value}"]
    return args


def _hostfile(
    context: Context, request: LaunchRequest, nproc: int
) -> tuple[str, tuple[GeneratedFile, ...]]:
    if request.hostfile_path:
        return request.hostfile_path, ()
    names = [h.name for h in context.hosts] or ["localhost"]
    path = os.path.join(request.output_dir, f"{request.job_name}.hostfile")
    text = "".join(f"{name} slots={nproc}\n" for name in names)
    return path, (GeneratedFile(path=path, content=text, purpose="mpirun's hostfile"),)


def build_mpirun(
    request: LaunchRequest,
    context: Context,
    propagation: Propagation,
    *,
    as_root: bool,
    forwarded_prefix_env: dict[str, str] | None = None,
    present: frozenset[str] = frozenset(ALWAYS),
) -> LaunchPlan:
    """``forwarded_prefix_env``: for ModelArts, worker-0's variables with the profile's
    prefixes, written to the ``-tune`` file; ``present``: which of PATH and
    LD_LIBRARY_PATH are set here (mpirun warns about ``-x`` of an unset name)."""
    always = tuple(name for name in ALWAYS if name in present)
    if context.inside_job:
        raise InputError(
            f"already running inside a {context.kind} job",
            code="nested-launch",
            where="hpnet launch",
            fix="run the command itself in this job's ranks, or launch from outside the job",
        )
    slots = {h.slots for h in context.hosts if h.slots}
    nproc = (
        request.nproc_per_node or context.nproc_per_node or (slots.pop() if len(slots) == 1 else 1)
    )
    nnodes = context.num_nodes
    hostfile, files = _hostfile(context, request, nproc)
    style = request.profile if request.profile in ("ecs-erdma", "modelarts") else "generic"
    root = ["--allow-run-as-root"] if as_root or style == "ecs-erdma" else []
    np_ = str(nnodes * nproc)
    iface = ["-mca", "btl_tcp_if_include", request.iface] if request.iface else []
    rsh = ["-mca", "plm_rsh_args", f"-p {request.ssh_port}"] if request.ssh_port else []
    notes = []
    if style == "ecs-erdma":
        argv = [
            "mpirun", *root, "-np", np_, "-npernode", str(nproc), "--hostfile", hostfile,
            *(a for name in always for a in ("-x", name)), *_forward_args(propagation, ALWAYS),
            "--bind-to", "none", *iface,
        ]  # fmt: skip
    elif style == "modelarts":
        tune = os.path.join(request.output_dir, f"{request.job_name}.tune")
        # Open MPI's tune file holds command-line options, one per line (mpirun(1),
        # "--tune"): worker-0's variables reach every worker as -x NAME=VALUE
        lines = [f"-x {k}={v}" for k, v in (forwarded_prefix_env or {}).items()]
        files += (
            GeneratedFile(
                path=tune,
                content="".join(f"{line}\n" for line in lines),
                purpose="worker-0's environment for every worker (ModelArts' TUNE_ENV_FILE)",
            ),
        )
        argv = [
            "mpirun", *root, "-np", np_, "-hostfile", hostfile, *rsh, "-tune", tune,
            "-bind-to", "none", "-map-by", "slot",
            *(a for name in always if name != "PATH" for a in ("-x", name)),
            *_forward_args(propagation, ALWAYS),
            "-mca", "pml", "ob1", "-mca", "btl", "^openib", "-mca", "plm_rsh_no_tree_spawn", "true",
            *iface,
        ]  # fmt: skip
        notes.append("ModelArts runs this on worker-0; its sshd port is SSHD_PORT (--ssh-port)")
    else:
        argv = [
            "mpirun", *root, "-np", np_, "-npernode", str(nproc), "--hostfile", hostfile,
            "--bind-to", "none", "-mca", "pml", "ob1", "-mca", "btl", "^openib", *iface, *rsh,
            *(a for name in always for a in ("-x", name)), *_forward_args(propagation, ALWAYS),
        ]  # fmt: skip
    argv += list(request.command)
    # mpirun copies "-x NAME" values from its own environment: give it the forwarded ones
    env = {k: v for k, v in propagation.env.items()}
    command = NodeCommand(label="mpirun", host=None, argv=tuple(argv), env=env)
    return LaunchPlan(
        engine="mpirun", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
        commands=(command,), files=files, propagation=propagation, notes=tuple(notes),
    )  # fmt: skip
