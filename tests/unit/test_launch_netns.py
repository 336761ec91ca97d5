"""`hpnet launch` across two "nodes" that are Linux network namespaces on this machine.

Each namespace has its own network stack, one end of a veth pair (named ``hpnet0`` in
both) and its own address; nothing but the veth joins them. hpnet launch runs in the
root namespace and starts each node's torchrun agent "over ssh"; the ssh it finds is a
stand-in that runs the remote command line with an empty environment inside the
namespace that holds the host's address (what ssh does on a real node: a login shell
that knows nothing of the caller's environment). torchrun's rendezvous and gloo's
all_reduce then cross between the two network stacks for real, so this is the
multi-node path (remote command line, quoting, environment propagation, rendezvous on
the first node's address) with only ssh's transport replaced.

Needs root and ``ip netns`` (CI runs as root); skipped with the reason otherwise. The
addresses are the namespaces' own (10.231.x.0/24 on the veth), reachable from nowhere
else.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.unit.test_launch_run import RANK, _port, environment

HPNET = [sys.executable, "-m", "hpnet"]
IP = shutil.which("ip")

#: the rank program of test_launch_run, and where its process ran: the network devices
#: of its namespace (ip netns exec mounts a sysfs of the namespace) and torchrun's
#: rendezvous address
RANK_HERE = RANK.replace(
    'json.dump({"env": seen,',
    'json.dump({"net": sorted(os.listdir("/sys/class/net")), '
    '"master": os.environ.get("MASTER_ADDR"), "env": seen,',
)
assert RANK_HERE != RANK

SSH = """#!/bin/sh
# ssh stand-in for the test: ssh -o BatchMode=yes [-p PORT] HOST -- REMOTE
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
exec env -i PATH="{path}" HOME=/tmp ip netns exec "$ns" sh -c "$1"
"""


def _ip(*args: str) -> None:
    assert IP is not None
    subprocess.run([IP, *args], check=True, capture_output=True, timeout=30)


@pytest.fixture
def two_nodes(tmp_path: Path) -> Iterator[dict[str, str]]:
    """Two network namespaces joined by a veth pair: address -> namespace."""
    if IP is None or os.geteuid() != 0:
        pytest.skip("network namespaces need root and iproute2's ip")
    tag = f"{os.getpid() % 100000}"
    names = (f"hpnet{tag}a", f"hpnet{tag}b")
    subnet = f"10.231.{os.getpid() % 250}"
    try:
        _ip("netns", "add", names[0])
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        pytest.skip(f"cannot create a network namespace here: {exc}")
    try:
        _ip("netns", "add", names[1])
        _ip("link", "add", f"hv{tag}a", "type", "veth", "peer", "name", f"hv{tag}b")
        nodes = {}
        for end, ns, host in (("a", names[0], 1), ("b", names[1], 2)):
            _ip("link", "set", f"hv{tag}{end}", "netns", ns)
            _ip("-n", ns, "link", "set", f"hv{tag}{end}", "name", "hpnet0")
            _ip("-n", ns, "addr", "add", f"{subnet}.{host}/24", "dev", "hpnet0")
            _ip("-n", ns, "link", "set", "hpnet0", "up")
            _ip("-n", ns, "link", "set", "lo", "up")
            nodes[f"{subnet}.{host}"] = ns
        yield nodes
    finally:
        for ns in names:  # deleting a namespace deletes its end of the veth, and the pair
            subprocess.run([IP, "netns", "del", ns], capture_output=True, timeout=30, check=False)


def test_torchrun_across_two_network_namespaces(two_nodes: dict[str, str], tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cases = "\n".join(f"  {host}) ns={ns} ;;" for host, ns in two_nodes.items())
    path = f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin"
    ssh = bin_dir / "ssh"
    ssh.write_text(SSH.format(cases=cases, path=path))
    ssh.chmod(0o755)
    (tmp_path / "rank.py").write_text(RANK_HERE)
    hosts = list(two_nodes)
    env = environment()
    env.update(PATH=f"{bin_dir}:{env['PATH']}", GLOO_SOCKET_IFNAME="hpnet0")
    done = subprocess.run(
        [*HPNET, "launch", "--hosts", ",".join(hosts), "--nproc-per-node", "1",
         "--master-port", str(_port()), "--env", "MY_SETTING", "--",
         sys.executable, "rank.py", str(tmp_path)],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    ranks = [json.loads(p.read_text()) for p in sorted(tmp_path.glob("rank*.json"))]
    assert len(ranks) == 2 and {r["world"] for r in ranks} == {2}
    for rank in ranks:
        # each rank ran inside a namespace: its only devices are lo and the veth end
        assert rank["net"] == ["hpnet0", "lo"], rank["net"]
        # the rendezvous is on the first node's address, reached across the veth
        assert rank["master"] == hosts[0]
        seen = rank["env"]
        assert seen["MY_SETTING"] == "forwarded" and seen["NCCL_DEBUG"] == "WARN"
        # nothing of the caller's environment leaks but what hpnet forwards
        assert "HF_TOKEN" not in seen and "AWS_SECRET_ACCESS_KEY" not in seen
    # each node's output comes back prefixed with its node
    assert "[node 0] " in done.stdout and "[node 1] " in done.stdout


def _pids(ns: str) -> list[int]:
    assert IP is not None
    done = subprocess.run(
        [IP, "netns", "pids", ns], capture_output=True, text=True, timeout=30, check=False
    )
    return [int(p) for p in done.stdout.split()]


def test_a_node_that_dies_ends_the_job_on_every_node(
    two_nodes: dict[str, str], tmp_path: Path
) -> None:
    """Everything on node 1 is killed mid-job: hpnet launch ends the job promptly, names
    the node, and leaves nothing running on node 0."""
    import signal
    import time

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    cases = "\n".join(f"  {host}) ns={ns} ;;" for host, ns in two_nodes.items())
    path = f"{Path(sys.executable).parent}:/usr/sbin:/usr/bin:/sbin:/bin"
    (bin_dir / "ssh").write_text(SSH.format(cases=cases, path=path))
    (bin_dir / "ssh").chmod(0o755)
    (tmp_path / "rank.py").write_text(RANK_HERE)
    hosts, (ns0, ns1) = list(two_nodes), list(two_nodes.values())
    env = environment()
    env.update(PATH=f"{bin_dir}:{env['PATH']}", GLOO_SOCKET_IFNAME="hpnet0")
    proc = subprocess.Popen(
        [*HPNET, "launch", "--hosts", ",".join(hosts), "--nproc-per-node", "1",
         "--master-port", str(_port()), "--", sys.executable, "rank.py", str(tmp_path), "60"],
        cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while len(list(tmp_path.glob("rank*.json"))) < 2:  # both ranks are in the job
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the ranks did not start"
            time.sleep(0.2)
        killed_at = time.monotonic()
        for pid in _pids(ns1):  # node 1 dies: its agent and its rank at once
            os.kill(pid, signal.SIGKILL)
        out, err = proc.communicate(timeout=60)
        ended_after = time.monotonic() - killed_at
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode not in (0, None), out + err
    assert ended_after < 30, f"the job outlived its dead node by {ended_after:.0f} s"
    assert "node 1" in err, err
    deadline = time.monotonic() + 20
    while _pids(ns0) and time.monotonic() < deadline:
        time.sleep(0.2)
    left = _pids(ns0)
    shown = subprocess.run(
        ["ps", "-o", "pid,ppid,pgid,sid,stat,etime,args", "-p", ",".join(map(str, left)) or "0"],
        capture_output=True, text=True, check=False,
    ).stdout  # fmt: skip
    assert left == [], f"processes left running on node 0:\n{shown}"
