"""``hpnet image check``: :func:`hpnet.image.facts.gather_image_facts` ->
:func:`hpnet.image.check.check_image` -> the doctor's report form; exit 1 on FAIL."""

from __future__ import annotations

import argparse
import dataclasses

#: of `hpnet image check --json` (docs/image-schema.md)
SCHEMA_VERSION = 1

DESCRIPTION = """\
Validate an image (in its build pipeline) or a running container against a profile:
libibverbs, the verbs provider for the platform's NICs and its .driver file,
librdmacm, the CUDA and NCCL versions the guide requires; in a container on a node
also an RDMA device at all, the uverbs and rdma_cm nodes, memlock, /dev/shm and the
port states. Exit 1 when anything FAILs, each failure with its fix.

  hpnet image check --profile pai-dlc-erdma --stage build     in a Dockerfile RUN step
  hpnet image check --profile ecs-erdma                       in the container (auto stage)
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="the platform profile the image is for")
    parser.add_argument(
        "--stage",
        choices=("auto", "build", "run"),
        default="auto",
        help="build: what the image carries; run: also the container's devices and limits; "
        "auto (default): run where /dev/infiniband is visible",
    )
    parser.add_argument(
        "--sysfs-root",
        dest="root",
        default="/",
        metavar="DIR",
        help="check the image unpacked (or the node recorded) under DIR instead of /",
    )
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(namespace: argparse.Namespace) -> int:
    from hpnet.image.check import check_image  # noqa: PLC0415
    from hpnet.image.facts import gather_image_facts  # noqa: PLC0415

    facts = gather_image_facts(
        root=namespace.root, profile=namespace.profile, stage=namespace.stage
    )
    report = check_image(facts)
    if namespace.json:
        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        body = dataclasses.asdict(report)
        body.pop("decisions")  # the image checks decide no variable (hpnet doctor does)
        data = envelope(
            body, schema_version=SCHEMA_VERSION, verdict=report.verdict, stage=facts.stage
        )
        print(dumps(data))
    else:
        from hpnet.render.image import render_check  # noqa: PLC0415

        print(render_check(report, facts.stage), end="")
    return 1 if report.verdict.value == "FAIL" else 0
