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
named with ``--env`` (by name, or by a credential in the value) go the same way, by
name.

ModelArts' ``-tune`` file is read by Open MPI itself, and not as a shell would: Open
MPI 4.x lexes it with ``opal/util/keyval/keyval_lex.l`` (a ``-x NAME=`` value ends at
the first space, tab, ``\\f`` or ``\\v``, and the values are joined with ``;`` into
``mca_base_env_list``, which is split on ``;`` again); Open MPI 5 (PRRTE's
``schizo_ompi.c`` ``process_tune_files``) splits each line on spaces, strips a
``"`` from either end of every word and reads lines with ``fgets`` into 2048 bytes, so
that a longer line goes on as a new one. No quoting survives both, so a value that
holds any of those characters, or that makes a line too long, never goes in the file:
it goes by name on mpirun's command line instead (``-x NAME``: mpirun, which runs on
worker-0 with worker-0's environment, copies the value itself, whatever it holds).

The hostfile hpnet writes has one ``<host> slots=<N>`` line per node. Open MPI reads
it with ``orte/util/hostfile/hostfile_lex.l`` (PRRTE: ``src/util/hostfile/
hostfile_lex.l``): a line feed ends a host's entry, blanks separate its words, ``#``
starts a comment and ``slots=`` is a keyword; the names passed
:func:`hpnet.launch.hosts.check_host` (letters, digits, ``-_.:%`` of an address), so
each line is one host with one count, whatever the user gave.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

from hpnet.errors import InputError
from hpnet.launch.context import Context
from hpnet.launch.envprop import Propagation, is_secret
from hpnet.launch.plan import GeneratedFile, LaunchPlan, LaunchRequest, NodeCommand
from hpnet.launch.validate import check_job_name

__all__ = ["build_mpirun", "tune_line", "tune_lines"]

#: what the guides always forward by name
ALWAYS = ("PATH", "LD_LIBRARY_PATH")


def _forward_args(propagation: Propagation, skip: tuple[str, ...] = ()) -> list[str]:
    args = []
    for name, value in propagation.env.items():
        if name in skip:
            continue
        by_name = propagation.origins.get(name, "").startswith("environment") or is_secret(
            name, value
        )
        args += ["-x", name if by_name else f"{name}={value}"]
    return args


def _rendezvous(request: LaunchRequest, context: Context, propagation: Propagation) -> list[str]:
    """``-x MASTER_ADDR=... -x MASTER_PORT=...``: where a torch program's ranks meet
    (torch.distributed's env:// rendezvous; nccl-tests needs none, MPI is its
    bootstrap). Rank 0 runs on the hostfile's first host (mpirun fills the hosts in
    order, by slot or ``-npernode``), so that is the address; ``--master-addr`` / the
    platform's wins, and so does a value the user forwards. The host passed
    :func:`hpnet.launch.hosts.check_host`; the port is an int."""
    if request.master_addr:
        master = request.master_addr
    elif context.master_addr:
        master = context.master_addr
    else:
        master = context.hosts[0].name if context.hosts else "127.0.0.1"
    port = context.master_port or request.port
    wanted = {"MASTER_ADDR": master, "MASTER_PORT": str(port)}
    return [a for k, v in wanted.items() if k not in propagation.env for a in ("-x", f"{k}={v}")]


