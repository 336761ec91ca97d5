"""Where a launch runs: which scheduler or platform started this process, which nodes
the job has, and which of them this is. A pure function of the environment (and of a
hostfile's text, which the caller reads).

What each platform sets, and where that is written down:

* Slurm: ``SLURM_JOB_ID``, ``SLURM_JOB_NODELIST`` (compressed), ``SLURM_NODEID``,
  ``SLURM_GPUS_ON_NODE``; a job step adds ``SLURM_STEP_ID`` and ``SLURM_PROCID``
  (sbatch(1), srun(1) "OUTPUT ENVIRONMENT VARIABLES").
* Open MPI's mpirun: ``OMPI_COMM_WORLD_RANK / SIZE / LOCAL_RANK`` in every rank (mpirun(1)).
* Kubeflow PyTorchJob: ``MASTER_ADDR``, ``MASTER_PORT``, ``WORLD_SIZE`` (replicas x
  nprocPerNode), ``RANK`` (the replica's index, a node rank), ``PET_NNODES``,
  ``PET_NPROC_PER_NODE``, ``PET_NODE_RANK`` (training-operator
  ``pkg/controller.v1/pytorch/envvar.go`` setPodEnv). PAI-DLC sets the first four the
  same way; without ``PET_NNODES``, ``WORLD_SIZE`` counts nodes (its and older
  PyTorchJobs' convention).
* MPI Operator (MPIJob v2beta1): the launcher pod's hostfile ``/etc/mpi/hostfile``,
  named by ``OMPI_MCA_orte_default_hostfile``; lines ``<pod>.<svc> slots=N``.
* Huawei ModelArts: ``VC_WORKER_HOSTS`` (comma-separated), ``VC_TASK_INDEX``,
  ``VC_WORKER_NUM``, ``MA_NUM_GPUS`` (seed 003, and the ModelArts environment
  variable reference).
* Inside torchrun: ``TORCHELASTIC_RUN_ID``, ``LOCAL_RANK``, ``GROUP_RANK``.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Literal

from hpnet.errors import InputError
from hpnet.launch.hosts import Host, check_host, expand_nodelist, parse_hostfile, parse_hosts
from hpnet.launch.validate import MAX_NODES, MAX_PROCS_PER_NODE

__all__ = ["Context", "ContextKind", "detect_context"]

ContextKind = Literal[
    "slurm", "openmpi", "torchrun", "kubeflow", "mpi-operator", "modelarts", "hostfile",
    "hosts", "local",
]  # fmt: skip
MPI_OPERATOR_HOSTFILE = "/etc/mpi/hostfile"


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Context:
    kind: ContextKind
    hosts: tuple[Host, ...]  # the job's nodes; () when the context does not list them
    #: nodes in the job when the context counts them without naming them (a PyTorchJob
    #: pod knows its peers only through MASTER_ADDR)
    num_nodes_declared: int | None = None
    node_rank: int | None = None  # this node's index among ``hosts``
    nproc_per_node: int | None = None  # what the platform allots per node (GPUs)
    master_addr: str | None = None
    master_port: int | None = None
    #: this process is already one rank of a running job (a Slurm step, an mpirun rank,
    #: a torchrun worker): launching again from here would nest jobs
    inside_job: bool = False
    evidence: tuple[str, ...] = ()  # the variables that said so, for the report

    @property
    def num_nodes(self) -> int:
        return len(self.hosts) or self.num_nodes_declared or 1


#: the largest value each platform variable hpnet reads may hold
_LIMITS = {
    "MASTER_PORT": 65535,
    "SLURM_GPUS_ON_NODE": MAX_PROCS_PER_NODE,
    "OMPI_COMM_WORLD_LOCAL_SIZE": MAX_PROCS_PER_NODE,
    "LOCAL_WORLD_SIZE": MAX_PROCS_PER_NODE,
    "PET_NPROC_PER_NODE": MAX_PROCS_PER_NODE,
    "MA_NUM_GPUS": MAX_PROCS_PER_NODE,
    "PET_NNODES": MAX_NODES,
}


def _int(environ: Mapping[str, str], name: str, *, limit: int | None = None) -> int | None:
    """A platform's number (ASCII digits; anything else is as if unset), within the
    bounds a launch can use: a count of 10**20 or a port of 70000 is refused."""
    value = environ.get(name, "").strip()
    if not (value.isascii() and value.isdigit()):
        return None
    number = int(value) if len(value) <= 12 else 10**12  # int() refuses 4300+ digits
    limit = limit or _LIMITS.get(name, MAX_NODES * MAX_PROCS_PER_NODE)
    if number > limit or (name == "MASTER_PORT" and number == 0):
        raise InputError(
            f"{name}={value[:20]} is out of range (at most {limit})",
            code="bad-count",
            where=name,
            fix=f"set {name} to what the platform gives, or unset it",
        )
    return number


def _master_addr(environ: Mapping[str, str]) -> str | None:
    value = environ.get("MASTER_ADDR")
    return None if value is None else check_host(value, where="MASTER_ADDR")


def _evidence(environ: Mapping[str, str], *names: str) -> tuple[str, ...]:
    return tuple(f"{n}={environ[n]}" for n in names if n in environ)


def detect_context(
    environ: Mapping[str, str],
    *,
    hosts: str | None = None,
    hostfile: tuple[str, str] | None = None,
    mpi_hostfile: str | None = None,
) -> Context:
    """The launch context. ``hosts`` (``--hosts a,b``) and ``hostfile`` (``(path,
    text)`` of ``--hostfile``) win over what the environment says; ``mpi_hostfile`` is
    the text of the MPI Operator's hostfile when the caller found one.

    >>> c = detect_context({"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "gpu[1-2]",
    ...                     "SLURM_NODEID": "1", "SLURM_GPUS_ON_NODE": "8"})
    >>> c.kind, [h.name for h in c.hosts], c.node_rank, c.nproc_per_node, c.inside_job
    ('slurm', ['gpu1', 'gpu2'], 1, 8, False)
    """
    if hosts is not None:
        return Context(kind="hosts", hosts=parse_hosts(hosts), evidence=(f"--hosts {hosts}",))
    if hostfile is not None:
        path, text = hostfile
        return Context(
            kind="hostfile",
            hosts=parse_hostfile(text, source=path),
            evidence=(f"--hostfile {path}",),
        )
    if "OMPI_COMM_WORLD_SIZE" in environ:
        return Context(
            kind="openmpi",
            hosts=(),
            nproc_per_node=_int(environ, "OMPI_COMM_WORLD_LOCAL_SIZE"),
            inside_job=True,
            evidence=_evidence(environ, "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"),
        )
    if "TORCHELASTIC_RUN_ID" in environ:
        return Context(
            kind="torchrun",
            hosts=(),
            nproc_per_node=_int(environ, "LOCAL_WORLD_SIZE"),
            node_rank=_int(environ, "GROUP_RANK"),
            master_addr=environ.get("MASTER_ADDR"),  # inside a job: refused anyway
            master_port=_int(environ, "MASTER_PORT"),
            inside_job=True,
            evidence=_evidence(environ, "TORCHELASTIC_RUN_ID", "RANK", "WORLD_SIZE"),
        )
    if "SLURM_JOB_ID" in environ and "SLURM_JOB_NODELIST" in environ:
        names = expand_nodelist(environ["SLURM_JOB_NODELIST"])
        return Context(
            kind="slurm",
            hosts=tuple(Host(name=n) for n in names),
            node_rank=_int(environ, "SLURM_NODEID"),
            nproc_per_node=_int(environ, "SLURM_GPUS_ON_NODE"),
            inside_job="SLURM_STEP_ID" in environ,
            evidence=_evidence(
                environ, "SLURM_JOB_ID", "SLURM_JOB_NODELIST", "SLURM_NODEID", "SLURM_STEP_ID"
            ),
        )
    if "VC_WORKER_HOSTS" in environ:
        return Context(
            kind="modelarts",
            hosts=parse_hosts(environ["VC_WORKER_HOSTS"], where="VC_WORKER_HOSTS"),
            node_rank=_int(environ, "VC_TASK_INDEX"),
            nproc_per_node=_int(environ, "MA_NUM_GPUS"),
            evidence=_evidence(environ, "VC_WORKER_HOSTS", "VC_TASK_INDEX", "MA_NUM_GPUS"),
        )
    if mpi_hostfile is not None:
        path = environ.get("OMPI_MCA_orte_default_hostfile", MPI_OPERATOR_HOSTFILE)
        return Context(
            kind="mpi-operator",
            hosts=parse_hostfile(mpi_hostfile, source=path),
            evidence=(f"hostfile {path}",),
        )
    if "MASTER_ADDR" in environ and "WORLD_SIZE" in environ:
        nnodes = _int(environ, "PET_NNODES")
        node_rank = _int(environ, "PET_NODE_RANK")
        if node_rank is None:
            node_rank = _int(environ, "RANK")
        if nnodes is None:
            # PAI-DLC / older PyTorchJob: WORLD_SIZE counts nodes
            nnodes = _int(environ, "WORLD_SIZE", limit=MAX_NODES)
        return Context(
            kind="kubeflow",
            hosts=(),
            num_nodes_declared=nnodes,
            node_rank=node_rank,
            nproc_per_node=_int(environ, "PET_NPROC_PER_NODE"),
            master_addr=_master_addr(environ),
            master_port=_int(environ, "MASTER_PORT"),
            evidence=_evidence(
                environ, "MASTER_ADDR", "MASTER_PORT", "WORLD_SIZE", "RANK", "PET_NNODES",
                "PET_NODE_RANK", "PET_NPROC_PER_NODE",
            ),
        )  # fmt: skip
    return Context(kind="local", hosts=(), evidence=("no scheduler variables",))
