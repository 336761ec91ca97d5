"""What a check sees (:class:`Facts`) and what it says (:class:`CheckResult`)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING

from hpnet.nccl.rules import VARIABLE_NAME_PATTERN
from hpnet.result import Status

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = ["CheckResult", "Facts", "Report", "redacted"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class CheckResult:
    """One judgement. For WARN and FAIL, ``fix`` holds shell commands to paste, one per
    line and nothing else (values quoted with ``shlex.quote``), and ``fix_note`` what a
    command cannot say: why, where it applies, the alternatives. A fix that no command
    can express (restart the container with a flag) is a ``fix_note`` alone."""

    id: str
    area: str
    status: Status
    summary: str
    evidence: tuple[str, ...] = ()
    fix: str | None = None
    fix_note: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Facts:
    """Everything the checks judge, gathered before any check runs.

    ``variables`` are the NCCL settings under test (the environment, an env file or
    the resolved profile) and ``variables_source`` says which. ``acs`` maps a PCI
    bridge to whether it redirects peer-to-peer requests (ACS P2P Request Redirect
    on), None where its config space could not be read.
    """

    inventory: NodeInventory
    variables: Mapping[str, str]
    variables_source: str
    profile: Profile | None
    nccl_version: str | None
    acs: Mapping[str, bool | None] = dataclasses.field(default_factory=dict)
    #: entries of /dev/infiniband (None when the source cannot show them)
    dev_infiniband: tuple[str, ...] | None = None
    #: libnccl-net*.so files the dynamic loader can find (None off the live node)
    net_plugins: tuple[str, ...] | None = None
    #: the --env-file the variables come from (None: the environment or a profile)
    env_file: str | None = None
    #: the distribution, ``ID`` + ``VERSION_ID`` of os-release (``ubuntu22.04``), if known
    distro: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class Report:
    node: str
    profile: str | None
    variables_source: str
    checks: tuple[CheckResult, ...]
    #: the node's decisions the checks render (:func:`hpnet.nccl.fill.decide`), as JSON
    decisions: Mapping[str, object] = dataclasses.field(default_factory=dict)

    @property
    def verdict(self) -> Status:
        """FAIL if any check fails, else WARN if any warns, else PASS."""
        statuses = {c.status for c in self.checks}
        for status in (Status.FAIL, Status.WARN):
            if status in statuses:
                return status
        return Status.PASS


#: ``NAME=value`` in a check's text, the value bare or shell-quoted (as fixes write it)
_ASSIGNMENT = re.compile(rf"\b({VARIABLE_NAME_PATTERN})=('(?:[^']|'\\'')*'|\"[^\"]*\"|[^\s,;]*)")


def redacted(report: Report) -> Report:
    """The report as it may be shown: no secret's value (:mod:`hpnet.secrets`), the
    rule ``hpnet env`` and ``hpnet launch`` follow. ``NAME=value`` of a secret-looking
    name becomes ``NAME=<redacted>``; a credential inside any text (``user:pass@``) is
    redacted where it stands.

    >>> from hpnet.result import Status
    >>> shown = redacted(Report(node="n", profile=None, variables_source="env", checks=(
    ...     CheckResult(id="x", area="a", status=Status.WARN,
    ...                 summary="NCCL_NET_TOKEN=abc and https://u:pw@h/"),)))
    >>> shown.checks[0].summary
    'NCCL_NET_TOKEN=<redacted> and https://u:<redacted>@h/'
    """
    from hpnet.secrets import REDACTED, looks_secret, redact_text  # noqa: PLC0415

    def clean(text: str) -> str:
        text = _ASSIGNMENT.sub(lambda m: f"{m[1]}={REDACTED}" if looks_secret(m[1]) else m[0], text)
        return redact_text(text)

    def optional(text: str | None) -> str | None:
        return None if text is None else clean(text)

    checks = tuple(
        dataclasses.replace(
            check,
            summary=clean(check.summary),
            evidence=tuple(clean(line) for line in check.evidence),
            fix=optional(check.fix),
            fix_note=optional(check.fix_note),
        )
        for check in report.checks
    )
    return dataclasses.replace(
        report, checks=checks, variables_source=clean(report.variables_source)
    )
