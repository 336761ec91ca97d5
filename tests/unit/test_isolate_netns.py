"""`hpnet isolate` through `hpnet launch` on six "nodes": Linux network namespaces on
this machine, each with its own host name (a UTS namespace), joined by a bridge in a
"switch" namespace of their own, with a slow link planted on one node's port by
``tc qdisc ... netem rate`` (or, on a kernel built without netem, a token bucket
filter of the same rate: ``tc qdisc ... tbf rate``).

Each node's veth end (``hpnet0``) is its only way to the others; the other end is a
port of the bridge ``br0`` in the switch namespace. hpnet launch runs in the root
namespace and starts each node's torchrun agent "over ssh"; the ssh it finds is a
stand-in that runs the remote command line with an empty environment inside the
node's namespaces (network and host name), as ssh gives a login shell on a real node.
The isolate rounds (gloo all_reduces between pairs of nodes) then cross the bridge for
real, and the planted rate limit makes one node's every test slow.

Needs root, iproute2's ip and tc and unshare (CI runs as root);
skipped with the reason otherwise. The addresses (10.232.x.0/24) are reachable from
nowhere else; everything is deleted afterwards, and the test checks that no process is
left in any node.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.unit.test_launch_run import _port, environment

HPNET = [sys.executable, "-m", "hpnet"]
IP, TC, UNSHARE = shutil.which("ip"), shutil.which("tc"), shutil.which("unshare")
NODES = 6
#: bandwidth measured on CPU ranks: these tests run alone, after the others (README)
pytestmark = pytest.mark.host_load

SSH = """#!/bin/sh
# ssh stand-in: ssh -o BatchMode=yes [-p PORT] HOST -- REMOTE, run in HOST's namespaces
while [ $# -gt 0 ]; do
  case "$1" in
    -o|-p) shift 2 ;;
    --) shift; break ;;
    *) host=$1; shift ;;
  esac
done
case "$host" in
{cases}
  *) echo "ssh stand-in: no namespace holds $host" >&2; exit 255 ;;
esac
exec env -i PATH="{path}" HOME=/tmp ip netns exec "$ns" \\
  unshare --uts sh -c 'hostname "$0" && exec sh -c "$1"' "$name" "$1"
