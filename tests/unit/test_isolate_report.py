"""`hpnet isolate --report DIR`: report.json is the --json document, report.html shows
the verdict, the node x node matrix and the per-node bars of a simulated run, stays a
reasonable size on 1,024 nodes, escapes hostile node names, renders in a headless
browser; a directory that cannot be written is an InputError."""

from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from hpnet.errors import InputError
from hpnet.isolate.report import MATRIX_MAX_NODES, render_html, shown_nodes, write_report
from hpnet.isolate.simulate import Cluster, SlowNic
from tests.unit.test_isolate_schema_doc import document, documents

BROWSER = shutil.which("chromium-headless-shell") or shutil.which("chromium")
HOSTILE = '<script>alert("x")</script>'
QUOTES = "a'b\"c&d"


def whole_node_pairs(data: dict[str, Any]) -> set[frozenset[str]]:
    return {frozenset((p["a"], p["b"])) for p in data["pairs"] if p["rail"] is None}


def renamed(value: Any, names: dict[str, str]) -> Any:
    """``value`` with each node name replaced inside every string of it."""
    if isinstance(value, str):
        for old, new in names.items():
            value = value.replace(old, new)
        return value
    if isinstance(value, list):
        return [renamed(v, names) for v in value]
    if isinstance(value, dict):
        return {k: renamed(v, names) for k, v in value.items()}
    return value


def test_the_page_has_the_verdict_matrix_and_bars() -> None:
    data = documents()["rail and configuration, with drift"]
    page = render_html(data)
    assert "2 OUTLIERS among 16 nodes x 8 rails, nccl, all_reduce of 64 MiB x 20" in page
    # a cell per tested ordered pair: both (a, b) and (b, a)
    assert "id='matrix'" in page
    assert page.count("class='cell'") == 2 * len(whole_node_pairs(data)) > 16
    # a best and a median bar per node, against the cluster median's line
    assert "id='bars'" in page
    assert page.count("class='median'") == page.count("class='best'") == 16
    assert f"cluster {data['cluster_median_gbps']:.1f}" in page
    # each outlier: evidence first, then the fix, then the drain commands
    for outlier in data["outliers"]:
        evidence = [page.index(html.escape(line)) for line in outlier["evidence"]]
        fix = page.index(f"fix: {html.escape(outlier['fix'])}")
        drain = page.index(html.escape(outlier["drain"][0]))
        assert max(evidence) < fix < drain
    assert "id='rounds'" in page and "3 rails" in page and "id='rail-tests'" in page
    assert "id='drift'" in page and "versions.nccl" in page and "no majority" in page
    assert "id='sample'" not in page  # 16 nodes: all shown


def test_the_slow_cells_and_bars_are_red_and_the_baseline_drawn() -> None:
    data = documents()["cluster"]
    page = render_html(data)
    assert f"baseline {data['baseline_median_gbps']:.1f}" in page
    slow = documents()["node"]
    bad = next(o["node"] for o in slow["outliers"])
    page = render_html(slow)
    cells = re.findall(r"<rect class='cell'[^>]*fill='hsl\((\d+),[^>]*><title>([^<:]*)", page)
    reds = {pair for hue, pair in cells if int(hue) < 30}  # about half the median or less
    assert reds and all(bad in pair for pair in reds)
    # the slowest node's bar comes first
    first_bar = re.search(r"id='bars'.*?<title>([^<]+)</title>", page)
    assert first_bar is not None and first_bar.group(1) == bad


def test_a_failed_test_is_a_dark_cell() -> None:
    data = documents()["failed tests"]
    page = render_html(data)
    assert "fill='#333'><title>" in page and "failed: DistBackendError" in page


def test_a_clean_run_says_no_outlier() -> None:
    page = render_html(documents()["clean"])
    assert "NO OUTLIER among 16 nodes" in page and "id='outliers'" not in page
    assert "class='verdict ready'" in page


def test_a_big_cluster_shows_the_outliers_the_suspects_and_a_sample() -> None:
    cluster = Cluster(num_nodes=1024, rails=8)
    bad = cluster.node(700)
    data = document(cluster, (SlowNic(node=bad, rail=3),))
    assert [o["node"] for o in data["outliers"]] == [bad]
    shown, note = shown_nodes(data)
    assert len(shown) == MATRIX_MAX_NODES and bad in shown and note is not None
    suspects = {n for p in data["pairs"] if p["round"] >= 2 for n in (p["a"], p["b"])}
    assert suspects <= set(shown)
    assert shown == [n for n in data["nodes"] if n in shown]  # in the job's order
    page = render_html(data)
    assert "1024 nodes: the matrix and the bars show" in page
    assert len(page) < 250_000  # the page stays reasonable
    # every cell is between two shown nodes; the sample comes as round-1 pairs
    cells = page.count("class='cell'")
    shown_pairs = {p for p in whole_node_pairs(data) if p <= set(shown)}
    assert cells == 2 * len(shown_pairs) >= MATRIX_MAX_NODES


