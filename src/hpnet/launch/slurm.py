"""Slurm plans: an sbatch script and the srun line in it, or the srun line alone
inside an allocation (salloc, or an sbatch script that runs ``hpnet launch``).

Every task gets torch's env:// variables from Slurm's own (srun(1) "OUTPUT
ENVIRONMENT VARIABLES": SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS) through a fixed
wrapper, ``bash -c 'export RANK=$SLURM_PROCID ...; exec "$@"'``, which takes the
user's command as arguments: nothing of the user's is ever inside a shell string.
MASTER_ADDR is the allocation's first node (``scontrol show hostnames``).

The script is the user's alone (0700) and holds no secret: a secret named with
``--env`` goes in sbatch's environment (sbatch ``--export=ALL`` hands it to the job),
and the script only checks that it arrived. The job name is a file name and a
``#SBATCH`` value (:func:`hpnet.launch.validate.check_job_name`).
"""

from __future__ import annotations

import os
import shlex

from hpnet.errors import InputError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation
from hpnet.launch.plan import GeneratedFile, LaunchPlan, LaunchRequest, NodeCommand
from hpnet.launch.validate import check_job_name

__all__ = ["RANK_WRAPPER", "build_slurm"]

#: maps Slurm's task variables to torch's; "$@" is the user's command, never parsed
RANK_WRAPPER = (
    "export RANK=$SLURM_PROCID LOCAL_RANK=$SLURM_LOCALID WORLD_SIZE=$SLURM_NTASKS "
    'LOCAL_WORLD_SIZE=$SLURM_NTASKS_PER_NODE; exec "$@"'
)


def _srun(nnodes: int, nproc: int, gpus: bool, command: tuple[str, ...]) -> list[str]:
    args = [
        "srun", f"--nodes={nnodes}", f"--ntasks-per-node={nproc}", "--kill-on-bad-exit=1",
        "--export=ALL",
    ]  # fmt: skip
    if gpus:
        args.append(f"--gpus-per-node={nproc}")
    return [*args, "bash", "-c", RANK_WRAPPER, "hpnet-rank", *command]


def build_slurm(
    request: LaunchRequest,
    context: Context,
    propagation: Propagation,
    *,
    num_nodes: int | None,
    gpus: bool,
) -> LaunchPlan:
    if context.inside_job:
        raise InputError(
            "already inside a Slurm job step (SLURM_STEP_ID is set)",
            code="nested-launch",
            where="hpnet launch",
            fix="run the command itself: srun already started one copy per task",
        )
    nproc = request.nproc_per_node or context.nproc_per_node or 1
    if context.kind == "slurm":
        nnodes = num_nodes or context.num_nodes
        master = context.hosts[0].name  # SLURM_JOB_NODELIST names at least one node
        env = {**propagation.env, "MASTER_ADDR": master, "MASTER_PORT": str(request.port)}
        argv = tuple(_srun(nnodes, nproc, gpus, request.command))
        command = NodeCommand(label="srun in this allocation", host=None, argv=argv, env=env)
        return LaunchPlan(
            engine="slurm", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
            commands=(command,), files=(), propagation=propagation, master_port=request.port,
        )  # fmt: skip
    nnodes = num_nodes or context.num_nodes
    notes = []
    secrets = propagation.secrets()
    if secrets:
        notes.append(
            f"{', '.join(secrets)} go(es) to the job in sbatch's environment: the batch "
            "script never holds a secret"
        )
    # --hosts names the nodes: sbatch must run there (it dropped them before, issue 26)
    nodelist = tuple(h.name for h in context.hosts) if context.kind == "hosts" else ()
    script = _script(request, propagation, nnodes, nproc, gpus, nodelist=nodelist)
    path = os.path.join(request.output_dir, f"{check_job_name(request.job_name)}.sbatch")
    file = GeneratedFile(path=path, content=script, purpose="the batch script", mode=0o700)
    argv = ("sbatch", "--wait", *(("--export=ALL",) if secrets else ()), path)
    command = NodeCommand(label="sbatch (waits for the job)", host=None, argv=argv, env=secrets)
    return LaunchPlan(
        engine="slurm", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
        commands=(command,), files=(file,), propagation=propagation, notes=tuple(notes),
    )  # fmt: skip


def _script(
    request: LaunchRequest,
    propagation: Propagation,
    nnodes: int,
    nproc: int,
    gpus: bool,
    *,
    nodelist: tuple[str, ...] = (),
) -> str:
    lines = [
        "#!/bin/bash",
        "# written by hpnet launch: one task per GPU, the resolved NCCL environment on every task",
        f"#SBATCH --job-name={check_job_name(request.job_name)}",
        f"#SBATCH --nodes={nnodes}",
        f"#SBATCH --ntasks-per-node={nproc}",
    ]
    if nodelist:  # names hpnet.launch.hosts.check_host accepted: no space, no shell word
        lines.append(f"#SBATCH --nodelist={','.join(nodelist)}")
    if gpus:
        lines.append(f"#SBATCH --gpus-per-node={nproc}")
    lines += ["set -euo pipefail", ""]
    secrets = propagation.secrets()
    for name, value in propagation.env.items():
        origin = propagation.origins.get(name, "")
        if name in secrets:  # the name alone: the value comes in sbatch's environment
            lines.append(
                f'export {name}="${{{name}?is not in the environment sbatch gave the job}}"'
                f"  # {origin}, a secret"
            )
        else:
            lines.append(f"export {name}={shlex.quote(value)}  # {origin}")
    lines += [
        'export MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
        f"export MASTER_PORT={request.port}",
        "",
        shlex.join(_srun(nnodes, nproc, gpus, request.command)),
    ]
    return "\n".join(lines) + "\n"
