"""Hostile input to the readers (issue 15): escape sequences and secrets never printed
raw, no loop on a huge GID index, no crash on a line of thousands of glued NCCL lines,
no internal error (exit 3) on numbers, nesting or files no tool writes, no wait on a
FIFO without a writer, no pass for an import without rows, no memory in proportion to
a result file.

Every input is a real output of tests/data, mutated. Whatever could hang runs in a
subprocess with a time limit, so that a regression fails instead of hanging the suite.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from hpnet.bench.load import load_result
from hpnet.bench.nccl_tests import parse_nccl_tests
from hpnet.cli.main import main
from hpnet.errors import ParseError
from tests.conftest import DATA

LISTINGS = DATA / "listings"
ROCE = LISTINGS / "ibv_devinfo-v-roce-cx6-eth.txt"
A3MEGA = DATA / "nccl-tests" / "all_reduce-gcp-a3mega-2node-16xh100-ncclTests2.14.1-2.16.6.txt"
LOG = DATA / "nccl-logs" / "ofi-plugin-pci-fail-ib-roce-gdr-fallback-nccl2.27.5.log"


def hpnet(*args: str, timeout: float = 20, **kwargs: object) -> subprocess.CompletedProcess[str]:
    """``python -m hpnet ARGS`` with the hpnet these tests import (PYTHONPATH passed on)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        return subprocess.run(
            [sys.executable, "-m", "hpnet", *args],
            capture_output=True,
            text=True,
            timeout=timeout,
            env=env,
            check=False,
            **kwargs,  # type: ignore[call-overload]
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"hpnet {' '.join(args)} hung for more than {timeout} s")


def cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def a3mega_row(line_number: int = 24) -> tuple[list[str], int]:
    """The lines of a real nccl-tests output and the index of one of its rows."""
    lines = A3MEGA.read_text().splitlines(keepends=True)
    assert lines[line_number - 1].split()[2] == "float"  # a row: size count float ...
    return lines, line_number - 1


# ---------------------------------------------------------------- 7: what is printed


