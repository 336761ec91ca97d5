"""torch's desync report (TORCH_NCCL_DESYNC_DEBUG=1, hpnet.hang.desync): read from a
recording on the lent H200 and from a real post; what ``hpnet hang`` says with it."""

from __future__ import annotations

from hpnet.hang.collect import collect
from hpnet.hang.desync import desync_causes, read_desync
from hpnet.hang.verdict import judge_evidence
from tests.conftest import DATA

HANG = DATA / "hang"
RECORDED = HANG / (
    "torch2.11-desync-debug-skip-plant-culprit-second-of-three-two-groups-h200-nccl2.28.9.txt"
)
POST = HANG / (
    "torch-desync-debug-default-pg-r7-stopped-after-collective-182-others-at-315-317-"
    "modded-nanogpt-EXCERPT.txt"
)


def _read(path):  # type: ignore[no-untyped-def]
    return read_desync(str(path), list(enumerate(path.read_text().splitlines(), 1)))


def test_each_report_is_read_with_its_group() -> None:
    """Rank 1 of three skipped step 1 (tests/hang_plant.py): rank 0's watchdog reported
    it in two groups; the line after each report names the group."""
    first, second = _read(RECORDED)
    assert (first.rank, first.collective, first.seq) == (0, "ALLREDUCE", 2)
    assert (first.lag, first.finished, first.joined, first.missing) == (1, (1,), (), ())
    assert (first.pg, first.pg_desc) == ("1", "")
    assert first.states == ((1, "finished", "ALLREDUCE", (1,)), (2, "started", "ALLREDUCE", (0,)))
    assert (second.seq, second.lag, second.pg, second.pg_desc) == (4, 2, "0", "default_pg")
    assert second.states[-1] == (4, "started", "_ALLGATHER_BASE", (0, 2))
    assert second.lines[-1].endswith(
        "[1] finished collective #2, but didn't join collective #3 (count from 1)"
    )


def test_the_lagging_rank_leads_the_verdict() -> None:
    recorded = judge_evidence(collect([str(RECORDED)]))
    assert recorded.status == "hang"
    assert recorded.headline.startswith(
        "rank 1 finished collective #1 of group 1 and never joined #2 (torch's count), as the "
        "desync report of rank 0's watchdog says"
    ), recorded.headline
    # the same rank stopped in the default group: one cause, the other group named
    assert recorded.causes[0].also_in == ("collective #3 of group 0 (default_pg)",)
    post = judge_evidence(collect([str(POST)]))
    assert post.headline.startswith(
        "rank 7 finished collective #182 of group 0 and never joined #183 (torch's count)"
    ), post.headline
    assert post.headline.endswith(
        "; ranks 0, 1, 2 started ALLREDUCE #315, ranks 3, 4, 5, 6 started _ALLGATHER_BASE #317"
    )
    assert post.causes[0].waiting == (0, 1, 2, 3, 4, 5, 6)


def test_the_reports_other_forms() -> None:
    """TraceUtils.h's other two sentences: ranks that recorded no collective at all, and
    ranks that joined the lagging collective and did not finish it."""
    lines = [
        "[rank2]:[E0101 00:00:00.0 ProcessGroupNCCL.cpp:1] Rank 2",
        "\t - [2] Timeout at collective: BROADCAST, #7",
        "\t - To our best knowledge, ranks [3, 5] are the lagging ranks that caused this timeout. "
        "They never joined any collectives",
        "[rank2]:[E0101 00:00:00.0 ProcessGroupNCCL.cpp:2] Rank 2",
        "\t - [2] Timeout at collective: ALLREDUCE, #10",
        "\t - To our best knowledge, the lagging/dead/mismatched ranks that caused the desync are:",
        "\t   - [4] joined but didn't finish collective #9 (count from 1)",
        "\t - Snapshot of ranks' latest states:",
        "\t   #9 started ranks:",
        "\t     [4] started ALLREDUCE",
        "\t   #10 started ranks:",
        "\t     [0, 1, 2, 3] started ALLREDUCE",
    ]
    missing, joined = read_desync("a.log", list(enumerate(lines, 1)))
    assert missing.missing == (3, 5) and missing.lag is None
    assert (joined.joined, joined.lag) == ((4,), 9)
    said = [c.headline() for c in desync_causes([missing, joined])]
    assert said[0].startswith("ranks 3, 5 never joined any collective, as the desync report")
    assert said[1].startswith("rank 4 joined collective #9 (torch's count) and never finished it")
    assert said[1].endswith("; ranks 0, 1, 2, 3 started ALLREDUCE #10")
