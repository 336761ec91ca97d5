"""NCCL releases with known serious bugs: cited data, checked against every version a log
or a node shows (``hpnet verify``: :func:`hpnet.ncclog.releases.known_bad_versions`;
``hpnet doctor`` / ``check``: the ``versions.known_bad`` check).

Each entry was confirmed in a source named by ``citations`` (NVIDIA's documentation or
release notes, a maintainer's word in an NVIDIA/nccl issue, a release commit); claims
that could not be confirmed were left out (an open RAS segfault on 2.29.7 at 256 GPUs,
NVIDIA/nccl#2346, has no maintainer statement of the affected releases or a workaround).
The range is the releases a source names as affected, never wider: an older release a
source does not name is not flagged.

>>> [b.id for b in affecting("2.30.4")]
['pxn-ib-multinode-hang']
>>> affecting("2.30.7")
()
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

__all__ = ["KNOWN_BAD", "KnownBad", "affecting", "conditions_met"]


@dataclasses.dataclass(frozen=True, kw_only=True, slots=True)
class KnownBad:
    """One bug of a range of NCCL releases."""

    id: str
    first: tuple[int, ...]  # the first affected release
    last: tuple[int, ...]  # the last affected release a source names
    what: str  # what breaks
    when: str  # the conditions under which it matters
    fix: str  # the upgrade that fixes it, or that none has been released
    fixed_in: str | None  # the first release with the fix, None when none is known
    #: ``NCCL_X=value`` settings that avoid it (the workaround NCCL's people gave)
    workaround: Mapping[str, str]
    #: what a log or node must show for it to matter: ``multi-node``, ``net-ib``,
    #: ``ras-enabled`` (see :func:`conditions_met`)
    needs: frozenset[str]
    citations: tuple[str, ...]
    #: an action outside NCCL that triggers it and that no log or node shows (``a RAS
    #: query``): reported as a note, not a warning
    trigger: str | None = None

    def affects(self, version: tuple[int, ...]) -> bool:
        return self.first <= version[:3] <= self.last


def _v(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


KNOWN_BAD: tuple[KnownBad, ...] = (
    KnownBad(
        id="pxn-ib-multinode-hang",
        first=_v("2.29.7"),
        last=_v("2.30.4"),
        what="jobs across nodes over InfiniBand can hang (PXN, NCCL's send through a "
        "peer GPU's NIC)",
        when="more than one node, the IB network, PXN not disabled",
        fix="upgrade NCCL to 2.30.7 or later",
        fixed_in="2.30.7",
        workaround={"NCCL_PXN_DISABLE": "1"},
        needs=frozenset({"multi-node", "net-ib"}),
        citations=(
            # "Some users on multi-node InfiniBand configurations may experience hangs
            # with NCCL 2.29.7 and above ... set NCCL_PXN_DISABLE=1 ... fixed in 2.30.7"
            "https://docs.nvidia.com/cuda/cuest/troubleshooting/index.html (Known Issues)",
        ),
    ),
    KnownBad(
        id="ras-report-during-init-crash",
        first=_v("2.26.2"),
        last=_v("2.26.6"),
        what="the process crashes when a RAS report is requested (ncclras, port 28028) "
        "while a communicator is being initialized",
        when="RAS enabled (the default) and a RAS client queried during init",
        fix="upgrade NCCL to 2.27.3 or later",
        fixed_in="2.27.3",
        workaround={"NCCL_RAS_ENABLE": "0"},
        needs=frozenset({"ras-enabled"}),
        trigger="a RAS client (ncclras, port 28028) queried during communicator init",
        citations=(
            "https://github.com/NVIDIA/nccl/issues/1669 (2.26.2)",
            "https://github.com/NVIDIA/nccl/issues/1718 (2.26.5)",
            # v2.27.3-1 release notes: "Fix a race condition leading to a crash when
            # generating a RAS report during communicator initialization (#1669, #1718)"
            "NVIDIA/nccl commit 72d2432094d6ae36abd6e511c3a16a2d052dbf94 (v2.27.3-1)",
        ),
    ),
    KnownBad(
        id="ras-status-memory-corruption",
        first=_v("2.26.2"),
        last=_v("2.28.9"),
        what="a RAS status query (ncclras, `echo 'VERBOSE STATUS' | nc localhost 28028`) "
        "can corrupt memory and crash the job when some ranks are missing from a "
        "communicator",
        when="RAS enabled (the default) and something polls RAS; seen at 128 GPUs",
        fix="upgrade NCCL to 2.29.2 or later",
        fixed_in="2.29.2",
        workaround={"NCCL_RAS_ENABLE": "0"},
        needs=frozenset({"ras-enabled"}),
        trigger="something polls RAS status (ncclras, nc localhost 28028)",
        citations=(
            # reported on 2.27.3; maintainer (kiskra-nvidia): "the fix was included in
            # NCCL 2.29.2 release"
            "https://github.com/NVIDIA/nccl/issues/1762",
            # src/ras/client_support.cc rasClientRunComms skips the missing-rank records
            # from v2.29.2-1 on; the records exist from v2.26.2-1 (git grep nMissingRanks)
            "NVIDIA/nccl commit ebd1e929285881cb4df02c3459588a2e12b2d8c0 (v2.29.2-1)",
        ),
    ),
    KnownBad(
        id="ras-peers-update-segfault",
        first=_v("2.27.7"),
        last=_v("2.27.7"),
        what="the RAS thread can segfault (rasMsgHandlePeersUpdate) and kill the "
        "training process, without anyone querying RAS",
        when="RAS enabled (the default)",
        fix="no released fix is known (a use-after-free fix was merged to NCCL's dev "
        "branch in 2026-09, NVIDIA/nccl#2406); disable RAS",
        fixed_in=None,
        workaround={"NCCL_RAS_ENABLE": "0"},
        needs=frozenset({"ras-enabled"}),
        citations=(
            "https://github.com/NVIDIA/nccl/issues/1996",
            "https://github.com/NVIDIA/nccl/pull/2406",
        ),
    ),
)


def affecting(version: str | None) -> tuple[KnownBad, ...]:
    """The known bugs of a release (``2.30.4``, ``2.27.7+cuda12.9``)."""
    if not version:
        return ()
    core = version.split("+", 1)[0].split("-", 1)[0]
    try:
        parsed = _v(core)
    except ValueError:
        return ()
    return tuple(bug for bug in KNOWN_BAD if bug.affects(parsed))


def conditions_met(
    bug: KnownBad, *, env: Mapping[str, str], shows: frozenset[str]
) -> tuple[bool, bool]:
    """(does it apply, is it already worked around) for a run whose NCCL settings are
    ``env`` and that ``shows`` the facts in :attr:`KnownBad.needs` it shows. A condition
    the run does not show (a node's check cannot know the job's node count) is assumed
    possible, so the bug is reported, marked as depending on it."""
    worked_around = bool(bug.workaround) and all(
        env.get(name, "").strip() == value for name, value in bug.workaround.items()
    )
    if "ras-enabled" in bug.needs and env.get("NCCL_RAS_ENABLE", "").strip() == "0":
        worked_around = True
    applies = all(need in shows or f"unknown:{need}" in shows for need in bug.needs)
    return applies, worked_around