def test_hostile_node_names_are_escaped() -> None:
    data = documents()["rail and configuration, with drift"]
    bad = data["outliers"][0]["node"]
    data = renamed(data, {bad: HOSTILE, "node0010": QUOTES, "node0007": "n7\x1b[2J\u202e"})
    page = render_html(data)
    assert "<script" not in page.lower() and 'alert("x")' not in page
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert QUOTES not in page and "a&#x27;b&quot;c&amp;d" in page
    assert "\x1b" not in page and "\u202e" not in page and "n7\\x1b[2J\\u202e" in page
    # the names also reach the matrix's labels and tooltips, escaped
    assert page.count("&lt;script&gt;") > 5


def test_write_report_writes_the_json_and_the_page(tmp_path: Path) -> None:
    data = documents()["link"]
    write_report(str(tmp_path / "a" / "b"), data)
    assert json.loads((tmp_path / "a" / "b" / "report.json").read_text()) == data
    page = (tmp_path / "a" / "b" / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "the link node" in page
    # self-contained: no script, nothing fetched
    assert "<script" not in page and not re.search(r"\b(src|href)=|@import|url\(", page)


def test_write_errors_are_input_errors(tmp_path: Path) -> None:
    data = documents()["clean"]
    blocker = tmp_path / "file"
    blocker.write_text("")
    with pytest.raises(InputError) as caught:
        write_report(str(blocker / "out"), data)
    assert caught.value.code == "unwritable" and caught.value.where == f"--report {blocker}/out"
    assert caught.value.fix == "--report a writable directory"
    taken = tmp_path / "taken"
    (taken / "report.html").mkdir(parents=True)  # a directory where the page goes
    with pytest.raises(InputError, match="could not be written"):
        write_report(str(taken), data)


def browser(*args: str) -> subprocess.CompletedProcess[str]:
    assert BROWSER is not None
    return subprocess.run(
        [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", *args],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip


@pytest.mark.skipif(
    BROWSER is None, reason="no headless Chromium (Debian: chromium-headless-shell)"
)
def test_the_html_report_renders_in_a_headless_browser(tmp_path: Path) -> None:
    data = renamed(documents()["rail and configuration, with drift"], {"node0015": HOSTILE})
    write_report(str(tmp_path), data)
    page = (tmp_path / "report.html").as_uri()
    dom = browser("--dump-dom", page).stdout
    assert '<svg id="matrix"' in dom and '<svg id="bars"' in dom
    assert dom.count('class="cell"') == 2 * len(whole_node_pairs(data))
    assert dom.count('class="median"') == 16 and "<b>2 OUTLIERS among 16 nodes" in dom
    assert "<script" not in dom and "&lt;script&gt;alert" in dom  # shown, not run
    shot = tmp_path / "shot.png"
    browser(f"--screenshot={shot}", "--window-size=1100,1800", page)
    assert shot.exists() and shot.stat().st_size > 30_000  # text, heatmap and bars drawn


@pytest.mark.host_load  # bandwidth on CPU ranks: run alone (README's test command)
def test_the_command_writes_the_report_in_a_real_job(tmp_path: Path) -> None:
    """4 ranks, each its own node (NCCL_HOSTID), gloo on the CPU: `hpnet isolate
    --report` under torchrun writes the document it prints."""
    pytest.importorskip("torch")
    from hpnet.localrun import free_port

    torchrun = Path(sys.executable).with_name("torchrun")
    if not torchrun.exists():
        pytest.skip("no torchrun beside this Python")
    rank = tmp_path / "rank.sh"
    rank.write_text(
        "#!/bin/sh\nexport NCCL_HOSTID=host$LOCAL_RANK\n"
        f"exec {sys.executable} -m hpnet isolate --device cpu --iters 3 --bytes 64K "
        f'--report {tmp_path / "out"} --json "$@"\n'
    )
    rank.chmod(0o755)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NCCL_", "RANK"))}
    done = subprocess.run(
        [str(torchrun), "--nproc-per-node", "4", "--master-port", str(free_port()),
         "--no-python", str(rank)],
        capture_output=True, text=True, timeout=300, env={**env, "CUDA_VISIBLE_DEVICES": ""},
        cwd=tmp_path, check=False,
    )  # fmt: skip
    assert done.returncode in (0, 1) and "{" in done.stdout, done.stderr[-3000:]
    printed = json.loads(done.stdout[done.stdout.index("{") :])  # rank 0's document
    assert printed["nodes"] == ["host0", "host1", "host2", "host3"]
    assert json.loads((tmp_path / "out" / "report.json").read_text()) == printed
    page = (tmp_path / "out" / "report.html").read_text()
    cells = 2 * len(whole_node_pairs(printed))
    assert "id='matrix'" in page and page.count("class='cell'") == cells >= 4
