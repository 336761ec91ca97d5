"""Every log format string NCCL 2.3.5 .. 2.32.3 (and the NET plugins whose lines its logs
carry) prints that carries evidence is read, and no other is read as evidence.

The table (src/hpnet/ncclog/data/nccl_formats.json) is built from NCCL's git history by
tools/nccl_formats: each INFO / WARN / VERSION format of every release tag with the
releases that print it. This test does not trust the table's own labels: it applies
hpnet.ncclog.formats.EVIDENCE to every format, and fails when an evidence-carrying one
(a NIC list, a network choice, a GPUDirect decision, an env echo, a transport, a version,
a communicator state, an error trail, NVLS, every WARN) has no example line that the
classifier reads as the kinds its category names.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from hpnet.ncclog.formats import EVIDENCE, WarnIndex, evidence_of, format_regex, load_table
from hpnet.ncclog.lines import classify
from hpnet.ncclog.versions import FINGERPRINTS, contains

TABLE = load_table()
DATA = Path(__file__).parents[1] / "data"
FORMATS = [f for f in TABLE.formats if evidence_of(str(f["level"]), str(f["format"]))]
#: every release from 2.4.2 to 2.30.7 (and the two 2.3 tags) from the source; 2.31.2 and
#: 2.32.3 from the libnccl.so.2 of their PyPI wheels (tools/nccl_formats/binary.py)
RELEASES = {
    "2.3.5-5", "2.3.7", "2.4.2", "2.4.6", "2.4.7", "2.4.8", "2.5.6", "2.5.6-2", "2.5.7",
    "2.6.4", "2.7.3", "2.7.5", "2.7.6", "2.7.8", "2.8.3", "2.8.4", "2.9.6", "2.9.8", "2.9.9",
    "2.10.3", "2.11.4", "2.12.7", "2.12.10", "2.12.12", "2.13.4", "2.14.3", "2.15.1",
    "2.15.5", "2.16.2", "2.16.5", "2.17.1", "2.18.1", "2.18.3", "2.18.5", "2.18.6",
    "2.19.1", "2.19.3", "2.19.4", "2.20.3", "2.20.5", "2.21.5", "2.22.3", "2.23.4",
    "2.24.3", "2.25.1", "2.26.2", "2.26.3", "2.26.5", "2.26.6", "2.27.3", "2.27.5",
    "2.27.6", "2.27.7", "2.28.3", "2.28.7", "2.28.9", "2.29.2", "2.29.3", "2.29.7",
    "2.30.3", "2.30.4", "2.30.7", "2.31.2", "2.32.3",
}  # fmt: skip


def test_the_table_covers_every_release_from_2_4_to_the_newest_on_pypi() -> None:
    assert set(TABLE.releases) == RELEASES
    printed = {
        tag
        for f in TABLE.formats
        for run in str(f["runs"]).split(",")
        if run
        for tag in run.split("~")
    }
    assert {"2.4.2", "2.30.7", "2.31.2", "2.32.3"} <= printed


def test_the_binary_releases_are_read_from_their_wheels() -> None:
    binaries = load_table().binaries
    assert set(binaries) == {"2.31.2", "2.32.3"}
    assert binaries["2.31.2"]["banner"] == ["NCCL version 2.31.2+cuda13.3"]
    assert binaries["2.32.3"]["wheel"] == "nvidia-nccl-cu12 2.32.3"
    # 2.31's diagnostics print "host:pid NCCL DIAG <tag><check>" outside the logger
    assert "%s:%d NCCL DIAG === NCCL Diagnostics ===\n" in binaries["2.31.2"]["diag"]
    assert {"[OK]   ", "[INFO] "} == set(binaries["2.31.2"]["diag_tags"])
    # a format both the source (<= 2.30.7) and the binaries print runs on into 2.32.3
    bootstrap = [f for f in FORMATS if f["format"] == "Bootstrap: Using%s"]
    assert bootstrap and str(bootstrap[0]["runs"]).endswith("~2.32.3")
    # a WARN of 2.31.2 names its file:line as the binary's call site says
    new_sites = [
        site
        for f in TABLE.formats
        if f["level"] == "WARN"
        for site, runs in (f.get("sites") or {}).items()  # type: ignore[attr-defined]
        if "2.31.2" in str(runs)
    ]
    assert len(new_sites) > 500
    # a format found only in a binary cannot say whether the call fails after it
    only = [f for f in TABLE.formats if f.get("binary") and f["level"] == "WARN"]
    assert only and {f["fatal"] for f in only} == {"unknown"}


def test_the_table_holds_the_net_plugins_nccl_logs_carry_lines_of() -> None:
    assert set(TABLE.plugins) == {
        "aws-ofi-nccl",
        "nccl-rdma-sharp-plugins",
        "nccl-fastsocket",
        "nccl-plugin-gpudirecttcpx",
        "nccl-plugin-gpudirect-tcpxo",
    }
    by_plugin = {str(f.get("plugin")) for f in TABLE.formats if f.get("evidence")}
    assert set(TABLE.plugins) <= by_plugin
    # aws-ofi-nccl's provider line, with and without the NIC count
    provider = [f for f in FORMATS if f.get("evidence") == "provider"]
    assert {str(f["format"]).count("found") for f in provider} == {0, 1}


def test_the_evidence_kinds_are_labelled_as_the_rules_say() -> None:
    for entry in FORMATS:
        category = evidence_of(str(entry["level"]), str(entry["format"]))
        assert category is not None
        if entry["level"] != "MACRO":
            assert entry.get("evidence") == category[0], entry["format"]
            assert set(entry.get("kinds", ())) == set(category[1]), entry["format"]


@pytest.mark.parametrize("entry", FORMATS, ids=lambda f: f"{f['level']}:{str(f['format'])[:60]}")
def test_every_evidence_format_of_every_release_is_read(entry: dict[str, object]) -> None:
    example = entry.get("example")
    assert isinstance(example, str), f"no example for {entry['format']!r}"
    if entry["level"] != "MACRO":
        # the example is a line NCCL can print with this format
        assert re.fullmatch(format_regex(str(entry["format"]).strip()), example), example
    if entry["level"] == "WARN":
        line = f"node1:4711:4790 [0] init.cc:1 NCCL WARN {example}"
    elif entry["level"] == "MACRO":
        line = example
    else:
        line = f"node1:4711:4790 [0] NCCL INFO {example}"
    event = classify(line.encode(), "table")
    kinds = set(entry["kinds"])  # type: ignore[call-overload]
    if entry["level"] == "MACRO":
        kinds |= {"bare-version"}
    assert event is not None and event.kind in kinds, (entry["format"], example, event)


def test_a_warn_line_names_the_releases_that_print_it_there() -> None:
    # "Invalid rank requested : %d/%d" stands at init.cc:981 in 2.4.8 alone
    fatal, releases = TABLE.warn("init.cc:981", "Invalid rank requested : 2/2")
    assert releases == ((2, 4, 8), (2, 4, 8))
    assert fatal == "fatal"
    # the same text printed from another line is another release
    assert TABLE.warn("init.cc:980", "Invalid rank requested : 2/2")[1] == ((2, 4, 6), (2, 4, 7))
    # a location no release prints it from says nothing of the release
    assert TABLE.warn("init.cc:1", "Invalid rank requested : 2/2")[1] is None


def test_a_macro_caller_read_from_a_binary_does_not_date_the_line_to_that_binary() -> None:
    # vLLM's NCCL 2.20.5 log: CUCHECK's WARN at its caller transport/nvls.cc:246. The
    # 2.32.3 binary prints the same text there; the source releases print it through
    # the macro (include/checks.h), so the line may be any release that has the format
    text = "Cuda failure 3 'initialization error'"
    releases = TABLE.warn("transport/nvls.cc:246", text)[1]
    assert releases is not None and releases[0] <= (2, 20, 5) <= releases[1]
    # a format a source release prints directly keeps its site's own releases
    assert TABLE.warn("init.cc:981", "Invalid rank requested : 2/2")[1] == ((2, 4, 8), (2, 4, 8))


def test_a_call_site_decides_for_its_own_releases() -> None:
    text = "Cannot initialize CollNet, using point-to-point network instead"
    # 2.9.x: the WARN is followed by more setup, the call goes on
    assert TABLE.warn("transport.cc:239", text)[0] == "nonfatal"
    # 2.13.4-2.15.5: the call fails, and init.cc's caller resets the result to success
    assert TABLE.warn("transport.cc:246", text) == ("recoverable", ((2, 13, 4), (2, 15, 5)))
    # without a location, the formats it may be ("using %s instead" too) disagree
    assert TABLE.warn(None, text)[0] == "unknown"


#: what the parser reads as evidence ("notable": an INFO line kept in case it explains a failure)
EVIDENCE_KINDS = frozenset().union(*(kinds for _, _, kinds in EVIDENCE)) - {"notable"}
OTHERS = [
    f for f in TABLE.formats if f["level"] == "INFO" and not evidence_of("INFO", str(f["format"]))
]


@pytest.mark.parametrize("entry", OTHERS, ids=lambda f: f"INFO:{str(f['format'])[:60]}")
def test_a_format_that_carries_no_evidence_is_not_read_as_evidence(
    entry: dict[str, object],
) -> None:
    # "NET/Socket: Using 2 threads and 8 sockets per thread" once read as a socket NIC
    # list with no interface, and erased the list NCCL had printed
    example = entry["example"]
    assert isinstance(example, str)
    event = classify(f"node1:4711:4790 [0] NCCL INFO {example}".encode(), "table")
    assert event is None or event.kind not in EVIDENCE_KINDS, (entry["format"], event.kind)


def _releases_of(entry: dict[str, object], releases: tuple[str, ...]) -> set[tuple[int, ...]]:
    """Every release that prints a format: its runs (2.4 on) and its ``extra`` tags (2.3)."""

    def version(tag: str) -> tuple[int, ...]:
        return tuple(int(p) for p in tag.split("-", maxsplit=1)[0].split("."))

    known = [version(r) for r in releases]
    found = {version(tag) for tag in entry.get("extra", ())}  # type: ignore[attr-defined]
    for part in str(entry.get("runs") or "").split(","):
        if part:
            low, high = (version(v) for v in part.split("~"))
            found |= {r for r in known if low <= r <= high}
    return found


#: "Bootstrap : Using%s": 2.4.8-2.7.8 fill it with "[0]eth0:..." (an interface list), which
#: the rendered example ("x") does not show; the list form has a fingerprint of its own
_FILLED_BY_A_LIST = {"Bootstrap : Using%s"}


def test_version_fingerprints_hold_for_every_release_that_prints_the_form() -> None:
    """A fingerprint dates a process by the form of a line: every release whose source
    prints a line of that form (the table's runs, and its 2.3 tags) must be in the
    fingerprint's range, or a log of that release is dated wrongly (a 2.3.7 log was
    called mixed 2.3.7 and 2.4.2 by 'Failed to open libibverbs' from 2.4.2)."""
    wrong = []
    for kind, pattern, bounds in FINGERPRINTS:
        level = "WARN" if kind == "warn" else "INFO"  # a WARN line is read as kind warn
        for entry in TABLE.formats:
            if entry.get("plugin") or entry.get("level") != level:
                continue
            if entry["format"] in _FILLED_BY_A_LIST or not pattern.search(str(entry["example"])):
                continue
            outside = sorted(
                r for r in _releases_of(entry, TABLE.releases) if not contains(bounds, r)
            )
            if outside:
                wrong.append((kind, pattern.pattern, entry["format"], outside[:3]))
    assert not wrong, wrong


def _warn_texts() -> list[str]:
    """Every WARN format's example and every WARN message of the recorded NCCL logs."""
    texts = {str(f["example"]) for f in TABLE.formats if f["level"] == "WARN" and f.get("example")}
    for path in sorted(DATA.glob("nccl-logs/*.log")):
        for line in path.read_text(errors="replace").splitlines():
            found = re.search(r"NCCL WARN (?:\S+\.(?:cc|cu|c|h):\d+ )?(.*)", line)
            if found:
                texts.add(found.group(1).strip())
    return sorted(texts)


