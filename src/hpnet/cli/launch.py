"""``hpnet launch``: start a job across nodes on torchrun, mpirun, Slurm or Kubernetes."""

from __future__ import annotations

import argparse
import os

DESCRIPTION = """\
Start a job on an existing engine with the right environment on every rank: the
profile's NCCL settings resolved here, variables with the allowed prefixes (NCCL_,
UCX_, NVSHMEM_, TORCH_NCCL_, CUDA_, GLOO_, the profile's own), and --env; never a
secret unless named. The context (Slurm, mpirun, a PyTorchJob or PAI-DLC pod, an MPI
Operator launcher, ModelArts, --hosts, --hostfile) decides the nodes.

  hpnet launch --nproc-per-node 8 -- python train.py            here (torchrun)
  hpnet launch --hosts n1,n2 --nproc-per-node 8 -- python train.py   torchrun over ssh
  hpnet launch --engine mpirun --hostfile hosts --profile ecs-erdma --iface eth0 \\
      --nproc-per-node 8 --dry-run -- ./build/all_reduce_perf -b 1B -e 512M -f 2 -g 1
  hpnet launch --engine slurm --nnodes 2 --nproc-per-node 8 -- hpnet bench
  hpnet launch --engine k8s --image IMG --nnodes 2 --nproc-per-node 8 -- hpnet bench

--dry-run prints exactly what would run and be written (secrets redacted), as a
shell script whose only executable lines are the commands. A secret named with --env
never goes in a command line or a file others can read: ssh carries it on its stdin,
sbatch and mpirun in their environment, Kubernetes in a Secret of its own. The exit
code is the job's: the first failing node's code (4 when it is 2 or 3, the codes hpnet
keeps for its own usage and internal errors), the verdict of hpnet check --all or
hpnet isolate run as the job (1: not ready), 124 after --timeout, 2 when another
process holds the rendezvous port (error[port-taken]: choose another --master-port).

--hang-capture DIR turns on what a hang needs to leave evidence (Flight Recorder,
dumped on a watchdog timeout, to DIR; NCCL's INFO log per process in DIR) and, when
the job fails, prints hpnet hang's verdict on DIR and the nodes' logs.
"""


#: hpnet launch's exit when a rank exited 2 or 3, the codes hpnet keeps for its own usage
#: and internal errors (docs/exit-codes.md); any other code is the rank's
JOB_FAILED_WITH_RESERVED = 4


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("command", nargs="*", metavar="CMD", help="after --: what every rank runs")
    where = parser.add_argument_group("nodes")
    where.add_argument(
        "--engine", help="torchrun, env (one process per node, torch env://), mpirun, slurm, k8s"
    )
    where.add_argument("--hosts", metavar="A,B", help="the nodes (host or host:slots)")
    where.add_argument("--hostfile", metavar="FILE", help="Open MPI / DeepSpeed hostfile")
    where.add_argument(
        "--nnodes", type=int, metavar="N", help="nodes (Slurm without an allocation, k8s)"
    )
    where.add_argument("--nproc-per-node", type=int, metavar="N", help="ranks per node (GPUs)")
    where.add_argument("--master-addr", metavar="ADDR", help="rendezvous address (default: node 0)")
    where.add_argument(
        "--master-port",
        type=int,
        metavar="PORT",
        help="rendezvous port (default: a free one when every node is this machine, else 29500)",
    )
    where.add_argument("--ssh-port", type=int, metavar="PORT", help="sshd port on the nodes")
    where.add_argument("--iface", metavar="IF", help="mpirun's btl_tcp_if_include")
    where.add_argument("--workdir", metavar="DIR", help="remote nodes cd here (default: this dir)")
    where.add_argument(
        "--fake-hosts",
        action="store_true",
        help="a distinct NCCL_HOSTID per node: nodes on one machine talk through NCCL's "
        "network transport (torchrun and env engines)",
    )
    env = parser.add_argument_group("environment")
    env.add_argument(
        "--profile", metavar="NAME", help="resolve and forward this profile's settings"
    )
    env.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="K=V",
        help="set K=V (or forward K) on every rank",
    )
    env.add_argument(
        "--forward-prefix", action="append", default=[], metavar="P", help="forward P* too"
    )
    k8s = parser.add_argument_group("Kubernetes")
    k8s.add_argument("--image", metavar="IMAGE", help="the container image")
    k8s.add_argument("--k8s-kind", choices=("pytorchjob", "mpijob"), default="pytorchjob")
    k8s.add_argument(
        "--resource", action="append", default=[], metavar="K=N",
        help="extra resource limit per pod (rdma/hca_shared_devices_a=1)",
    )  # fmt: skip
    k8s.add_argument("--host-network", action="store_true", help="pods on the host's network")
    k8s.add_argument("--shm-size", default="16Gi", metavar="SIZE", help="memory-backed /dev/shm")
    k8s.add_argument("--namespace", metavar="NS")
    run = parser.add_argument_group("run")
    run.add_argument(
        "--job-name", default="hpnet", metavar="NAME",
        help="names the job and its files: letters, digits, '_', '.', '-' (k8s: lowercase)",
    )  # fmt: skip
    run.add_argument("--output-dir", default=".", metavar="DIR", help="where files are written")
    run.add_argument("--logs", metavar="DIR", help="keep each node command's output in DIR")
    run.add_argument(
        "--hang-capture",
        metavar="DIR",
        help="make a hang leave evidence in DIR (Flight Recorder on, dumped on a timeout; "
        "NCCL's INFO log per process) and, if the job fails, say why (hpnet hang); DIR on a "
        "filesystem every node shares",
    )
    run.add_argument("--timeout", type=float, default=0, metavar="S", help="end the job after S s")
    run.add_argument("--cpu", action="store_true", help="no GPUs (Slurm and k8s requests)")
    run.add_argument("--dry-run", action="store_true", help="print the plan, run nothing")
    run.add_argument("--json", action="store_true", help="print the plan (or the outcome) as JSON")


