"""The scheduler's own command to take a node out of service, for ``hpnet isolate``.

- Slurm: ``scontrol update NodeName=<node> State=DRAIN Reason=<why>`` (running jobs
  finish, no new job starts there; ``scontrol update NodeName=<node> State=RESUME``
  undoes it). The node's Slurm name is ``SLURMD_NODENAME`` in a job step (slurmd sets
  it), which may differ from the host name.
- Kubernetes: ``kubectl cordon <node>`` and ``kubectl taint nodes <node>
  hpnet.dev/isolate=<fault>:NoSchedule``. Inside a pod the host name is the pod's, so
  the node's name comes from ``NODE_NAME`` (the downward API's ``spec.nodeName``, which
  ``hpnet launch --engine k8s`` sets); without it no Kubernetes command is proposed.

Every name is checked against what the scheduler accepts (Slurm: letters, digits and
``._-``; Kubernetes: a DNS-1123 subdomain) before it lands in a command, and a name a
scheduler reads as a set of nodes is refused: Slurm's ``ALL`` (any case:
``scontrol update NodeName=ALL`` updates every node) and a bare number (a host-list
range bound, never a node of its own); brackets and commas (host lists) fail the
character check. The reason is one line of printable ASCII. The commands are argv
lists (run without a shell) and are printed shell-quoted.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence

__all__ = ["drain_commands", "is_one_node", "scheduler_of", "shown"]

_SLURM_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}\Z")
_K8S_NAME = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\Z")
_REASON_CHARS = re.compile(r"[^ -~]")
#: names a scheduler reads as a set of nodes, not as one
_SET_NAME = re.compile(r"(all|[0-9]+)\Z", re.IGNORECASE)
TAINT_KEY = "hpnet.dev/isolate"


def scheduler_of(environ: Mapping[str, str]) -> tuple[str, str] | None:
    """``("slurm", name)`` / ``("kubernetes", name)`` for the node this rank runs on, or
    None when neither scheduler's name for it is known."""
    if environ.get("SLURM_JOB_ID") and environ.get("SLURMD_NODENAME"):
        return "slurm", environ["SLURMD_NODENAME"]
    if environ.get("KUBERNETES_SERVICE_HOST") and environ.get("NODE_NAME"):
        return "kubernetes", environ["NODE_NAME"]
    return None


def _reason(text: str) -> str:
    return _REASON_CHARS.sub(" ", f"hpnet isolate: {text}")[:200]


def drain_commands(scheduler: str, name: str, reason: str, fault: str) -> list[list[str]]:
    """The commands that take ``name`` out of ``scheduler``'s service; none when the
    name is not one the scheduler accepts (it did not come from the scheduler).

    >>> drain_commands("slurm", "gpu-017", "slow rail 3 (mlx5_3:1)", "hardware")[0][2:]
    ['NodeName=gpu-017', 'State=DRAIN', 'Reason=hpnet isolate: slow rail 3 (mlx5_3:1)']
    >>> drain_commands("kubernetes", "node-a.example", "x", "configuration")[1][3:]
    ['node-a.example', 'hpnet.dev/isolate=configuration:NoSchedule', '--overwrite']
    >>> drain_commands("slurm", "gpu1;reboot", "x", "hardware")
    []
    >>> drain_commands("slurm", "ALL", "x", "hardware"), drain_commands("slurm", "0", "x", "x")
    ([], [])
    """
    if not is_one_node(name):
        return []
    if scheduler == "slurm" and _SLURM_NAME.match(name):
        return [
            ["scontrol", "update", f"NodeName={name}", "State=DRAIN", f"Reason={_reason(reason)}"]
        ]
    if scheduler == "kubernetes" and len(name) <= 253 and _K8S_NAME.match(name):
        value = "configuration" if fault == "configuration" else "hardware"
        return [
            ["kubectl", "cordon", name],
            ["kubectl", "taint", "nodes", name, f"{TAINT_KEY}={value}:NoSchedule", "--overwrite"],
        ]
    return []


def is_one_node(name: str) -> bool:
    """False for a name a scheduler reads as a set of nodes (``ALL``, ``all``, ``0``).

    >>> is_one_node("gpu-017"), is_one_node("All"), is_one_node("42")
    (True, False, False)
    """
    return not _SET_NAME.match(name)


def shown(command: Sequence[str]) -> str:
    """A command as one shell line.

    >>> shown(["scontrol", "update", "Reason=hpnet isolate: x"])
    "scontrol update 'Reason=hpnet isolate: x'"
    """
    return " ".join(shlex.quote(part) for part in command)
