"""Render a :class:`~hpnet.nccl.env.Resolution` for the tool that consumes it.

Each format carries exactly the variables to set (``Resolution.exported``):

* ``shell``: ``export K='V'`` lines (POSIX quoting, :func:`shlex.quote`);
* ``dotenv``: ``K="V"`` lines (double quotes, ``\\`` and ``"`` escaped);
* ``json``: every variable with value, origin, reason, source, plus the findings;
* ``mpirun``: ``-x K=V`` arguments for Open MPI (one line, shell-quoted);
* ``deepspeed``: ``.deepspeed_env`` lines ``K=V`` (DeepSpeed splits each line on its
  first ``=`` and does no unquoting, so values are written raw);
* ``k8s``: a container ``env:`` list (values as JSON strings, which YAML reads);
* ``slurm``: ``--export=ALL,K=V,...`` for srun / sbatch. Slurm separates entries
  with commas, so a value with a comma cannot be carried: that is an error.
"""

from __future__ import annotations

from hpnet.errors import UsageError
from hpnet.nccl.env import Resolution

__all__ = ["FORMATS", "explain", "render", "to_json"]

FORMATS = ("shell", "dotenv", "json", "mpirun", "deepspeed", "k8s", "slurm")
SCHEMA_VERSION = 1


def render(resolution: Resolution, fmt: str) -> str:
    """The text of ``fmt`` (one of :data:`FORMATS`), ending with a newline."""
    import json  # noqa: PLC0415 - each format imports what it needs
    import shlex  # noqa: PLC0415

    pairs = resolution.exported
    for name, value in pairs:
        if "\n" in value or "\0" in value:
            raise UsageError(
                f"the value of {name} contains a newline or NUL",
                code="bad-value",
                where=name,
                fix="set a value on one line",
            )
    if fmt == "shell":
        return "".join(f"export {name}={shlex.quote(value)}\n" for name, value in pairs)
    if fmt == "dotenv":
        return "".join(f'{name}="{_dotenv(value)}"\n' for name, value in pairs)
    if fmt == "json":
        return json.dumps(to_json(resolution), indent=2, ensure_ascii=False) + "\n"
    if fmt == "mpirun":
        args = [arg for name, value in pairs for arg in ("-x", f"{name}={value}")]
        return shlex.join(args) + "\n"
    if fmt == "deepspeed":
        return "".join(f"{name}={value}\n" for name, value in pairs)
    if fmt == "k8s":
        lines = ["env:"]
        for name, value in pairs:
            lines += [f"- name: {name}", f"  value: {json.dumps(value)}"]
        return "\n".join(lines) + "\n"
    if fmt == "slurm":
        for name, value in pairs:
            if "," in value:
                raise UsageError(
                    f"the value of {name} ({value!r}) contains a comma, which Slurm's "
                    "--export uses to separate variables",
                    code="slurm-export-comma",
                    where="--format slurm",
                    fix="export the variables in the job script (--format shell) and run "
                    "srun --export=ALL",
                )
        return "--export=" + ",".join(["ALL", *(f"{n}={v}" for n, v in pairs)]) + "\n"
    raise UsageError(
        f"unknown format {fmt!r}",
        code="usage",
        where="--format",
        fix=f"one of {', '.join(FORMATS)}",
    )


def _dotenv(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


def to_json(resolution: Resolution) -> dict[str, object]:
    """The JSON document of ``--format json``."""
    return {
        "schema_version": SCHEMA_VERSION,
        "profile": resolution.profile,
        "transport": resolution.transport,
        "nccl_version": resolution.nccl_version,
        "node": resolution.node,
        "variables": {
            var.name: {
                "value": var.value,
                "origin": var.origin.value,
                "reason": var.reason,
                "source": var.source,
                "notes": list(var.notes),
                "invalid": var.invalid,
                "layers": [
                    {"origin": layer.origin.value, "value": layer.value, "reason": layer.reason}
                    for layer in var.layers
                ],
            }
            for var in resolution.variables
        },
        "findings": [
            {"severity": f.severity, "code": f.code, "message": f.message}
            for f in resolution.findings
        ],
    }


def explain(resolution: Resolution) -> str:
    """Every variable with its value, origin and reason, and the layers beneath."""
    lines = [
        f"hpnet env — profile {resolution.profile}, transport {resolution.transport}, "
        f"NCCL {resolution.nccl_version or 'unknown'}, node {resolution.node}",
        "",
    ]
    for var in resolution.variables:
        shown = var.value if var.value is not None else "(unset)"
        lines.append(f"{var.name}={shown}    [{var.origin.value}] {var.reason}")
        for layer in var.layers[:-1]:
            value = layer.value if layer.value is not None else "(unset)"
            lines.append(f"    under it: {layer.origin.value} {value} — {layer.reason}")
        lines += [f"    note: {note}" for note in var.notes]
        if var.invalid:
            lines.append(f"    INVALID: {var.invalid}")
        if var.source and var.origin.value == "profile":
            lines.append(f"    source: {var.source}")
    if resolution.findings:
        lines += ["", "Findings:"]
        lines += [f"  {f.severity}: {f.message}" for f in resolution.findings]
    return "\n".join(lines) + "\n"