def run(ns: argparse.Namespace) -> int:
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.launch.engines import check_engine  # noqa: PLC0415
    from hpnet.launch.hosts import check_host  # noqa: PLC0415
    from hpnet.launch.plan import LaunchRequest  # noqa: PLC0415
    from hpnet.launch.prepare import LaunchOptions, prepare  # noqa: PLC0415

    if ns.hosts and ns.hostfile:
        raise UsageError(
            "--hosts and --hostfile both given", code="usage", where="hpnet launch", fix="pick one"
        )
    for flag, value in (("--nproc-per-node", ns.nproc_per_node), ("--nnodes", ns.nnodes)):
        if value is not None and value < 1:
            raise UsageError(
                "must be 1 or more", code="usage", where=f"{flag} {value}", fix=f"{flag} 1"
            )
    resources = []
    for item in ns.resource:
        key, sep, value = item.partition("=")
        if not sep or not key or not value:
            raise UsageError(
                "not K=N", code="usage", where=f"--resource {item}", fix="--resource rdma/hca=1"
            )
        resources.append((key, value))
    request = LaunchRequest(
        command=tuple(ns.command),
        engine=check_engine(ns.engine) if ns.engine else None,
        nproc_per_node=ns.nproc_per_node,
        master_port=ns.master_port,
        master_addr=check_host(ns.master_addr, where="--master-addr") if ns.master_addr else None,
        ssh_port=ns.ssh_port,
        workdir=ns.workdir or os.getcwd(),
        job_name=ns.job_name,
        profile=ns.profile,
        iface=ns.iface,
        hostfile_path=ns.hostfile if ns.engine == "mpirun" else None,
        output_dir=ns.output_dir,
        image=ns.image,
        host_network=ns.host_network,
        shm_size=ns.shm_size,
        resources=tuple(resources),
        namespace=ns.namespace,
        kind=ns.k8s_kind,
        fake_hosts=ns.fake_hosts,
        visible_devices=(
            tuple(d.strip() for d in os.environ["CUDA_VISIBLE_DEVICES"].split(","))
            if "CUDA_VISIBLE_DEVICES" in os.environ
            else None
        ),
    )
    env_args = list(ns.env)
    capture = None
    if ns.hang_capture:
        from hpnet.launch.hangcapture import capture_dir, capture_env  # noqa: PLC0415

        capture = (
            capture_dir(ns.hang_capture) if not ns.dry_run else os.path.abspath(ns.hang_capture)
        )
        env_args += capture_env(capture, env_args, os.environ)
    options = LaunchOptions(
        request=request,
        hosts=ns.hosts,
        hostfile=ns.hostfile,
        num_nodes=ns.nnodes,
        env_args=tuple(env_args),
        prefixes=tuple(ns.forward_prefix),
        gpus=not ns.cpu,
    )
    plan = prepare(options, os.environ)
    if ns.dry_run or not plan.commands:
        if not ns.dry_run:  # Kubernetes: the manifest is the deliverable
            from hpnet.launch.execute import write_files  # noqa: PLC0415

            write_files(plan)
        if ns.json:
            from hpnet.jsonout import dumps, envelope  # noqa: PLC0415
            from hpnet.launch.plan import plan_data  # noqa: PLC0415

            print(dumps(envelope(plan_data(plan), schema_version=1)))
        else:
            from hpnet.launch.plan import render_plan  # noqa: PLC0415

            print(render_plan(plan), end="")
        return 0
    from hpnet.launch.execute import execute  # noqa: PLC0415

    outcome = execute(
        plan,
        environ=os.environ,
        timeout_seconds=ns.timeout if ns.timeout > 0 else float("inf"),
        log_dir=ns.logs,
    )
    if capture is not None and outcome.exit_code != 0:
        from hpnet.launch.hangcapture import diagnose  # noqa: PLC0415

        said = diagnose([capture, outcome.log_dir])
        print(
            f"hpnet launch: the job failed; what it left in {capture}:\n{said}"
            if said
            else f"hpnet launch: the job failed and left no Flight Recorder dump or rank error "
            f"line in {capture} or {outcome.log_dir}",
            flush=True,
        )
    if ns.json:
        import dataclasses  # noqa: PLC0415

        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        print(dumps(envelope(dataclasses.asdict(outcome), schema_version=1)))
    # a job that ran to its end with a verdict (hpnet check --all, hpnet isolate: rank 0
    # exits 0 and says its code, launch/verdict.py) exits with that code, without an error
    code = outcome.exit_code
    if code and (outcome.failed or outcome.detail):
        import sys  # noqa: PLC0415

        # a rank's own 2 or 3 would read as hpnet's usage or internal error: 4 says "a
        # rank failed with one of those", the line below names which (docs/exit-codes.md)
        code = JOB_FAILED_WITH_RESERVED if code in (2, 3) else code

        what = outcome.failed or "the job failed"
        detail = f": {outcome.detail}" if outcome.detail else ""
        others = "; the other nodes were ended" if len(plan.commands) > 1 else ""
        print(
            f"error[job-failed]: {what}{detail}{others} — hpnet exits with "
            f"{code} — logs in {outcome.log_dir}",
            file=sys.stderr,
        )
    return code