"""


def _run(*argv: str) -> None:
    subprocess.run(list(argv), check=True, capture_output=True, timeout=30)


class Cluster:
    """Namespaces ``<tag>n0`` .. ``<tag>n5`` and the switch ``<tag>sw``."""

    def __init__(self, tag: str, subnet: str) -> None:
        self.tag, self.subnet = tag, subnet
        self.switch = f"{tag}sw"
        self.nodes = [f"{tag}n{i}" for i in range(NODES)]
        self.addresses = [f"{subnet}.{i + 1}" for i in range(NODES)]
        self.names = [f"node-{i}" for i in range(NODES)]

    def create(self) -> None:
        assert IP is not None
        _run(IP, "netns", "add", self.switch)
        _run(IP, "-n", self.switch, "link", "add", "br0", "type", "bridge")
        _run(IP, "-n", self.switch, "link", "set", "br0", "up")
        for i, ns in enumerate(self.nodes):
            _run(IP, "netns", "add", ns)
            port = f"p{i}"
            _run(IP, "-n", self.switch, "link", "add", port, "type", "veth", "peer", "name",
                 "hpnet0", "netns", ns)  # fmt: skip
            _run(IP, "-n", self.switch, "link", "set", port, "master", "br0", "up")
            _run(IP, "-n", ns, "addr", "add", f"{self.addresses[i]}/24", "dev", "hpnet0")
            _run(IP, "-n", ns, "link", "set", "hpnet0", "up")
            _run(IP, "-n", ns, "link", "set", "lo", "up")

    def slow(self, index: int, rate: str) -> str:
        """Every byte node ``index`` sends leaves at ``rate``: netem's rate where the
        kernel has netem (sch_netem), else a token bucket (sch_tbf) of the same rate.
        The qdisc used."""
        assert IP is not None and TC is not None
        prefix = [IP, "netns", "exec", self.nodes[index], TC, "qdisc", "add", "dev", "hpnet0"]
        try:
            _run(*prefix, "root", "netem", "rate", rate)
        except subprocess.CalledProcessError:
            _run(*prefix, "root", "tbf", "rate", rate, "burst", "32kbit", "latency", "400ms")
            return "tbf"
        return "netem"

    def pids(self) -> list[int]:
        assert IP is not None
        found = []
        for ns in self.nodes:
            done = subprocess.run(
                [IP, "netns", "pids", ns], capture_output=True, text=True, timeout=30, check=False
            )
            found += [int(p) for p in done.stdout.split()]
        return found

    def delete(self) -> None:
        assert IP is not None
        for ns in [*self.nodes, self.switch]:
            subprocess.run([IP, "netns", "del", ns], capture_output=True, timeout=30, check=False)


@pytest.fixture
def cluster() -> Iterator[Cluster]:
    if IP is None or TC is None or UNSHARE is None or os.geteuid() != 0:
        pytest.skip("network namespaces need root and iproute2's ip and tc, and unshare")
    pid = os.getpid()
    made = Cluster(f"hi{pid % 100000}", f"10.232.{pid % 250}")
    try:
        made.create()
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        made.delete()
        pytest.skip(f"cannot build the namespaces here: {exc}")
    try:
        yield made
    finally:
        made.delete()


def isolate(cluster: Cluster, tmp_path: Path, *extra: str) -> tuple[int, dict[str, Any], str]:
    """hpnet launch ... -- hpnet isolate --json over the cluster: exit code, rank 0's
    JSON, the whole output."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    cases = "\n".join(
        f"  {address}) ns={ns} name={name} ;;"
        for address, ns, name in zip(cluster.addresses, cluster.nodes, cluster.names, strict=True)
    )
    path = f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin"
    ssh = bin_dir / "ssh"
    ssh.write_text(SSH.format(cases=cases, path=path))
    ssh.chmod(0o755)
    env = environment()
    env.update(PATH=f"{bin_dir}:{env['PATH']}", GLOO_SOCKET_IFNAME="hpnet0")
    done = subprocess.run(
        [*HPNET, "launch", "--hosts", ",".join(cluster.addresses), "--nproc-per-node", "1",
         "--master-port", str(_port()), "--", sys.executable, "-m", "hpnet", "isolate",
         "--device", "cpu", "--bytes", "256K", "--iters", "8", "--json", *extra],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=420, check=False,
    )  # fmt: skip
    # rank 0's lines, as hpnet launch prefixes node 0's output
    prefix = "[node 0] "
    lines = [line[len(prefix) :] for line in done.stdout.splitlines() if line.startswith(prefix)]
    start = next((i for i, line in enumerate(lines) if line == "{"), None)
    assert start is not None, done.stdout + done.stderr
    data = json.loads("\n".join(lines[start : lines.index("}", start) + 1]))
    return done.returncode, data, done.stdout + done.stderr


def _nothing_left(cluster: Cluster) -> None:
    deadline = time.monotonic() + 20
    while cluster.pids() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert cluster.pids() == [], "processes left running in the nodes"


def test_a_clean_cluster_has_no_outlier(cluster: Cluster, tmp_path: Path) -> None:
    code, data, out = isolate(cluster, tmp_path)
    assert sorted(data["nodes"]) == cluster.names, out
    assert data["outliers"] == [], out
    assert code == 0, out
    _nothing_left(cluster)


@pytest.mark.parametrize("slow", [2, 5])
def test_a_slow_link_names_its_node_and_nothing_else(
    cluster: Cluster, tmp_path: Path, slow: int
) -> None:
    cluster.slow(slow, "40mbit")
    code, data, out = isolate(cluster, tmp_path)
    named = [(o["kind"], o.get("node")) for o in data["outliers"]]
    why = json.dumps({k: data[k] for k in ("outliers", "rounds", "pairs")}, indent=1)
    assert named == [("node", cluster.names[slow])] or named == [("rail", cluster.names[slow])], why
    (outlier,) = data["outliers"]
    assert outlier["fault"] == "hardware"
    # the evidence is the numbers: the pair, and the re-pair with a node proven good
    assert any("GB/s" in line for line in outlier["evidence"]), outlier
    assert code == 1, out
    _nothing_left(cluster)
