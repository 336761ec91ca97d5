"""``hpnet image dockerfile``: flags -> :func:`hpnet.image.dockerfile.plan_dockerfile`."""

from __future__ import annotations

import argparse
import shlex

#: of `hpnet image dockerfile --json` (docs/image-schema.md)
SCHEMA_VERSION = 1

DESCRIPTION = """\
A Dockerfile that gives an image what the profile's network needs on a distribution:
the guide's RDMA packages (its repository, its removals, its installer or plugin),
each step saying where it comes from, and a last step that fails the build when the
verbs libraries, the provider for the platform's NICs, or the CUDA / NCCL versions the
guide requires are missing. A release the guide does not cover is an error.

  hpnet image dockerfile --profile pai-dlc-erdma --base nvidia/cuda:12.4.1-devel-ubuntu22.04
  hpnet image dockerfile --profile ecs-erdma --distro centos7 --fragment >> Dockerfile
  hpnet image dockerfile --profile pai-lingjun --base my/img:1 --distro ubuntu20.04 -o Dockerfile
"""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", required=True, help="the platform profile (hpnet profiles)")
    parser.add_argument("--base", metavar="IMAGE", help="the image to build on (FROM)")
    parser.add_argument(
        "--distro",
        metavar="NAME",
        help="the base image's distribution (ubuntu22.04, centos7, alinux3, ...); "
        "default: read from --base's name when it says",
    )
    parser.add_argument(
        "--fragment",
        action="store_true",
        help="no FROM: steps to append to an existing Dockerfile (needs --distro)",
    )
    parser.add_argument("-o", "--output", metavar="FILE", help="write the Dockerfile to FILE")
    parser.add_argument("--json", action="store_true", help="print the steps as JSON")


def run(namespace: argparse.Namespace) -> int:
    from hpnet import __version__  # noqa: PLC0415
    from hpnet.distros import distro_from_image, get_distro  # noqa: PLC0415
    from hpnet.errors import UsageError  # noqa: PLC0415
    from hpnet.image.dockerfile import check_image_ref, plan_dockerfile  # noqa: PLC0415
    from hpnet.profiles import get_profile  # noqa: PLC0415

    if namespace.json and namespace.output:
        raise UsageError(
            "--json prints to standard output; -o writes the Dockerfile",
            code="usage",
            where="hpnet image dockerfile",
            fix="give one of them",
        )
    if namespace.fragment == bool(namespace.base):
        raise UsageError(
            "give --base IMAGE for a Dockerfile, or --fragment for steps to append",
            code="usage",
            where="hpnet image dockerfile",
            fix="one of the two",
        )
    profile = get_profile(namespace.profile)
    base = check_image_ref(namespace.base) if namespace.base else None
    named = distro_from_image(base) if base else None
    if namespace.distro and named and namespace.distro != named:
        raise UsageError(
            f"--distro {namespace.distro} but the base image {base!r} is {named}",
            code="usage",
            where="--distro",
            fix=f"use --distro {named}, or the base image you mean",
        )
    name = namespace.distro or named
    if name is None:
        raise UsageError(
            "which distribution is the image built on?"
            + (f" {namespace.base!r} does not say" if namespace.base else ""),
            code="usage",
            where="--distro",
            fix="add --distro (ubuntu22.04, ubuntu20.04, centos7, alinux3, ...)",
        )
    plan = plan_dockerfile(
        profile,
        get_distro(name),
        base=namespace.base,
        command_line=shlex.join(namespace.command_line),
        version=__version__,
    )
    if namespace.json:
        import dataclasses  # noqa: PLC0415

        from hpnet.jsonout import dumps, envelope  # noqa: PLC0415

        body = dataclasses.asdict(plan)
        print(dumps(envelope(body, schema_version=SCHEMA_VERSION, dockerfile=plan.render())))
        return 0
    text = plan.render()
    if namespace.output:
        _write(namespace.output, text)
    else:
        print(text, end="")
    return 0


def _write(path: str, text: str) -> None:
    from hpnet.errors import InputError  # noqa: PLC0415

    try:
        with open(path, "w", encoding="utf-8") as handle:
            handle.write(text)
    except OSError as exc:
        raise InputError(
            f"cannot write the Dockerfile ({exc.strerror})",
            code="unwritable",
            where=path,
            fix="give a writable path to -o",
        ) from None
