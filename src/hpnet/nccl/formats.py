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

A value may hold characters a terminal acts on (a device or interface name read from
a saved listing: ``ESC [ 2 J``, a C1 ``\\x9b``, a bidi override;
:mod:`hpnet.render.text`). No format prints them raw. Where the format can say the
same value with escapes, it does: the shell words of ``shell``, ``mpirun`` and
``slurm`` become ANSI-C quoted ``$'...'`` with the UTF-8 bytes in octal (bash, zsh,
ksh, busybox sh and POSIX.1-2024 read it; a value with a comma or a control travels
through ``export`` in ``slurm``), YAML and JSON write ``\\u`` escapes. ``dotenv`` and
``deepspeed`` have no escapes (their values are read raw): an error, as for a newline.
``--explain`` is for reading: its lines are shown escaped (``\\x1b``).
"""

from __future__ import annotations

import re

from hpnet.errors import UsageError
from hpnet.nccl.env import Resolution
from hpnet.render.text import escape_controls
from hpnet.yamlquote import double_quoted

__all__ = ["FORMATS", "explain", "render", "to_json"]

FORMATS = ("shell", "dotenv", "json", "mpirun", "deepspeed", "k8s", "slurm")
SCHEMA_VERSION = 1
#: what a YAML double-quoted scalar may hold raw but a terminal reorders (bidi
#: embeddings, overrides, isolates); the other controls double_quoted escapes itself
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")


def render(resolution: Resolution, fmt: str) -> str:
    """The text of ``fmt`` (one of :data:`FORMATS`), ending with a newline."""
    import json  # noqa: PLC0415 - each format imports what it needs

    pairs = resolution.exported
    for name, value in pairs:
        if "\n" in value or "\0" in value:
            raise UsageError(
                f"the value of {name} contains a newline or NUL",
                code="bad-value",
                where=name,
                fix="set a value on one line",
            )
    if fmt in ("dotenv", "deepspeed"):
        _refuse_controls(pairs, fmt)
    if fmt == "shell":
        lines = [f"export {name}={shell_word(value)}" for name, value in pairs]
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
        return " ".join(shell_word(arg, always=False) for arg in args) + "\n"
    if fmt == "deepspeed":
        return "".join(f"{name}={value}\n" for name, value in pairs)
    if fmt == "k8s":
        lines = ["env:"]
        for name, value in pairs:
            escaped = _BIDI.sub(
                lambda m: f"\\u{ord(m[0]):04x}", double_quoted(value.replace("$", "$$"))
            )
            lines += [f"- name: {name}", f"  value: {escaped}"]
        return "\n".join(lines) + "\n"
    if fmt == "slurm":
        # a comma would end the entry, a control cannot be shown: through the environment
        indirect = {n for n, v in pairs if "," in v or escape_controls(v) != v}
        lines = [f"export {n}={shell_word(v)}" for n, v in pairs if n in indirect]
        lines += [f"unset {name}" for name in resolution.unset]
        entries = ["ALL", *(n if n in indirect else f"{n}={v}" for n, v in pairs)]
        lines.append(shell_word("--export=" + ",".join(entries), always=False))
        return "\n".join(lines) + "\n"
    raise UsageError(
        f"unknown format {fmt!r}",
        code="usage",
        where="--format",
        fix=f"one of {', '.join(FORMATS)}",
    )


def shell_word(value: str, *, always: bool = True) -> str:
    """``value`` as one shell word that shows no control character: POSIX single
    quotes (a quote inside written as ``'\\''``; with ``always=False`` only where
    :func:`shlex.quote` needs them), or, when the value holds a control, ANSI-C
    ``$'...'`` quoting with each of its UTF-8 bytes in octal: the same value, inert
    on a terminal.

    >>> shell_word("=mlx5_0:1"), shell_word("mlx5_\\x1b[2J"), shell_word("a", always=False)
    ("'=mlx5_0:1'", "$'mlx5_\\\\033[2J'", 'a')
    """
    if escape_controls(value) != value:
        return "$'" + "".join(_ansi_c(char) for char in value) + "'"
    if not always:
        import shlex  # noqa: PLC0415

        return shlex.quote(value)
    return "'" + value.replace("'", "'\\''") + "'"


def _ansi_c(char: str) -> str:
    """One character inside ``$'...'``: three octal digits per byte (never read on into
    the next character, unlike ``\\x``), a backslash or quote escaped."""
    if char in "\\'":
        return "\\" + char
    if escape_controls(char) == char:
        return char
    return "".join(f"\\{byte:03o}" for byte in char.encode())


def _refuse_controls(pairs: tuple[tuple[str, str], ...], fmt: str) -> None:
    """A format whose values are read raw cannot carry a control character."""
    for name, value in pairs:
        if escape_controls(value) != value:
            raise UsageError(
                f"the value of {name} ({escape_controls(value)}) holds a control character, "
                f"which a {fmt} file cannot carry",
                code="bad-value",
                where=f"--format {fmt}",
                fix="use --format shell, k8s or json; check the names in the listing",
            )


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
        "decisions": dict(resolution.decisions),
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
    # for reading, not sourcing: a name from a listing shows as \x1b, each line one line
    return "\n".join(escape_controls(line) for line in lines) + "\n"
