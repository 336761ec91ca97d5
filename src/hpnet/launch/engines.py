"""The engines, in one literal registry, and the engine a context calls for."""

from __future__ import annotations

import difflib

from hpnet.errors import UsageError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation
from hpnet.launch.plan import ENGINES, Engine, LaunchPlan, LaunchRequest

__all__ = ["build_plan", "default_engine"]

#: the engine each context launches with when --engine is not given
DEFAULT_ENGINE: dict[str, Engine] = {
    "slurm": "slurm",
    "modelarts": "mpirun",
    "mpi-operator": "mpirun",
    "kubeflow": "torchrun",
    "hosts": "torchrun",
    "hostfile": "torchrun",
    "local": "torchrun",
    "openmpi": "mpirun",
    "torchrun": "torchrun",
}


def default_engine(context: Context) -> Engine:
    return DEFAULT_ENGINE[context.kind]


def check_engine(name: str) -> Engine:
    for engine in ENGINES:
        if engine == name:
            return engine
    close = difflib.get_close_matches(name, ENGINES, n=1)
    raise UsageError(
        f"unknown engine {name!r}",
        code="unknown-engine",
        where=f"--engine {name}",
        fix=(f"did you mean {close[0]}? " if close else "") + "engines: " + ", ".join(ENGINES),
    )


def build_plan(
    request: LaunchRequest,
    context: Context,
    propagation: Propagation,
    *,
    local_names: frozenset[str],
    as_root: bool,
    num_nodes: int | None = None,
    gpus: bool = True,
    prefix_env: dict[str, str] | None = None,
    present: frozenset[str] = frozenset(),
) -> LaunchPlan:
    """The plan for ``request`` in ``context`` (pure: no file is written, nothing runs)."""
    engine = request.engine or default_engine(context)
    if engine == "torchrun":
        from hpnet.launch.torchrun import build_torchrun  # noqa: PLC0415

        return build_torchrun(request, context, propagation, local_names=local_names)
    if engine == "env":
        from hpnet.launch.torchrun import build_env  # noqa: PLC0415

        return build_env(request, context, propagation, local_names=local_names)
    if engine == "mpirun":
        from hpnet.launch.mpirun import build_mpirun  # noqa: PLC0415

        return build_mpirun(
            request,
            context,
            propagation,
            as_root=as_root,
            forwarded_prefix_env=prefix_env,
            present=present,
        )
    if engine == "slurm":
        from hpnet.launch.slurm import build_slurm  # noqa: PLC0415

        return build_slurm(request, context, propagation, num_nodes=num_nodes, gpus=gpus)
    from hpnet.launch.kubernetes import build_k8s  # noqa: PLC0415

    return build_k8s(request, context, propagation, num_nodes=num_nodes, gpus=gpus)
