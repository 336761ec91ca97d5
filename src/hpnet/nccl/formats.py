"""Render a :class:`~hpnet.nccl.env.Resolution` for the tool that consumes it.

Each format carries exactly the variables to set (``Resolution.exported``):

* ``shell``: ``export K='V'`` lines, always single-quoted (zsh would read an
  unquoted leading ``=`` as a command lookup), then ``unset K`` for variables
  ``--override-env`` removes;
* ``dotenv``: ``K='V'`` lines, single quotes so that no ``$`` is expanded by a
  loader or by Compose (a value with a single quote cannot be written: an error);
* ``json``: every variable with value, origin, reason, source, plus the findings;
* ``mpirun``: ``-x K=V`` arguments for Open MPI (one line, shell-quoted);
* ``deepspeed``: ``.deepspeed_env`` lines ``K=V`` (DeepSpeed splits each line on its
  first ``=`` and does no unquoting, so values are written raw);
* ``k8s``: a container ``env:`` list, each value a YAML double-quoted scalar
  (:func:`hpnet.yamlquote.double_quoted`) with every ``$`` doubled: the kubelet
  expands ``$(VAR)`` in env values and reads ``$$`` as one ``$``
  (k8s.io/kubernetes ``third_party/forked/golang/expansion/expand.go``), so doubling
  only ``$(`` would turn ``$$(X)`` into ``$$$(X)``, which it expands;
* ``slurm``: ``--export=ALL,K=V,...`` for srun / sbatch. Slurm separates entries
  with commas, so a value with a comma travels through the environment: an
  ``export`` line before the flag, and the bare name inside it.
"""

from __future__ import annotations

from hpnet.errors import UsageError
from hpnet.nccl.env import Resolution
from hpnet.yamlquote import double_quoted

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
        lines = [f"export {name}={_single_quote(value)}" for name, value in pairs]
        lines += [f"unset {name}" for name in resolution.unset]
        return "".join(line + "\n" for line in lines)
    if fmt == "dotenv":
        for name, value in pairs:
            if "'" in value:
                raise UsageError(
                    f"the value of {name} contains a single quote, which a dotenv file "
                    "cannot carry literally",
                    code="bad-value",
                    where="--format dotenv",
                    fix="use --format shell or json",
                )
        return "".join(f"{name}='{value}'\n" for name, value in pairs)
    if fmt == "json":
        from hpnet.jsonout import inert  # noqa: PLC0415

        return inert(json.dumps(to_json(resolution), indent=2, ensure_ascii=False)) + "\n"
    if fmt == "mpirun":
        args = [arg for name, value in pairs for arg in ("-x", f"{name}={value}")]
        return shlex.join(args) + "\n"
    if fmt == "deepspeed":
        return "".join(f"{name}={value}\n" for name, value in pairs)
    if fmt == "k8s":
        lines = ["env:"]
        for name, value in pairs:
            escaped = double_quoted(value.replace("$", "$$"))
            lines += [f"- name: {name}", f"  value: {escaped}"]
        return "\n".join(lines) + "\n"
    if fmt == "slurm":
        lines = [f"export {n}={_single_quote(v)}" for n, v in pairs if "," in v]
        lines += [f"unset {name}" for name in resolution.unset]
        entries = ["ALL", *(n if "," in v else f"{n}={v}" for n, v in pairs)]
        lines.append(shlex.quote("--export=" + ",".join(entries)))
        return "\n".join(lines) + "\n"
    raise UsageError(
        f"unknown format {fmt!r}",
        code="usage",
        where="--format",
        fix=f"one of {', '.join(FORMATS)}",
    )


def _single_quote(value: str) -> str:
    """POSIX single quotes, a quote inside written as ``'\\''``."""
    return "'" + value.replace("'", "'\\''") + "'"


def to_json(resolution: Resolution) -> dict[str, object]:
    """The JSON document of ``--format json``."""
    from hpnet.jsonout import envelope  # noqa: PLC0415

    body = {
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
            {"severity": f.severity.value, "code": f.id, "message": f.title}
            for f in resolution.findings
        ],
    }
    return envelope(body, schema_version=SCHEMA_VERSION)


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
        lines += [f"  {f.severity}: {f.title}" for f in resolution.findings]
    return "\n".join(lines) + "\n"