def _hostfile(
    context: Context, request: LaunchRequest, nproc: int
) -> tuple[str, tuple[GeneratedFile, ...]]:
    if request.hostfile_path:
        return request.hostfile_path, ()
    names = [h.name for h in context.hosts] or ["localhost"]  # check_host'ed: one word each
    path = os.path.join(request.output_dir, f"{check_job_name(request.job_name)}.hostfile")
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
    extra_env: dict[str, str] = {}
    meet = _rendezvous(request, context, propagation)
    if style == "ecs-erdma":
        argv = [
            "mpirun", *root, "-np", np_, "-npernode", str(nproc), "--hostfile", hostfile,
            *(a for name in always for a in ("-x", name)), *_forward_args(propagation, ALWAYS),
            *meet, "--bind-to", "none", *iface,
        ]  # fmt: skip
    elif style == "modelarts":
        tune = _tune_path(request)
        # Open MPI's tune file holds command-line options, one per line (mpirun(1),
        # "--tune"): worker-0's variables reach every worker as -x NAME=VALUE, or as
        # -x NAME on the command line when no tune line can carry the value
        lines, by_name = tune_lines(forwarded_prefix_env or {})
        files += (
            GeneratedFile(
                path=tune,
                content="".join(f"{line}\n" for line in lines),
                purpose="worker-0's environment for every worker (ModelArts' TUNE_ENV_FILE)",
            ),
        )
        # what the command line already forwards (PATH only through the tune file)
        given = {*(n for n in always if n != "PATH"), *propagation.env}
        by_name = {k: v for k, v in by_name.items() if k not in given}
        argv = [
            "mpirun", *root, "-np", np_, "-hostfile", hostfile, *rsh, "-tune", tune,
            "-bind-to", "none", "-map-by", "slot",
            *(a for name in always if name != "PATH" for a in ("-x", name)),
            *_forward_args(propagation, ALWAYS),
            *(a for name in by_name for a in ("-x", name)), *meet,
            "-mca", "pml", "ob1", "-mca", "btl", "^openib", "-mca", "plm_rsh_no_tree_spawn", "true",
            *iface,
        ]  # fmt: skip
        extra_env = by_name
        if by_name:
            notes.append(
                f"{', '.join(by_name)} go(es) by name on mpirun's command line (-x NAME): "
                "the value holds what Open MPI's tune file cannot carry"
            )
        notes.append("ModelArts runs this on worker-0; its sshd port is SSHD_PORT (--ssh-port)")
    else:
        argv = [
            "mpirun", *root, "-np", np_, "-npernode", str(nproc), "--hostfile", hostfile,
            "--bind-to", "none", "-mca", "pml", "ob1", "-mca", "btl", "^openib", *iface, *rsh,
            *(a for name in always for a in ("-x", name)), *_forward_args(propagation, ALWAYS),
            *meet,
        ]  # fmt: skip
    argv += list(request.command)
    # mpirun copies "-x NAME" values from its own environment: give it the forwarded ones
    env = {**propagation.env, **extra_env}
    command = NodeCommand(label="mpirun", host=None, argv=tuple(argv), env=env)
    # rank 0 of a torch program listens there: a forwarded MASTER_PORT wins, as in meet
    port = propagation.env.get("MASTER_PORT", str(context.master_port or request.port))
    return LaunchPlan(
        engine="mpirun", context=context.kind, num_nodes=nnodes, nproc_per_node=nproc,
        commands=(command,), files=files, propagation=propagation, notes=tuple(notes),
        master_port=int(port) if port.isdigit() else None,
    )  # fmt: skip


#: what ends or splits a ``-x NAME=VALUE`` word in the tune file (module docstring)
_TUNE_UNSAFE = re.compile(r"[ \t\f\v\r\n;\x00-\x08\x0e-\x1f\x7f]")
#: PRRTE reads a line with fgets into 2048 bytes, line feed and NUL included
_TUNE_LINE_BYTES = 2046


def tune_line(name: str, value: str) -> str | None:
    """``-x NAME=VALUE`` as Open MPI's tune file reads it back unchanged, or None when
    no line can carry the value (the module docstring says why).

    >>> tune_line("MA_JOB_DIR", "/home/ma-user/modelarts")
    '-x MA_JOB_DIR=/home/ma-user/modelarts'
    >>> tune_line("MA_X", "a -x INJECTED=yes") is None
    True
    """
    line = f"-x {name}={value}"
    if (
        _TUNE_UNSAFE.search(value)
        or value.startswith(("'", '"'))  # Open MPI 5 strips a quote at either end
        or value.endswith(("'", '"'))
        or len(line.encode("utf-8")) > _TUNE_LINE_BYTES
    ):
        return None
    return line


def tune_lines(env: Mapping[str, str]) -> tuple[list[str], dict[str, str]]:
    """The tune file's lines for ``env``, and the variables no line can carry (they go
    by name on mpirun's command line: ``-x NAME`` copies mpirun's own value).

    >>> tune_lines({"MA_A": "1", "MA_B": "x y"})
    (['-x MA_A=1'], {'MA_B': 'x y'})
    """
    lines: list[str] = []
    by_name: dict[str, str] = {}
    for name, value in env.items():
        line = tune_line(name, value)
        if line is None:
            by_name[name] = value
        else:
            lines.append(line)
    return lines, by_name


def _tune_path(request: LaunchRequest) -> str:
    path = os.path.join(request.output_dir, f"{check_job_name(request.job_name)}.tune")
    if "," in path or not path.strip() == path:
        # mpirun splits -tune's argument on commas (a list of files)
        raise InputError(
            f"Open MPI would split the tune file's path at its comma: {path!r}",
            code="bad-path",
            where=f"--output-dir {request.output_dir}",
            fix="choose an --output-dir without commas",
        )
    return path
