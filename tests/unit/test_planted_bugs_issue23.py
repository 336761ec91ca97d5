"""Issue 23: one test per planted bug that survived the suite.

Each test passes on correct code and fails with its bug planted (the bug is named in
the test's docstring). To see one fail, plant it in a scratch copy of the tree::

    git worktree add --detach /tmp/plant HEAD   # edit /tmp/plant/src/hpnet/...
    PYTHONPATH=/tmp/plant/src python -m pytest -p no:cacheprovider \\
        tests/unit/test_planted_bugs_issue23.py
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Callable, Mapping
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from hpnet.cli.main import main
from tests.conftest import DATA
from tests.unit.test_planted_bugs import with_cells

Tree = Callable[[str], Path]
NT = DATA / "nccl-tests"


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    """The machine's own NCCL_* variables would be a layer of their own."""
    for name in list(os.environ):
        if name.startswith("NCCL_"):
            monkeypatch.delenv(name)


def cli_json(args: list[str]) -> tuple[int, dict[str, Any]]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main([*args, "--json"])
    return code, json.loads(out.getvalue())


# ------------------------------------- a. wrong results in the in-place column fail a check


def test_wrong_results_in_the_in_place_column_make_the_check_not_ready(
    sysfs_tree: Tree, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Planted bug: the check's judge (``hpnet.check.judge.stage_problems``) counts a
    row's wrong results in the out-of-place column only, so a benchmark whose in-place
    results are corrupted (a GPU or NVLink fault seen only when the output buffer is
    the input) leaves the node READY.

    The benchmark is the one seam replaced (run_check's ``launcher``): each stage
    "runs" and leaves a real 4x H200 all_reduce (nccl-tests 2.19.6, "0 OK"), once as
    recorded and once with the in-place ``#wrong`` cells of its 1 MiB and 256 MiB
    rows made 7 and 12; the out-of-place cells stay 0. The node is the recorded DGX
    with active InfiniBand ports.
    """
    import hpnet.bench.run
    from hpnet.bench.load import load_result
    from hpnet.check.execute import Launched
    from hpnet.check.model import CheckReport
    from hpnet.check.run import CheckOptions, run_check

    recorded = NT / "h200x4-all_reduce-g4-ncclTests2.19.6.txt"
    lines = recorded.read_text().splitlines(keepends=True)
    edited = {1048576: "7", 268435456: "12"}
    for at, line in enumerate(lines):
        cells = line.split()
        if cells and cells[0].isdigit() and int(cells[0]) in edited:
            assert cells[8] == cells[12] == "0"  # out-of-place and in-place #wrong
            lines[at] = with_cells(line, {12: edited[int(cells[0])]})
    corrupted = tmp_path / "all_reduce-in-place-wrong.txt"
    corrupted.write_text("".join(lines))
    bench = load_result(str(corrupted))
    rows = {row.size_bytes: row for row in bench.runs[0].rows}
    for size, wrong in edited.items():
        out_of_place, in_place = rows[size].out_of_place, rows[size].in_place
        assert out_of_place is not None and out_of_place.wrong == 0
        assert in_place is not None and in_place.wrong == int(wrong)

    monkeypatch.setattr(hpnet.bench.run, "local_defaults", lambda nproc, device: (4, "cuda"))
    environ = {k: v for k, v in os.environ.items() if not k.startswith("NCCL_")}
    root = str(sysfs_tree("cx6-ib-dgx"))

    def check(path: Path) -> CheckReport:
        report = load_result(str(path))
        return run_check(
            CheckOptions(sysfs_root=root, device="cuda"),
            environ,
            launcher=lambda stage, env, directory: Launched(bench=report),
        )

    clean, broken = check(recorded), check(corrupted)
    assert clean.stages and [s.name for s in broken.stages] == [s.name for s in clean.stages]
    assert not [p for p in clean.problems if "wrong results" in p.what]
    new = [p for p in broken.problems if (p.code, p.what) not in {
        (q.code, q.what) for q in clean.problems
    }]  # fmt: skip
    assert [(p.code, p.what, p.impact, p.evidence) for p in new] == [
        (f"bench:{s.name}", f"{s.name}: wrong results at 2 size(s)", 2,
         ("sizes: [1048576, 268435456]",))
        for s in broken.stages
    ]  # fmt: skip
    assert broken.verdict == "NOT READY" and broken.exit_code == 1


# ----------------------------- b. a rank count several counts fit is not reported as certain

NOT_SHOWN = "the rank count is not shown: the bus factor fits"


def test_a_rank_count_that_several_counts_fit_is_not_given(tmp_path: Path) -> None:
    """Planted bug: ``infer_nranks`` (hpnet.bench.nccl_tests_infer) takes the smallest
    rank count whose bus factor fits every row and reports it as certain ("N ranks:
    the only count ..."), although the rounded busbw / algbw ratio fits several.

    1. A real 1024-rank all_reduce excerpt (nccl-tests#322; no device table): its
       ratio 1.998 fits 1011 to 1035 ranks; the smallest, 1011, is wrong.
    2. A real 8x H100 all_reduce (aws-samples' AWS Batch README; no device table) cut
       off after its 8 KiB row, as a killed job leaves it: the only row with algbw
       >= 0.5 is the in-place 0.51 / 0.88 GB/s, which fits 7 and 8 ranks; the
       smallest, 7, is wrong. The whole output pins 8.
    """
    from hpnet.bench.load import load_result
    from hpnet.bench.nccl_tests_infer import infer_nranks

    many = NT / (
        "all_reduce-1024rank-h100-rows-then-Test-NCCL-failure-at-teardown-many-hosts-"
        "EXCERPT-ncclTests2.15.0-2.15.2.txt"
    )
    run = load_result(str(many)).runs[0]
    assert run.op == "all_reduce" and run.nranks is None
    assert f"{NOT_SHOWN} 1011 to 1035 ranks" in run.notes
    assert infer_nranks(list(run.rows), "all_reduce") == (
        None,
        f"{NOT_SHOWN} 1011 to 1035 ranks",
    )
    code, data = cli_json(["bench", "import", str(many)])
    assert code == 1  # the run failed at teardown (its .source.txt)
    assert data["runs"][0]["nranks"] is None
    assert f"{NOT_SHOWN} 1011 to 1035 ranks" in data["runs"][0]["notes"]

    eight = NT / (
        "all_reduce-1node-8xh100-p5-awsbatch-ompi-tag-output-trailing-blanks-"
        "EXCERPT-ncclTests2.13.0-2.17.2.txt"
    )
    whole = load_result(str(eight)).runs[0]
    assert whole.nranks == 8
    assert "8 ranks: the only count whose bus factor fits every row" in whole.notes
    lines = eight.read_text().splitlines(keepends=True)
    [at] = [i for i, line in enumerate(lines) if line.split()[1:3] == ["8192", "2048"]]
    cut = tmp_path / "all_reduce-8xh100-cut-after-8KiB.txt"
    cut.write_text("".join(lines[: at + 1]))
    run = load_result(str(cut)).runs[0]
    assert run.op == "all_reduce" and len(run.rows) == 11
    assert run.nranks is None, f"{run.nranks} ranks given where 7 and 8 fit"
    assert f"{NOT_SHOWN} 7 to 8 ranks" in run.notes
    code, data = cli_json(["bench", "import", str(cut)])
    assert data["runs"][0]["nranks"] is None
    assert f"{NOT_SHOWN} 7 to 8 ranks" in data["runs"][0]["notes"]


# ----------------------------------------- c. the doctor's GID check reads NCCL_SOCKET_FAMILY

ROCE = DATA / "sysfs" / "cx-roce-mixed-gids.tree"
MLX5_PORT = "sys/devices/pci0000:00/0000:00:03.0/0000:05:00.0/infiniband/mlx5_0/ports/1"
#: a global IPv6 address on eth4 (documentation prefix, eth4's EUI-64 interface id):
#: mlx5 adds a RoCE v1 and a RoCE v2 GID for it, in the next free slots (4 and 5)
GLOBAL_V6 = "2001:0db8:0000:0000:268a:07ff:fe8f:9bbc"
EMPTY_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
WITH_IPV6 = {
    f"{MLX5_PORT}/{old}": f"{MLX5_PORT}/{new}"
    for slot, kind in ((4, "IB/RoCE v1"), (5, "RoCE v2"))
    for old, new in (
        (f"gids/{slot} = {EMPTY_GID}", f"gids/{slot} = {GLOBAL_V6}"),
        (f"gid_attrs/types/{slot} ?", f"gid_attrs/types/{slot} = {kind}"),
        (f"gid_attrs/ndevs/{slot} ?", f"gid_attrs/ndevs/{slot} = eth4"),
    )
}


def doctor_gid(root: Path, variables: Mapping[str, str], tmp_path: Path) -> dict[str, Any]:
    """``hpnet doctor --json``'s vars.gid for a job's variables on the tree at ``root``."""
    env_file = tmp_path / "job.env"
    env_file.write_text("".join(f"{k}={v}\n" for k, v in variables.items()))
    _, data = cli_json(["doctor", "--sysfs-root", str(root), "--env-file", str(env_file)])
    [gid] = [c for c in data["checks"] if c["id"] == "vars.gid"]
    return dict(gid)


def test_the_doctors_gid_check_follows_nccl_socket_family(tmp_path: Path) -> None:
    """Planted bug: the doctor's GID check (vars.gid, judged by
    ``hpnet.nccl.fill.decide``) ignores NCCL_SOCKET_FAMILY (passes no socket family to
    ``hpnet.nccl.rules.gid_family``), so under ``NCCL_SOCKET_FAMILY=AF_INET6`` it passes
    an IPv4-mapped GID and fails the global IPv6 one, as if the network were IPv4.

    The node is the recorded RoCE host (cx-roce-mixed-gids: mlx5_0 port 1 has RoCE v2
    GIDs 1, link-local fe80, and 3, IPv4-mapped 12.12.11.12), and the same tree with
    a global IPv6 address on eth4 (its RoCE v1 / v2 GIDs in slots 4 and 5).
    """
    from hpnet.node.snapshot import materialize

    recorded = tmp_path / "recorded"
    recorded.mkdir()
    materialize(ROCE.read_text(), recorded, source=str(ROCE))
    text = ROCE.read_text()
    for old, new in WITH_IPV6.items():
        assert text.count(old + "\n") == 1, old
        text = text.replace(old + "\n", new + "\n")
    ipv6 = tmp_path / "with-ipv6"
    ipv6.mkdir()
    materialize(text, ipv6, source=f"{ROCE} with a global IPv6 address on eth4")

    def gid(root: Path, index: int, family: str) -> dict[str, Any]:
        variables = {"NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": str(index)}
        return doctor_gid(root, {**variables, "NCCL_SOCKET_FAMILY": family}, tmp_path)

    # the recorded node: GID 3 is the one under AF_INET, and none is under AF_INET6
    found = gid(recorded, 3, "AF_INET")
    assert found["status"] == "PASS", found
    assert found["summary"] == "GID 3 is RoCE v2 and IPv4-mapped on mlx5_0:1"
    found = gid(recorded, 3, "AF_INET6")
    assert found["status"] == "FAIL", found
    assert found["evidence"] == ["mlx5_0:1 GID 3 is ipv4-mapped, not global IPv6"]
    found = gid(recorded, 1, "AF_INET6")
    assert found["status"] == "FAIL", found
    assert found["evidence"] == ["mlx5_0:1 GID 1 is ipv6-link-local, not global IPv6"]

    # with a global IPv6 GID: each family has its own index, and the fix names it
    found = gid(ipv6, 5, "AF_INET6")
    assert found["status"] == "PASS", found
    assert found["summary"] == "GID 5 is RoCE v2 and global IPv6 on mlx5_0:1"
    found = gid(ipv6, 3, "AF_INET6")
    assert found["status"] == "FAIL", found
    assert found["evidence"] == ["mlx5_0:1 GID 3 is ipv4-mapped, not global IPv6"]
    assert found["fix"] == "export NCCL_IB_GID_INDEX=5"
    found = gid(ipv6, 3, "AF_INET")
    assert found["status"] == "PASS", found
    found = gid(ipv6, 5, "AF_INET")
    assert found["status"] == "FAIL", found
    assert found["evidence"] == ["mlx5_0:1 GID 5 is ipv6-global, not IPv4-mapped"]
    assert found["fix"] == "export NCCL_IB_GID_INDEX=3"
    # NCCL_IB_ADDR_FAMILY, where set, is the family (rules.gid_family)
    found = doctor_gid(ipv6, {
        "NCCL_IB_HCA": "=mlx5_0:1", "NCCL_IB_GID_INDEX": "3",
        "NCCL_IB_ADDR_FAMILY": "AF_INET", "NCCL_SOCKET_FAMILY": "AF_INET6",
    }, tmp_path)  # fmt: skip
    assert found["status"] == "PASS", found
