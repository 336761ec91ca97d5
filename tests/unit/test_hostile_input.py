"""Bad and hostile input: a clear error or a partial result, never a traceback,
a hang, an exhausted memory or a write outside the destination.

Each case here crashed, hung or escaped before it was fixed (review of issue 2).
"""

from __future__ import annotations

import contextlib
import functools
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from hpnet.cli.main import main
from hpnet.detect import DetectOptions, detect
from hpnet.errors import ParseError
from hpnet.node.snapshot import materialize
from hpnet.node.sysfs import MAX_ATTRIBUTE_BYTES, FsRoot
from hpnet.rdma.listings import parse_listing, parse_show_gids
from hpnet.rdma.model import PortState
from hpnet.runner import RecordedRunner
from tests.conftest import listing_text

Tree = Callable[[str], Path]


def run_cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().err


def test_many_blank_lines_are_read_in_linear_time(tmp_path: Path) -> None:
    """Kind detection once scanned with `^\\s*` over the whole text: 80k blank lines
    then one line took minutes. In a subprocess with a time limit, so a regression
    fails instead of hanging the suite."""
    path = tmp_path / "blank.txt"
    path.write_text("\n" * 200_000 + "x\n")
    done = subprocess.run(
        [sys.executable, "-m", "hpnet", "detect", "--from", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert done.stderr.startswith("error[listing-unrecognised]: ")


def test_long_lines_of_white_space_do_not_backtrack() -> None:
    text = "hca_id:\tmlx5_0\n\tfw_ver:" + " " * 3000 + "x" + "\n" + "GID[  0]:" + " " * 3000 + ",\n"
    kind, (devices, _) = parse_listing(text)
    assert kind == "ibv_devinfo" and devices[0].fw_ver == "x"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_listing_from_a_character_device(capsys: pytest.CaptureFixture[str]) -> None:
    code, err = run_cli(["detect", "--from", "/dev/zero"], capsys)
    assert code == 2
    assert err.startswith("error[listing-not-a-file]: is not a regular file")


def test_listing_from_a_fifo(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    code, err = run_cli(["detect", "--from", str(fifo)], capsys)  # no writer: must not block
    assert code == 2 and "is not a regular file" in err


def test_listing_too_large(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = tmp_path / "big.txt"
    with path.open("wb") as handle:
        handle.truncate(17 * 1024 * 1024)  # sparse: 17 MiB of NUL bytes on no disk
    code, err = run_cli(["detect", "--from", str(path)], capsys)
    assert code == 2 and err.startswith("error[listing-too-large]: ")


def test_non_utf8_listing_is_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "latin1.txt"
    path.write_bytes(
        listing_text("ibstat-cx6-hdr-active-and-down.txt").encode() + b"\xff\xfe junk\n"
    )
    code, err = run_cli(["detect", "--json", "--from", str(path)], capsys)
    assert code == 0, err


def test_hostile_sysfs_attributes(sysfs_tree: Tree, tmp_path: Path) -> None:
    root = sysfs_tree("cx6-ib-dgx")
    ports = root / "sys/class/infiniband"
    os.mkfifo(tmp_path / "fifo")
    outside = tmp_path / "secret"
    outside.write_text("4: ACTIVE\n")
    replace = {
        "mlx5_0/ports/1/state": os.mkfifo,  # would block a plain open()
        "mlx5_1/ports/1/state": lambda p: p.symlink_to("/dev/zero"),  # would never end
        "mlx5_2/ports/1/state": lambda p: p.symlink_to(outside),  # leaves the root
        "mlx5_3/ports/1/state": lambda p: p.symlink_to(p.name),  # a loop
    }
    for rel, make in replace.items():
        path = ports / rel
        path.unlink()
        make(path)
    (ports / "mlx5_0/fw_ver").write_bytes(b"\xff\xfe garbage")  # not UTF-8
    huge = ports / "mlx5_1/board_id"
    with huge.open("wb") as handle:
        handle.truncate(4 * MAX_ATTRIBUTE_BYTES)
    inv = detect(
        DetectOptions(sysfs_root=str(root)), runner=RecordedRunner({}), env={}, python_path=[]
    )
    devices = {d.name: d for d in inv.rdma_devices}
    assert {d.ports[0].state for d in devices.values()} == {PortState.UNKNOWN}
    assert devices["mlx5_0"].fw_ver is not None  # decoded with replacement, not a crash
    assert devices["mlx5_1"].board_id is None  # NUL bytes: not text; the read was bounded
    assert sum(p.code == "sysfs-unreadable" for p in inv.problems) == 4


def test_fsroot_refuses_links_out_of_a_recorded_root(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    (tmp_path / "outside").write_text("secret\n")
    (tmp_path / "root/leak").symlink_to("../outside")
    assert FsRoot(tmp_path / "root").read("leak") is None
    assert FsRoot(tmp_path).read("outside") == "secret"


def test_materialize_refuses_to_escape_through_a_link(tmp_path: Path) -> None:
    dest = tmp_path / "dest"
    dest.mkdir()
    text = "sys/esc -> ../../outside\nsys/esc/pwned = hello\n"
    with pytest.raises(ParseError, match="leaves the snapshot root") as info:
        materialize(text, dest, source="evil.tree")
    assert info.value.where == "evil.tree:2"
    assert not (tmp_path / "outside").exists()


@pytest.mark.parametrize("line", ["/etc/passwd = x", "sys/../../x = y", "sys/l -> /etc"])
def test_materialize_refuses_absolute_and_parent_paths(tmp_path: Path, line: str) -> None:
    with pytest.raises(ParseError, match="leaves the snapshot root"):
        materialize(line + "\n", tmp_path)


def test_snapshot_command_reports_errors_without_traceback(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "hpnet.node.snapshot", "materialize", str(tmp_path / "no.tree"),
         str(tmp_path)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert done.stderr.startswith("error[snapshot-io]: No such file or directory")
    assert "Traceback" not in done.stderr


def test_ibv_devinfo_cut_before_its_first_port() -> None:
    text = listing_text("ibv_devinfo-v-roce-cx5-mixed-gids.txt")[:300]
    _, (devices, problems) = parse_listing(text, source="cut.txt")
    assert devices[0].ports == ()
    assert [p.code for p in problems] == ["listing-truncated"]
    assert "no port section" in problems[0].what


def test_ibv_devinfo_hca_id_without_a_name() -> None:
    with pytest.raises(ParseError, match="without a device name") as info:
        parse_listing("hca_id:\n\tport:\t1\n", source="x.txt")
    assert info.value.where == "x.txt:1"


def test_show_gids_cut_short_and_with_a_broken_row() -> None:
    lines = listing_text("show_gids-mlnx-8hca-mixed-ib-row.txt").splitlines()
    rows = [i for i, line in enumerate(lines) if line.startswith("mlx5_")]
    damaged = [*lines[: rows[3]], "mlx5_2\t1\t3\t0000:00", *lines[rows[-1] + 1 :]]
    devices, problems = parse_show_gids(damaged, source="cut.txt")
    codes = sorted(p.code for p in problems)
    assert codes == ["listing-bad-row", "listing-truncated"]
    assert any("n_gids_found=19" in p.what for p in problems)
    assert sum(len(p.gids) for d in devices for p in d.ports) == 3


def test_garbage_sysfs_state_is_reported(sysfs_tree: Tree) -> None:
    root = sysfs_tree("cx6-ib-dgx")
    (root / "sys/class/infiniband/mlx5_0/ports/1/state").write_text("banana\n")
    inv = detect(
        DetectOptions(sysfs_root=str(root)), runner=RecordedRunner({}), env={}, python_path=[]
    )
    assert inv.rdma_devices[0].ports[0].state is PortState.UNKNOWN
    assert any(p.code == "sysfs-bad-value" and "banana" in p.what for p in inv.problems)


# ------------------------------------------------------------------ hostile NCCL values

#: values no variable should crash on: digits Python's isdigit() takes and int() or C
#: does not, numbers out of every range, list markers with nothing after them, white
#: space, shell syntax, control characters and very long text
WEIRD_VALUES = (
    "", " ", "\t", "\n", "1\n2", "²", "٣", "--5", "+-1", "0x", "0x3", "08", "1e3",
    "99999999999999999999999", "-99999999999999999999999", "9223372036854775808",
    "-1", "-0", "^", "^=", "=", "==", ":", ":1", ":::", ",", ",,", "^,", "=,", "mlx5_0:1:2:3:4",
    "mlx5_0:x", "mlx5_0:-1", " mlx5_0", "lo", "^lo", "10.0.0.0/33", "10.0.0.0/-1", "::/200",
    "garbage/8", "AF_INET ", "af_inet6", " INFO", "trace", "$(id)", "`id`", "'", '"', "\\",
    "%s%n", "\u2603", "\x7f", "a" * 4000,
)  # fmt: skip
#: trees that exercise every branch: RoCE with mixed GIDs, eRDMA, InfiniBand, nothing
HOSTILE_TREES = ("cx-roce-mixed-gids", "erdma-alibaba", "cx6-ib-dgx", "no-rdma-vm")


def _run_everything(inventory: object, variables: dict[str, str]) -> None:
    """Doctor's checks and renderers, and env's resolution in every format: errors
    hpnet raises on purpose are fine, anything else is a bug."""
    from hpnet.doctor.model import Facts, Report
    from hpnet.doctor.registry import run_checks
    from hpnet.errors import HpnetError
    from hpnet.jsonout import dumps
    from hpnet.nccl.env import resolve_env
    from hpnet.nccl.formats import FORMATS, explain, render
    from hpnet.profiles import get_profile
    from hpnet.render.doctor import render_report

    for profile, version in ((None, None), ("roce", "2.18.3"), ("pai-lingjun", "2.30.7")):
        facts = Facts(
            inventory=inventory,  # type: ignore[arg-type]
            variables=variables,
            variables_source="test",
            profile=get_profile(profile) if profile else None,
            nccl_version=version,
        )
        report = Report(node="n", profile=profile, variables_source="t", checks=run_checks(facts))
        render_report(report)
        dumps(report)
    for profile in ("auto", "pai-lingjun"):
        resolution = resolve_env(
            get_profile(profile),
            inventory,  # type: ignore[arg-type]
            environment=variables,
            nccl_version="2.21.5",
        )
        explain(resolution)
        for fmt in FORMATS:
            # a newline in a value is a clear error, by design
            with contextlib.suppress(HpnetError):
                render(resolution, fmt)


@pytest.fixture
def suggest_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """catalog.suggest (the known name an unknown name is a typo of: difflib against
    every name NCCL reads) depends on the name alone, not on its value: computed once
    per name for the loop below, which runs each unknown name with every weird value
    (it was a third of its time). Each name still goes through the real suggest, and
    an exception is never cached."""
    from hpnet.nccl import catalog

    once = functools.cache(catalog.suggest)
    for module in ("hpnet.nccl.catalog", "hpnet.nccl.env", "hpnet.nccl.config",
                   "hpnet.doctor.checks.variables"):  # fmt: skip
        monkeypatch.setattr(f"{module}.suggest", once)


def _inventory(sysfs_tree: Tree, name: str) -> object:
    return detect(
        DetectOptions(sysfs_root=str(sysfs_tree(name))),
        runner=RecordedRunner({}),
        env={},
        python_path=[],
    )


def _read_by_name() -> list[str]:
    """The NCCL_* names hpnet's env and doctor code reads by name: each has code of
    its own, so each is also run alone (set together, one can hide another: an
    NCCL_IB_HCA that selects nothing skips the GID logic)."""
    import re

    src = Path(__file__).parents[2] / "src" / "hpnet"
    files = [
        *sorted((src / "nccl").glob("fill*.py")),
        src / "nccl" / "rules.py",
        src / "nccl" / "env.py",
        *sorted((src / "doctor").rglob("*.py")),
    ]
    found = {m for f in files for m in re.findall(r'"(NCCL_[A-Z0-9_]+)"', f.read_text())}
    return sorted(found)


def test_every_catalog_value_is_judged_without_crashing() -> None:
    from hpnet.nccl.catalog import FOREIGN, catalog, suggest, validate

    for name in catalog():
        for value in WEIRD_VALUES:
            validate(name, value)
    for name in (*FOREIGN, "NCCL_IB_TIMEOUTS", "NCCL_X$(id)", "NCCL_\u00b2"):
        suggest(name)


@pytest.mark.usefixtures("suggest_once")
def test_variables_read_by_name_survive_every_weird_value(sysfs_tree: Tree) -> None:
    names = _read_by_name()
    assert {"NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_ADDR_RANGE", "NCCL_NET"} <= set(names)
    names += ["NCCL_VERSION", "NCCL_IB_TIMEOUTS", "NCCL_X$(id)", "NCCL_IB_TIMEOUTS;touch x"]
    inventory = _inventory(sysfs_tree, "cx-roce-mixed-gids")
    for name in names:
        for value in WEIRD_VALUES:
            try:
                _run_everything(inventory, {name: value})
            except Exception as exc:  # report which input broke it
                raise AssertionError(f"{name}={value!r}: {exc!r}") from exc


@pytest.mark.parametrize("tree", HOSTILE_TREES)
def test_every_catalog_variable_at_once_survives_every_weird_value(
    sysfs_tree: Tree, tree: str
) -> None:
    """All of NCCL's variables set to the same value at once, through doctor and env."""
    from hpnet.nccl.catalog import catalog

    inventory = _inventory(sysfs_tree, tree)
    for value in WEIRD_VALUES:
        try:
            _run_everything(inventory, dict.fromkeys(catalog(), value))
        except Exception as exc:  # report which input broke it
            raise AssertionError(f"every variable = {value!r}: {exc!r}") from exc


@pytest.mark.parametrize(
    ("value", "name"),
    [("²", "NCCL_IB_GID_INDEX"), ("--5", "NCCL_IB_GID_INDEX"), ("²", "NCCL_IB_ROCE_VERSION_NUM"),
     ("garbage", "NCCL_IB_ADDR_RANGE"), ("10.0.0.0/33", "NCCL_IB_ADDR_RANGE")],
)  # fmt: skip
def test_review_crashes_exit_cleanly(
    sysfs_tree: Tree,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    value: str,
    name: str,
) -> None:
    """Each of these exited 3 (internal error) from doctor or env on this tree."""
    root = str(sysfs_tree("cx-roce-mixed-gids"))
    monkeypatch.setenv(name, value)
    assert main(["doctor", "--sysfs-root", root, "--json"]) in (0, 1)
    assert main(["env", "--profile", "roce", "--sysfs-root", root]) == 0
    assert "error[internal]" not in capsys.readouterr().err