def test_detect_shows_escape_sequences_of_a_listing_escaped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A device name holding ESC [ ... (clear the screen, recolour) and a C1 CSI (U+009B)
    is printed as \\x1b and \\x9b, never raw."""
    path = tmp_path / "devinfo.txt"
    path.write_text(ROCE.read_text().replace("mlx5_0", "mlx5_\x1b[2J\x1b]0;PWNED\x07\x9b31m0"))
    code, out, _ = cli(["detect", "--from", str(path)], capsys)
    assert code == 0
    assert not any(c in out for c in "\x1b\x07\x9b")
    assert "mlx5_\\x1b[2J\\x1b]0;PWNED\\x07\\x9b31m0" in out


def test_detect_json_writes_terminal_controls_as_escapes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON escapes C0 controls itself, but held C1 controls (U+009B starts a sequence on
    its own) and bidi overrides raw: they are written as \\u escapes, the same data."""
    name = "mlx5_\x9b31m\u202e0"
    path = tmp_path / "devinfo.txt"
    path.write_text(ROCE.read_text().replace("mlx5_0", name))
    code, out, _ = cli(["detect", "--from", str(path), "--json"], capsys)
    assert code == 0
    assert "\x9b" not in out and "\u202e" not in out
    assert name in json.dumps(json.loads(out), ensure_ascii=False)


@pytest.mark.parametrize("fmt", ["shell", "dotenv", "mpirun", "deepspeed", "k8s", "slurm"])
def test_env_leaves_secrets_out_of_what_is_sourced(
    fmt: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`hpnet launch` withholds a secret-looking variable (by its name, or by a credential
    in its value); `hpnet env` printed it. It stays out of the exported formats (a
    <redacted> there would become the value), and stderr says why and how to pass it."""
    monkeypatch.setenv("NCCL_IB_SECRET_TOKEN", "s3cr3t-from-env")
    args = ["env", "--from", str(ROCE), "--format", fmt]
    code, out, err = cli([*args, "--set", "NCCL_NET_PLUGIN=https://bob:pa55w0rd@repo/x"], capsys)
    assert code == 0
    assert "s3cr3t-from-env" not in out + err and "pa55w0rd" not in out + err
    assert "NCCL_IB_SECRET_TOKEN" not in out and "NCCL_NET_PLUGIN" not in out
    assert "NCCL_IB_HCA" in out  # the rest is still there
    assert "NCCL_IB_SECRET_TOKEN looks like a secret (its name)" in err
    assert "NCCL_NET_PLUGIN looks like a secret (its value holds a credential)" in err
    assert "hpnet launch --env NCCL_NET_PLUGIN" in err


def test_env_json_and_explain_show_secrets_redacted(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NCCL_IB_SECRET_TOKEN", "s3cr3t-from-env")
    sets = ["--set", "NCCL_NET_PLUGIN=https://bob:pa55w0rd@repo/x"]
    code, out, _ = cli(["env", "--from", str(ROCE), "--json", *sets], capsys)
    assert code == 0 and "s3cr3t" not in out and "pa55w0rd" not in out
    variables = json.loads(out)["variables"]
    assert variables["NCCL_IB_SECRET_TOKEN"]["value"] == "<redacted>"
    assert variables["NCCL_NET_PLUGIN"]["value"] == "https://bob:<redacted>@repo/x"
    assert {"secret-withheld"} <= {f["code"] for f in json.loads(out)["findings"]}
    code, out, err = cli(["env", "--from", str(ROCE), "--explain", *sets], capsys)
    assert code == 0 and "s3cr3t" not in out + err and "pa55w0rd" not in out + err
    assert "NCCL_IB_SECRET_TOKEN=<redacted>" in out


def test_env_does_not_quote_a_secret_in_a_disagreement(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The environment's value and the one a layer below wanted are quoted in notes
    and findings: a credential in either is redacted there too."""
    monkeypatch.setenv("NCCL_NET_PLUGIN", "https://bob:pa55w0rd@repo/env")
    sets = ["--set", "NCCL_NET_PLUGIN=https://bob:other55@repo/set"]
    code, out, err = cli(["env", "--from", str(ROCE), "--explain", *sets], capsys)
    assert code == 0 and "environment-disagrees" not in err
    assert "pa55w0rd" not in out + err and "other55" not in out + err
    assert "https://bob:<redacted>@repo/env" in out


def test_doctor_does_not_print_a_credential(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("NCCL_NET_PLUGIN", "https://bob:pa55w0rd@repo/x")
    for extra in ([], ["--json"]):
        code, out, err = cli(["doctor", "--from", str(ROCE), *extra], capsys)
        assert code in (0, 1) and "pa55w0rd" not in out + err
        assert "https://bob:<redacted>@repo/x" in out


# ---------------------------------------------------------------- 11: GID 999999999999


@pytest.mark.parametrize("command", ["env", "doctor", "detect"])
def test_a_huge_gid_index_is_not_walked_to(command: str, tmp_path: Path) -> None:
    """NCCL's automatic GID choice was replayed over every index up to the largest:
    GID[999999999999] kept `env` and `doctor` busy for hours."""
    path = tmp_path / "devinfo.txt"
    text = ROCE.read_text()
    assert "GID[  3]" in text
    path.write_text(text.replace("GID[  3]", "GID[999999999999]"))
    done = hpnet(command, "--from", str(path))
    assert done.returncode in (0, 1), done.stderr
    if command == "env":  # the index the listing shows is the RoCE v2 IPv4 one
        assert "export NCCL_IB_GID_INDEX='999999999999'" in done.stdout


# ---------------------------------------------------------------- 12: glued NCCL lines


def test_one_line_of_thousands_of_glued_nccl_lines_is_read(tmp_path: Path) -> None:
    """2000 connection lines without a newline between them: the cutting recursed once
    per line (RecursionError, exit 3) and copied the rest of the line each time (about
    a gigabyte). Every glued line is read now, in a loop, in memory of the line's size,
    and they prove what the log's own lines prove."""
    lines = LOG.read_text().splitlines()
    connections = [line for line in lines if " via " in line]
    others = [line for line in lines if " via " not in line]
    glued = "".join(connections[i % len(connections)] for i in range(2000))
    path = tmp_path / "glued.log"
    path.write_text("\n".join(others) + "\n" + glued + "\n")
    done = hpnet("verify", str(path), "--json", timeout=60)
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["num_lines"] == len(others) + 1
    unglued = json.loads(hpnet("verify", str(LOG), "--json").stdout)
    assert (report["status"], report["verdict"]) == (unglued["status"], unglued["verdict"])
    assert report["transports"] == unglued["transports"]


@pytest.mark.parametrize(
    "line",
    [
        # a prefix of 100 000 words before NCCL INFO: the place pattern (file.cc:123)
        # scanned to the end from every space (minutes)
        "tpgds-aihub0008:207013:207013 [6] " + "a " * 100_000 + "NCCL INFO Init COMPLETE",
        # a word of 200 000 characters between two NCCL markers: the glued-prefix pattern
        # tried a host from every position of it
        "tpgds-aihub0008:207013:207013 [6] NCCL INFO " + "a" * 200_000 + " NCCL WARN x",
        "a" * 200_000 + ":207013:207013 [6] NCCL INFO Init COMPLETE",
    ],
    ids=["many-words-before-the-marker", "long-word-between-markers", "long-host"],
)
def test_long_lines_are_read_in_linear_time(line: str, tmp_path: Path) -> None:
    path = tmp_path / "long.log"
    path.write_text(LOG.read_text() + line + "\n")
    done = hpnet("verify", str(path), timeout=20)
    assert done.returncode in (0, 1), done.stderr


# ---------------------------------------------------------------- 13: internal errors


@pytest.mark.parametrize(("column", "value"), [(7, "1e999"), (8, "1e999"), (12, "-1e999")])
def test_a_number_beyond_a_float_is_an_input_error(
    column: int, value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`1e999` reads as infinity: in the #wrong column int() raised OverflowError
    (exit 3); as a busbw it was printed as `Infinity`, which is not JSON."""
    lines, at = a3mega_row()
    cells = lines[at].split()
    cells[column] = value
    lines[at] = "  ".join(cells) + "\n"
    path = tmp_path / "all_reduce.txt"
    path.write_text("".join(lines))
    code, out, err = cli(["bench", "import", str(path), "--json"], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error[bad-result]: ") and f"{path}:{at + 1}" in err
    assert "pass nccl-tests' output as it wrote it" in err


@pytest.mark.parametrize(
    "mutate",
    [
        lambda text: text.replace('"runs": [', '"runs": ' + "[" * 100_000, 1),
        lambda text: text.replace('"metadata": {', '"metadata": {"x": ' + "[" * 500, 1),
        lambda text: text.replace('"busbw_gbps": 0.0', '"busbw_gbps": 1e999', 1),
        lambda text: text.replace('"busbw_gbps": 0.0', '"busbw_gbps": Infinity', 1),
        lambda text: text.replace('"nranks": 16', '"nranks": "16"', 1),
    ],
    ids=["deep-runs", "deep-metadata", "1e999", "Infinity", "string-nranks"],
)
def test_hpnet_json_that_no_hpnet_wrote_is_an_input_error(
    mutate: object, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Deep nesting was a RecursionError (exit 3); an infinite value and a count of the
    wrong type passed the reader and failed (or printed invalid JSON) further on."""
    assert main(["bench", "import", str(A3MEGA), "--json"]) == 0
    text = capsys.readouterr().out
    changed = mutate(text)  # type: ignore[operator]
    assert changed != text
    path = tmp_path / "result.json"
    path.write_text(changed)
    code, out, err = cli(["bench", "import", str(path), "--json"], capsys)
    assert (code, out) == (2, ""), err
    assert err.startswith("error[bad-result]: ") and str(path) in err
    assert "Traceback" not in err


@pytest.mark.skipif(not Path("/proc/self/mem").exists(), reason="needs /proc/self/mem")
@pytest.mark.parametrize(
    ("args", "code_name"),
    [
        (["detect", "--from"], "listing-unreadable"),
        (["env", "--from"], "listing-unreadable"),
        (["doctor", "--from"], "listing-unreadable"),
        (["env", "--config"], "config-unreadable"),
        (["doctor", "--env-file"], "env-file-unreadable"),
        (["bench", "import"], "unreadable"),
    ],
)
def test_a_file_that_fails_to_read_is_an_input_error(
    args: list[str], code_name: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """/proc/self/mem opens, and its first read fails with EIO: `--from` let the
    OSError through (exit 3)."""
    code, _, err = cli([*args, "/proc/self/mem"], capsys)
    assert code == 2
    assert err.startswith(f"error[{code_name}]: cannot read the file (Input/output error)")
    assert "/proc/self/mem" in err


def test_parse_nccl_tests_names_file_and_line_of_a_bad_average() -> None:
    """float() of the average's digits raised a bare ValueError."""
    text = A3MEGA.read_text()
    assert "# Avg bus bandwidth    : 70.742 \n" in text
    bad = text.replace("# Avg bus bandwidth    : 70.742 ", "# Avg bus bandwidth    : 70.7.42")
    with pytest.raises(ParseError) as caught:
        parse_nccl_tests(bad, source="a3mega.txt")
    assert (caught.value.source, caught.value.line_number) == ("a3mega.txt", 56)
    assert "'70.7.42' is not a number" in caught.value.what


@pytest.mark.parametrize(
    ("text", "where", "what"),
    [
        ('{"version": 3, "results": [{"size": 8,\n', "x.json:2", "not valid JSON"),
        ('{"results": [{"size": 8, "count": 2, "out_of_place": {"time": "abc"}}]}', "x.json",
         "results[0]: ValueError: could not convert string to float: 'abc'"),
        ('{"results": {"size": 8}}', "x.json", "results: TypeError: an object, not a list"),
        ('{"results": [{"size": 1e999, "count": 2}]}', "x.json:1", "a number out of range"),
        ('{"results": [{"size": 8, "count": "2²"}]}', "x.json", "results[0]: ValueError"),
    ],
)  # fmt: skip
def test_parse_nccl_tests_json_errors_are_parse_errors(text: str, where: str, what: str) -> None:
    """nccl-tests -J (tests/data/nccl-tests/FORMAT.md section 11, no real file
    published): json's JSONDecodeError and float()'s ValueError came out raw."""
    with pytest.raises(ParseError) as caught:
        parse_nccl_tests(text, source="x.json")
    assert caught.value.where == where and what in caught.value.what


def test_the_json_nccl_tests_write_is_still_read() -> None:
    """FORMAT.md section 11: NaN is the string "nan", nwrong a float or null, root a
    6-wide string."""
    text = json.dumps(
        {
            "version": 3,
            "args": ["./build/all_reduce_perf", "-b", "8", "-e", "16"],
            "nccl_version": 22907,
            "config": {"graph": 0, "devices": [{"rank": 0}, {"rank": 1}]},
            "results": [
                {
                    "size": 8, "count": 2, "type": "float", "redop": "sum", "root": "    -1",
                    "out_of_place": {"time": 12.34, "alg_bw": 0.0, "bus_bw": "nan",
                                     "nwrong": 0.0},
                    "in_place": {"time": 12.0, "alg_bw": 0.0, "bus_bw": 0.0, "nwrong": None},
                }
            ],
            "out_of_bounds": {"count": 0, "okay": "true"},
            "average_bus_bandwidth": {"bandwidth": 1.57614, "okay": "unchecked"},
        }
    )  # fmt: skip
    run = parse_nccl_tests(text, source="x.json").runs[0]
    assert (run.op, run.nranks, run.avg_busbw_gbps, len(run.rows)) == ("all_reduce", 2, 1.57614, 1)
    assert run.rows[0].root == -1 and run.rows[0].out_of_place.wrong == 0  # type: ignore[union-attr]


# ---------------------------------------------------------------- 14: FIFOs


@pytest.mark.parametrize(
    ("args", "code_name"),
    [
        (["bench", "import"], "unreadable"),
        (["env", "--config"], "config-unreadable"),
        (["doctor", "--env-file"], "env-file-unreadable"),
        (["detect", "--from"], "listing-not-a-file"),
    ],
)
def test_a_fifo_without_a_writer_is_refused_at_once(
    args: list[str], code_name: str, tmp_path: Path
) -> None:
    """open() of a FIFO waits for a writer: these three waited forever."""
    fifo = tmp_path / "input"
    os.mkfifo(fifo)
    done = hpnet(*args, str(fifo), timeout=10)
    assert done.returncode == 2
    assert done.stderr.startswith(f"error[{code_name}]: is not a regular file but a FIFO")
    assert str(fifo) in done.stderr and "save what it carries to a file" in done.stderr


def test_verify_says_it_waits_for_a_fifo_writer(tmp_path: Path) -> None:
    """verify reads FIFOs on purpose (<(zcat job.log.gz)): with no writer it waited in
    silence. It says on stderr what it waits for, and how to stop."""
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        subprocess.run(
            [sys.executable, "-m", "hpnet", "verify", str(fifo)],
            capture_output=True,
            timeout=3,
            env=env,
            check=False,
        )
    said = (caught.value.stderr or b"").decode()
    assert f"hpnet verify: waiting for {fifo} (nothing read yet" in said
    assert "--idle-timeout" in said


def test_verify_idle_timeout_ends_the_wait_for_a_fifo(tmp_path: Path) -> None:
    fifo = tmp_path / "job.log"
    os.mkfifo(fifo)
    done = hpnet("verify", str(fifo), "--idle-timeout", "0.5", timeout=10)
    assert done.returncode == 2
    assert done.stderr.startswith("error[log-timeout]: nothing arrived for 0.5 s")
    assert str(fifo) in done.stderr and "raise --idle-timeout" in done.stderr


def test_verify_idle_timeout_judges_what_a_stream_sent(tmp_path: Path) -> None:
    """A stream that stops sending (`tail -f job.log | hpnet verify -`) is judged up to
    there, with a note."""
    script = (
        "import sys, time\n"
        f"sys.stdout.write(open({str(LOG)!r}).read())\n"
        "sys.stdout.flush()\n"
        "time.sleep(30)\n"
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE) as writer:
        done = hpnet("verify", "-", "--idle-timeout", "1", "--json", stdin=writer.stdout)
        writer.kill()
    assert done.returncode in (0, 1), done.stderr
    report = json.loads(done.stdout)
    assert report["num_lines"] == len(LOG.read_text().splitlines())
    assert any("nothing arrived for 1 s" in note for note in report["unknowns"])


# ---------------------------------------------------------------- 16: bench import


def test_an_import_without_rows_does_not_pass(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`{"runs": []}` printed `# PASS: no rows` and exited 0."""
    path = tmp_path / "empty.json"
    path.write_text('{"runs": []}')
    code, out, err = cli(["bench", "import", str(path)], capsys)
    assert (code, out) == (2, "")
    assert err.startswith("error[no-result]: ") and str(path) in err
    assert "hpnet bench --json" in err


def test_bench_import_memory_does_not_grow_with_the_file(tmp_path: Path) -> None:
    """A job's output: one nccl-tests table inside 8 MB of NCCL INFO lines. The whole
    text, its lines and their copies took 13 times the file (19 in RSS); the table is
    read line by line now, in a few blocks of memory."""
    lines, at = a3mega_row()
    noise = (
        "tpgds-aihub0008:207013:207013 [6] NCCL INFO Channel 06/0 : 7[7] -> 14[6] [receive] "
        "via NET/IB/6/GDRDMA " + "x" * 3900 + "\n"
    )
    path = tmp_path / "job.out"
    with path.open("w") as handle:
        handle.writelines(lines[:at])
        handle.write(noise * (8 * 1024 * 1024 // len(noise)))
        handle.writelines(lines[at:])
    size = path.stat().st_size
    tracemalloc.start()
    try:
        report = load_result(str(path))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [len(run.rows) for run in report.runs] == [31]
    # a few blocks of 1 MiB (the block, the line cut across it, their text), not the
    # file: 4 MB here, as for a 200 MB file
    assert peak < 6 << 20 < size, f"{peak / 1e6:.1f} MB for a {size / 1e6:.1f} MB file"
