"""What a check sees (:class:`Facts`) and what it says (:class:`CheckResult`)."""

from __future__ import annotations

import dataclasses
import enum
from collections.abc import Mapping
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hpnet.detect import NodeInventory
    from hpnet.profiles.model import Profile

__all__ = ["CheckResult", "Facts", "Report", "Status"]


class Status(str, enum.Enum):
    PASS = "PASS"  # noqa: S105 - a status, not a password
    WARN = "WARN"
    FAIL = "FAIL"
    SKIP = "SKIP"  # the check does not apply here, or its facts are not available


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

    @property
    def verdict(self) -> Status:
        """FAIL if any check fails, else WARN if any warns, else PASS."""
        statuses = {c.status for c in self.checks}
        for status in (Status.FAIL, Status.WARN):
            if status in statuses:
                return status
        return Status.PASS