def test_a_warn_is_matched_against_exactly_the_formats_that_can_print_it() -> None:
    # the index tries only the formats whose leading literal starts the message; trying
    # every format finds the same ones, on every example and recorded WARN
    warns = WarnIndex(TABLE.formats)
    every = [
        (re.compile(format_regex(str(f["format"]).strip()) + r"\s*"), f)
        for f in TABLE.formats
        if f["level"] == "WARN" and f.get("format") and not f.get("plugin")
    ]
    texts = _warn_texts()
    assert len(texts) > 500
    for text in texts:
        found = [warns.entry(i) for i in warns.candidates(text) if warns.matches(i, text)]
        assert found == [f for p, f in every if p.fullmatch(text)], text
    # an example's own format is among them: none of them is empty by accident
    assert all(
        warns.candidates(str(f["example"]))
        for f in TABLE.formats
        if f["level"] == "WARN" and f.get("example") and not f.get("plugin")
    )


def test_the_first_line_of_a_warn_of_several_lines_is_that_warn_pasted_alone() -> None:
    """NVIDIA/nccl#2077: 2.29's NVLS bind WARN is three lines (nvls.cc); PyTorch's error
    text carried them without NCCL's prefix, and its first line alone names the failure."""
    table = load_table()
    first = "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 "
    assert table.bare_warn(first + "'out of memory'.")
    assert not table.bare_warn(first + "'out of memory'. And a program's own words.")
