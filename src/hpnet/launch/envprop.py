"""What environment reaches every rank of a launched job, and what never does.

Three sources, later ones winning: variables of this process whose names start with
an allowed prefix (NCCL_, UCX_, NVSHMEM_, TORCH_NCCL_, CUDA_, GLOO_, plus a profile's
own list such as ModelArts' MA_ / SHARED_ / S3_ / VC_WORKER_ / SCC), the NCCL settings
``hpnet env`` resolved for the profile, and ``--env K=V`` / ``--env K``.

A secret (:func:`hpnet.secrets.is_secret`: a name with a TOKEN, SECRET, PASSWORD,
KEY, CRED... word in it, or a value holding a credential such as
``https://user:pass@host``) is never forwarded because a prefix matched: only when
named with ``--env``. Names NCCL itself reads (NCCL_IB_PKEY is a partition key, not a
secret) are not secrets by name. ``--dry-run`` prints secret values as ``<redacted>``,
and the engines carry named secrets outside every command line (ssh's stdin, the
environment of sbatch and mpirun, a Kubernetes Secret).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from hpnet.errors import InputError
from hpnet.nccl.rules import is_variable_name
from hpnet.secrets import is_secret, looks_secret, redact

__all__ = [
    "DEFAULT_PREFIXES",
    "Propagation",
    "is_secret",
    "looks_secret",
    "propagate",
    "redact",
]

DEFAULT_PREFIXES = ("NCCL_", "UCX_", "NVSHMEM_", "TORCH_NCCL_", "CUDA_", "GLOO_")


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Propagation:
    env: Mapping[str, str]  # what every rank gets, name -> value, in a stable order
    #: name -> where the value comes from ("environment (prefix NCCL_)", "hpnet env", "--env")
    origins: Mapping[str, str]
    #: secrets in this environment (by name or by value): not forwarded, and not
    #: inherited by the processes hpnet starts here either (every node sees the same),
    #: unless named
    withheld: tuple[str, ...]
    prefixes: tuple[str, ...]

    def display(self) -> dict[str, str]:
        """The environment with secrets redacted, for --dry-run and logs."""
        return {k: redact(k, v) for k, v in self.env.items()}

    def secrets(self) -> dict[str, str]:
        """The forwarded variables that are secrets (named with ``--env``): what no
        command line, printed plan or file others can read may hold."""
        return {k: v for k, v in self.env.items() if is_secret(k, v)}


def _check(name: str, value: str, where: str) -> None:
    if not is_variable_name(name):
        raise InputError(
            f"not a variable name: {name!r}",
            code="bad-env",
            where=where,
            fix="name variables with letters, digits and '_' (not starting with a digit)",
        )
    if "\n" in value or "\0" in value:
        raise InputError(
            f"{name}'s value holds a newline or NUL byte: it cannot be forwarded safely",
            code="bad-env",
            where=where,
            fix=f"set {name} without line breaks",
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:  # bytes os.environ could not decode (surrogateescape)
        raise InputError(
            f"{name}'s value is not UTF-8 text: it cannot be written to a script or manifest",
            code="bad-env",
            where=where,
            fix=f"set {name} to UTF-8 text",
        ) from None


def parse_env_args(items: Sequence[str], environ: Mapping[str, str]) -> dict[str, str]:
    """``--env K=V`` (a value) and ``--env K`` (this process's value of K).

    >>> parse_env_args(["A=1", "B"], {"B": "2"})
    {'A': '1', 'B': '2'}
    """
    found: dict[str, str] = {}
    for item in items:
        name, sep, value = item.partition("=")
        if not sep:
            if name not in environ:
                raise InputError(
                    f"--env {name}: {name} is not set here",
                    code="bad-env",
                    where=f"--env {name}",
                    fix=f"export {name} first, or pass --env {name}=VALUE",
                )
            value = environ[name]
        _check(name, value, f"--env {item.split('=', 1)[0]}")
        found[name] = value
    return found


def propagate(
    environ: Mapping[str, str],
    *,
    resolved: Mapping[str, str] = {},
    prefixes: Iterable[str] = DEFAULT_PREFIXES,
    named: Mapping[str, str] = {},
) -> Propagation:
    """The environment for every rank (pure: ``environ`` is passed in).

    >>> p = propagate({"NCCL_DEBUG": "INFO", "HF_TOKEN": "x", "HOME": "/root"},
    ...               resolved={"NCCL_IB_GID_INDEX": "3"})
    >>> dict(p.env), p.withheld
    ({'NCCL_DEBUG': 'INFO', 'NCCL_IB_GID_INDEX': '3'}, ('HF_TOKEN',))

    A secret is withheld wherever it comes from, the resolved settings included, unless
    named (``named``, from ``--env NAME``).
    """
    chosen = tuple(dict.fromkeys(prefixes))
    env: dict[str, str] = {}
    origins: dict[str, str] = {}
    withheld = []
    for name in sorted(environ):
        if is_secret(name, environ[name]):
            withheld.append(name)  # never passed on, by prefix or by inheritance
            continue
        prefix = next((p for p in chosen if name.startswith(p)), None)
        if prefix is None:
            continue
        _check(name, environ[name], f"the environment ({name})")
        env[name] = environ[name]
        origins[name] = f"environment (prefix {prefix})"
    for name, value in resolved.items():
        if is_secret(name, value):
            # the resolution carries the caller's own NCCL_* values: a secret among
            # them is withheld as it would be from the environment
            if name not in withheld:
                withheld.append(name)
            continue
        _check(name, value, f"hpnet env ({name})")
        env[name] = value
        origins[name] = "hpnet env"
    for name, value in named.items():
        _check(name, value, f"--env {name}")
        env[name] = value
        origins[name] = "--env"
    withheld = sorted(name for name in withheld if name not in named)
    return Propagation(env=env, origins=origins, withheld=tuple(withheld), prefixes=chosen)
