"""Slurm plans: an sbatch script and the srun line in it, or the srun line alone
inside an allocation (salloc, or an sbatch script that runs ``hpnet launch``).

Every task gets torch's env:// variables from Slurm's own (srun(1) "OUTPUT
ENVIRONMENT VARIABLES": SLURM_PROCID, SLURM_LOCALID, SLURM_NTASKS) through a fixed
wrapper, ``bash -c 'export RANK=$SLURM_PROCID ...; exec "$@"'``, which takes the
user's command as arguments: nothing of the user's is ever inside a shell string.
MASTER_ADDR is the allocation's first node (``scontrol show hostnames``).
"""

from __future__ import annotations

import os
import shlex

from hpnet.errors import InputError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation, looks_secret
from hpnet.launch.plan import GeneratedFile, LaunchPlan, LaunchRequest, NodeCommand

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
        env = {**propagation.env, "MASTER_ADDR": master, "MASTER_PORT": str(request.master_port)}
        argv = tuple(_srun(nnodes, nproc, gpus, request.command))
        command = NodeCommand(label="srun in this allocation", host=None, argv=argv, env=env)
        return LaunchPlan(
            engine="slurm", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
            commands=(command,), files=(), propagation=propagation,
        )  # fmt: skip
    nnodes = num_nodes or context.num_nodes
    notes = []
    if any(looks_secret(name) for name in propagation.env):
        notes.append("the batch script holds the values of the secrets named with --env")
    script = _script(request, propagation, nnodes, nproc, gpus)
    path = os.path.join(request.output_dir, f"{request.job_name}.sbatch")
    file = GeneratedFile(path=path, content=script, purpose="the batch script", mode=0o755)
    command = NodeCommand(
        label="sbatch (waits for the job)", host=None, argv=("sbatch", "--wait", path), env={}
    )
    return LaunchPlan(
        engine="slurm", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
        commands=(command,), files=(file,), propagation=propagation, notes=tuple(notes),
    )  # fmt: skip


def _script(
    request: LaunchRequest, propagation: Propagation, nnodes: int, nproc: int, gpus: bool
) -> str:
    lines = [
        "#!/bin/bash",
        "# written by hpnet launch: one task per GPU, the resolved NCCL environment on every task",
        f"#SBATCH --job-name={request.job_name}",
        f"#SBATCH --nodes={nnodes}",
        f"#SBATCH --ntasks-per-node={nproc}",
    ]
    if gpus:
        lines.append(f"#SBATCH --gpus-per-node={nproc}")
    lines += ["set -euo pipefail", ""]
    for name, value in propagation.env.items():
        origin = propagation.origins.get(name, "")
        lines.append(f"export {name}={shlex.quote(value)}  # {origin}")
    lines += [
        'export MASTER_ADDR="$(scontrol show hostnames "$SLURM_JOB_NODELIST" | head -n 1)"',
        f"export MASTER_PORT={request.master_port}",
        "",
        shlex.join(_srun(nnodes, nproc, gpus, request.command)),
    ]
    return "\n".join(lines) + "\n"
