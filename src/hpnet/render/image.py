"""Human rendering of ``hpnet image run-flags`` and ``hpnet image check``."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.doctor.model import Report
    from hpnet.image.runflags import RunFlags

__all__ = ["render_check", "render_run_flags"]


def render_run_flags(flags: RunFlags, form: str = "text") -> str:
    """``docker``: the flags on one line; ``k8s``: the pod settings as YAML; ``text``:
    both, each flag with why and where it comes from."""
    from hpnet.launch.kubernetes import to_yaml  # noqa: PLC0415

    line = shlex.join(flags.argv)
    pod = to_yaml({"spec": flags.pod})
    if form == "docker":
        return line + "\n"
    if form == "k8s":
        return pod
    width = max(len(f.flag) for f in flags.docker)
    lines = [
        f"hpnet image run-flags — profile {flags.profile}, node {flags.node}",
        "",
        f"docker run {line} IMAGE",
        "",
    ]
    lines += [f"  {f.flag:<{width}}  {f.why} [{f.source}]" for f in flags.docker]
    if flags.left_out:
        lines += ["", "RDMA devices left out:"] + [f"  {item}" for item in flags.left_out]
    if flags.notes:
        lines += ["", "Notes:"] + [f"  - {note}" for note in flags.notes]
    lines += ["", "Kubernetes (merge into the pod template):", ""]
    lines += ["  " + row for row in pod.splitlines()]
    return "\n".join(lines) + "\n"


def render_check(report: Report, stage: str) -> str:
    from hpnet.render.doctor import render_report  # noqa: PLC0415

    what = (
        "what the image carries"
        if stage == "build"
        else "what the image carries and what the container was given"
    )
    profile = f"profile {report.profile}" if report.profile else "no profile"
    return render_report(
        report, command="hpnet image check", scope=f"stage {stage}: {what}; {profile}"
    )
