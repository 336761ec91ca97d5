"""From a launch request and this process's world (environment, files, host names) to
a plan: detect the context, resolve the profile's NCCL environment, choose what every
rank gets, build the engine's plan. Reads, never writes."""

from __future__ import annotations

import dataclasses
import os
import socket
from collections.abc import Callable, Mapping, Sequence

from hpnet.errors import InputError
from hpnet.launch.context import MPI_OPERATOR_HOSTFILE, Context, detect_context
from hpnet.launch.engines import build_plan
from hpnet.launch.envprop import DEFAULT_PREFIXES, parse_env_args, propagate
from hpnet.launch.plan import LaunchPlan, LaunchRequest
from hpnet.launch.validate import check_request

__all__ = ["LaunchOptions", "local_names", "prepare"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class LaunchOptions:
    request: LaunchRequest
    hosts: str | None = None  # --hosts
    hostfile: str | None = None  # --hostfile path
    num_nodes: int | None = None  # --nnodes (Slurm without an allocation, Kubernetes)
    env_args: tuple[str, ...] = ()  # --env K=V / --env K
    prefixes: tuple[str, ...] = ()  # --forward-prefix, on top of the defaults
    gpus: bool = True


def _read_text(path: str, what: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(1 << 20)
    except OSError as exc:
        raise InputError(
            exc.strerror or str(exc), code="unreadable", where=path, fix=f"pass a readable {what}"
        ) from None


def local_names() -> frozenset[str]:
    """This machine's names and addresses (where a "node" needs no ssh)."""
    names = {"localhost", socket.gethostname(), socket.gethostname().split(".")[0]}
    try:
        from hpnet.node.netdevs import live_addresses  # noqa: PLC0415

        found = live_addresses()
    except Exception:  # noqa: BLE001 - psutil missing or refused: names alone still work
        found = {}
    for addresses in found.values():
        names.update(a.address for a in addresses)
    return frozenset(names)


def detect(options: LaunchOptions, environ: Mapping[str, str]) -> Context:
    hostfile = None
    if options.hostfile:
        hostfile = (options.hostfile, _read_text(options.hostfile, "hostfile"))
    mpi = None
    mpi_path = environ.get("OMPI_MCA_orte_default_hostfile", MPI_OPERATOR_HOSTFILE)
    if os.path.isfile(mpi_path) and not options.hosts and not options.hostfile:
        mpi = _read_text(mpi_path, "MPI Operator hostfile")
    return detect_context(environ, hosts=options.hosts, hostfile=hostfile, mpi_hostfile=mpi)


def _resolved(profile: str | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The profile's NCCL environment, resolved on this node, in the profile's order."""
    if profile is None:
        return {}
    from hpnet.api import resolve_env  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    resolution = resolve_env(profile, environment=dict(environ))
    values = dict(resolution.exported)
    order = [s.name for s in get_profile(profile).settings]
    ordered = {name: values[name] for name in order if name in values}
    ordered.update({k: v for k, v in values.items() if k not in ordered})
    # the profile's settings that are not NCCL's (HOROVOD_MPI_THREADS_DISABLE) travel too
    for setting in get_profile(profile).settings:
        ordered.setdefault(setting.name, environ.get(setting.name, setting.value))
    return ordered


Resolver = Callable[[str | None, Mapping[str, str]], dict[str, str]]


def prepare(
    options: LaunchOptions,
    environ: Mapping[str, str],
    *,
    names: frozenset[str] | None = None,
    as_root: bool | None = None,
    resolver: Resolver | None = None,
    find_port: Callable[[], int] | None = None,
) -> LaunchPlan:
    """The plan. ``names`` (this machine's names), ``as_root``, ``resolver`` (the
    profile's NCCL environment; default: ``hpnet env``'s resolution on this node) and
    ``find_port`` (a free port here, for a launch whose nodes are all this machine:
    :func:`hpnet.launch.rendezvous.choose_port`) are found here unless given: tests
    give them."""
    request = options.request
    if not request.command:
        raise InputError(
            "no command to launch",
            code="usage",
            where="hpnet launch",
            fix="put the command after --: hpnet launch --nproc-per-node 8 -- python train.py",
        )
    request = check_request(request, num_nodes=options.num_nodes)
    options = dataclasses.replace(options, request=request)
    context = detect(options, environ)
    profile_prefixes: tuple[str, ...] = ()
    if request.profile:
        from hpnet.profiles import get_profile  # noqa: PLC0415

        launch = get_profile(request.profile).launch
        profile_prefixes = launch.forwarded_prefixes if launch else ()
    prefixes = (*DEFAULT_PREFIXES, *options.prefixes)
    named = parse_env_args(options.env_args, environ)
    resolved = (resolver or _resolved)(request.profile, environ)
    propagation = propagate(environ, resolved=resolved, prefixes=prefixes, named=named)
    prefix_env = None
    if profile_prefixes:
        # ModelArts: worker-0's variables with the platform's prefixes, non-empty only
        carried = propagate(environ, prefixes=profile_prefixes)
        prefix_env = {k: v for k, v in carried.env.items() if v}
        propagation = dataclasses.replace(
            propagation, withheld=tuple(sorted({*propagation.withheld, *carried.withheld}))
        )
    names = local_names() if names is None else names
    from hpnet.launch.rendezvous import choose_port, free_port  # noqa: PLC0415

    chosen = choose_port(request, context, local_names=names, find=find_port or free_port)
    if chosen is not None:
        request = dataclasses.replace(request, master_port=chosen)
    plan = build_plan(
        request,
        context,
        propagation,
        local_names=names,
        as_root=(os.geteuid() == 0) if as_root is None else as_root,
        num_nodes=options.num_nodes,
        gpus=options.gpus,
        prefix_env=prefix_env,
        present=frozenset(name for name in ("PATH", "LD_LIBRARY_PATH") if name in environ),
    )
    if chosen is not None and plan.master_port == chosen:
        note = (
            f"rendezvous port {chosen}: free on this machine when planned (every node is "
            "here, as with torchrun --standalone); --master-port PORT chooses one"
        )
        plan = dataclasses.replace(plan, port_chosen=True, notes=(*plan.notes, note))
    if request.profile:
        note = (
            f"NCCL settings resolved for profile {request.profile} on {socket.gethostname()}: "
            "the other nodes must have the same devices and interfaces"
        )
        plan = dataclasses.replace(plan, notes=(note, *plan.notes))
    return plan


def split_command(argv: Sequence[str]) -> tuple[list[str], tuple[str, ...]]:
    """hpnet's own arguments and the command after ``--``."""
    if "--" in argv:
        cut = list(argv).index("--")
        return list(argv[:cut]), tuple(argv[cut + 1 :])
    return list(argv), ()
