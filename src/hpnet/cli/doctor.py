"""``hpnet doctor``: flags -> :func:`hpnet.doctor.gather.diagnose` -> a report; exit 1 on FAIL."""

from __future__ import annotations

import argparse
import dataclasses
import os

from hpnet.cli._node import add_node_arguments, read_listings

DESCRIPTION = """\
Pre-flight checks: the NCCL variables (syntax, unknown names, HCAs, GID index,
interface, transport), versions against the profile, RDMA user space, device nodes,
memlock / shm / open files, GPUDirect RDMA (module, ACS, GPU-NIC locality), port
state and mixed ports. Each check says PASS, WARN, FAIL or SKIP, with evidence and a
fix to paste; exit 1 when anything FAILs.

  hpnet doctor                                  the environment's NCCL_* on this node
  hpnet doctor --profile pai-dlc-erdma          the platform's presets, as a job there sees them
  hpnet doctor --env-file job.env --json        a job's variables
"""


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class DoctorArgs:
    profile: str | None
    env_file: str | None
    sysfs_root: str
    listings: tuple[str, ...]
    nccl_version: str | None
    json: bool


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--profile",
        help="check the profile's presets as the platform sets them "
        "(variables already in the environment win, as they would in the job)",
    )
    parser.add_argument("--env-file", metavar="FILE", help="check NAME=VALUE lines from FILE")
    add_node_arguments(parser)
    parser.add_argument("--nccl-version", metavar="X.Y.Z", help="the NCCL the job will run")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(namespace: argparse.Namespace) -> int:
    args = DoctorArgs(
        profile=namespace.profile,
        env_file=namespace.env_file,
        sysfs_root=namespace.sysfs_root,
        listings=tuple(namespace.listings),
        nccl_version=_nccl_version(namespace.nccl_version),
        json=namespace.json,
    )
    from hpnet.doctor.gather import diagnose  # noqa: PLC0415

    env_file = _read_env_file(args.env_file) if args.env_file else None
    listings = (
        read_listings(args.listings, args.sysfs_root, "hpnet doctor") if args.listings else ()
    )
    report = diagnose(
        sysfs_root=args.sysfs_root,
        listings=listings,
        profile=args.profile,
        env_file=env_file,
        environment=dict(os.environ),
        nccl_version=args.nccl_version,
    )
    from hpnet.doctor.model import redacted  # noqa: PLC0415

    report = redacted(report)  # secrets are never printed (hpnet env, hpnet launch alike)
    if args.json:
        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        body = dataclasses.asdict(report)
        print(dumps(envelope(body, schema_version=1, verdict=report.verdict)))
    else:
        from hpnet.render.doctor import render_report  # noqa: PLC0415

        print(render_report(report), end="")
    return 1 if report.verdict.value == "FAIL" else 0


def _read_env_file(path: str) -> tuple[str, str]:
    from hpnet.inputfile import FileRole, read_regular_file  # noqa: PLC0415

    # a FIFO, a device or /proc/self/mem named by mistake is an error, not a hang
    role = FileRole(
        what="an env file",
        code="env-file-unreadable",
        too_large_code="env-file-too-large",
        fix="pass a file of NAME=VALUE lines to --env-file",
    )
    data = read_regular_file(path, role, max_bytes=1 << 20)
    return path, data.decode("utf-8", errors="replace")


def _nccl_version(text: str | None) -> str | None:
    from hpnet.nccl.config import check_nccl_version  # noqa: PLC0415

    return check_nccl_version(text)
