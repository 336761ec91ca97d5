"""The compiled passes (hpnet.ncclog._fastscan) do exactly what the Python they stand for
does (hpnet.ncclog.passes: ``erased_py``, ``count_lines_py``, ``count_split_py``): the
same bytes, the same counts in the same order, the same number of lines, the same
program lines put apart, on every input under tests/data and on bytes made to hit the
corners (issue 28, steps 5 and 6).
"""

from __future__ import annotations

import collections
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hpnet.artefacts.words import RCCL_BYTES
from hpnet.ncclog import passes
from hpnet.ncclog.lines import Classifier
from hpnet.ncclog.messages import read_message
from hpnet.ncclog.scan import normalise
from tests.conftest import DATA

ROOT = Path(__file__).parents[2]
FAST = passes._FAST
BUILT = importlib.util.find_spec("hpnet.ncclog._fastscan") is not None
INPUTS = sorted(
    p for p in DATA.rglob("*") if p.is_file() and not p.name.endswith((".source.txt", ".md"))
)
needs_module = pytest.mark.skipif(
    FAST is None,
    reason="hpnet.ncclog._fastscan is not built (no C compiler at install) or not used "
    "(HPNET_PURE_PYTHON)",
)


#: words looked for in what blanking takes away and in the lines not dead (the scanner
#: asks for RCCL's; a word of two bytes and one of one byte: count_split's pairs)
RCCL_WORDS = (*RCCL_BYTES, b"xy", b"Q")


def _both(text: bytes, dead: set[bytes]) -> None:
    """The compiled passes and the Python ones agree on ``text``."""
    assert FAST is not None
    assert FAST.erase_channels(text) == passes.erased_py(text)
    assert FAST.erase_rings(text) == passes.erased_rings_py(text)
    fast: collections.Counter[bytes] = collections.Counter()
    slow: collections.Counter[bytes] = collections.Counter()
    assert passes.count_lines(text, fast, dead) == passes.count_lines_py(text, slow, dead)
    assert list(fast.items()) == list(slow.items())
    # the scanner's dead lines are lines as counted: with blank, blanked
    blanked = {passes.NOISE_ERASED.sub(b"NCCL INFO -", line) for line in dead}
    for min_programs in (0, 1, 2, 64):
        for max_line in (3, 1 << 20):
            for blank, words in ((False, ()), (True, ()), (True, RCCL_WORDS)):
                fast.clear()
                slow.clear()
                gone = blanked if blank else dead
                split = FAST.count_split(
                    text, fast, gone or None, min_programs, max_line, blank, words
                )
                py = passes.count_split_py(
                    text, slow, gone, min_programs, max_line, blank=blank, words=words
                )
                assert passes.Split(*split) == py
                assert list(fast.items()) == list(slow.items())
                # the scanner's own set of dead lines, asked from where each line lies
                lines = FAST.LineSet()
                lines.update(gone)
                fast.clear()
                again = FAST.count_split(text, fast, lines, min_programs, max_line, blank, words)
                assert again == split
                assert list(fast.items()) == list(slow.items())


@needs_module
def test_every_input_is_erased_and_counted_as_in_python() -> None:
    for path in INPUTS:
        text = normalise(path.read_bytes())
        distinct = list(dict.fromkeys(text.split(b"\n")))
        for dead in (set(), set(distinct[::3])):
            _both(text, dead)
        erased = passes.erased_py(text)
        if erased is not None:  # the lines as the scanner counts them
            _both(erased, set())
    assert len(INPUTS) > 400


CORNERS = [
    b"",
    b"\n",
    b"\n\n",
    b"a",
    b"a\n",
    b"a\n\n",
    b"a\nb",
    b"Channel 03/0 :",
    b"Channel 03/0 ",
    b"Channel 03/0 :x",
    b"Channel 03/ :",
    b"Channel /0 :",
    b"Channel 03 :",
    b"Channel 03 ",
    b"Channel 03",
    b"Channel ",
    b"ChannelChannel 1/2 :Channel 3/4 :",
    b"Channel Channel 1/2 :",
    b"Channel 1/2 :Channel 3 :",
    b"INFO Ring 00 : 0 -> 1\nINFO Ring 3 :INFO Ring 12 :\nINFO Ring  :\nINFO Ring 4",
    b"INFO Ring INFO Ring 1 :x INFO Ring 2: INFO Ring 3 ",
    b"x Channel 12345678901234567890/0 : 1[1] -> 2[2]\nChannel 1/2 : \x00\xff\n",
    b"a" * 7 + b"\n" + b"a" * 8 + b"\n" + b"a" * 9 + b"\n" + b"a" * 8,
    b"\nstep 1\n\nstep 12\nstep 1\nx NCCL INFO y\nnccl\n<warn>\n# Rank 0 Pid 1\n",
    b"step 1\nstep 2\nstep 3 NCCL\n",
]


@needs_module
@pytest.mark.parametrize("text", CORNERS)
def test_the_corners_read_as_in_python(text: bytes) -> None:
    _both(text, set())
    _both(text, {b"a", b""})


@needs_module
@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"Channel ", b"INFO Ring ", b"0", b"17", b"/", b" :", b" ", b":", b"\n", b"x", b"\xff"]
        ),
        max_size=60,
    ).map(b"".join),
    st.sets(st.sampled_from([b"", b"x", b"Channel :", b" :", b"0"])),
)
def test_any_bytes_read_as_in_python(text: bytes, dead: set[bytes]) -> None:
    _both(text, dead)


@needs_module
def test_many_distinct_lines_grow_the_table() -> None:
    text = b"".join(b"line %d\n" % (i % 50_000) for i in range(120_000))
    _both(text, {b"line 7"})
    # many program shapes (letters, not digits, differ): their own table grows
    shaped = b"".join(
        b"%s %d\n" % (bytes([97 + i % 26, 97 + i // 26 % 26]), i) for i in range(3000)
    )
    _both(shaped + text, set())


def test_program_lines_are_put_apart_with_their_shapes() -> None:
    """What :func:`count_split` leaves for the scanner, in whichever form runs."""
    text = b"step 1 loss 0.5\nh:1:1 [0] NCCL INFO x\nstep 2 loss 0.4\nstep 1 loss 0.5\n\n"
    counts: collections.Counter[bytes] = collections.Counter()
    split = passes.count_split(text, counts, {b""}, 2, 1 << 20)
    assert split == (5, 3, b"step 0 loss 0.0", [b"step 1 loss 0.5"], [1], 1, False, False)
    assert counts == {b"h:1:1 [0] NCCL INFO x": 1}
    counts.clear()  # fewer program lines than asked for: counted with the rest, in order
    assert passes.count_split(text, counts, set(), 4, 1 << 20) == (
        5,
        0,
        None,
        [],
        [0, 1, 2, 4],
        1,
        False,
        False,
    )
    assert list(counts) == [b"step 1 loss 0.5", b"h:1:1 [0] NCCL INFO x", b"step 2 loss 0.4", b""]


def test_noise_is_blanked_as_it_is_counted() -> None:
    """With ``blank``, a noise message (a proxy connection, each with its own address)
    is counted as its process's one blanked line, where it first occurs, and a line of
    the same bytes read from the input is the same line; markers glued behind a noise
    message are said to be taken away."""
    text = (
        b"h:1:1 [0] NCCL INFO Connected to proxy localRank 0 -> connection 0x7f10\n"
        b"h:1:1 [0] NCCL INFO Channel : 0[0] -> 1[1] via P2P/CUMEM\n"
        b"h:1:1 [0] NCCL INFO Connected to proxy localRank 1 -> connection 0x7f20\n"
        b"h:1:1 [0] NCCL INFO -\n"
        b"h:1:1 [0] NCCL INFO New proxy recv connection 3 h:1:1 [0] NCCL WARN x\n"
    )
    counts: collections.Counter[bytes] = collections.Counter()
    split = passes.count_split(text, counts, set(), 64, 1 << 20, blank=True)
    assert list(counts.items()) == [
        (b"h:1:1 [0] NCCL INFO -", 4),
        (b"h:1:1 [0] NCCL INFO Channel : 0[0] -> 1[1] via P2P/CUMEM", 1),
    ]
    # five lines as counted, one marker each: the WARN glued behind a noise message is
    # blanked away with it
    assert (split.firsts, split.markers, split.worded) == ([0, 1], 5, False)
    counts.clear()  # a word in what is blanked is said, though its line is dead
    text += b"h:1:1 [0] NCCL INFO PROFILER/Plugin: Could not find: librccl-profiler.so\n"
    split = passes.count_split(text, counts, {b"h:1:1 [0] NCCL INFO -"}, 64, 1 << 20,
                               blank=True, words=(b"librccl",))  # fmt: skip
    assert (len(counts), split.worded) == (1, True)


def test_the_block_is_searched_once_as_its_lines_are_counted() -> None:
    """``count_split`` says what the scanner had searched the whole block for: the NCCL
    markers of the lines as counted (dead ones too), a word in a line not dead (a
    program's line put apart too), and ``Last error:`` where blanking leaves it."""
    text = (
        b"h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
        b"RCCL version 2.18.3\n"
        b"step 1\n"
        b"step 2\n"
        b"h:1:1 [0] NCCL INFO Connected to proxy Last error:\n"
        b"h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    )
    dead = {b"h:1:1 [0] NCCL INFO NCCL version 2.21.5+cuda12.4"}
    for words, worded in (((b"RCCL version",), True), ((b"2.21.5",), False), ((), False)):
        counts: collections.Counter[bytes] = collections.Counter()
        split = passes.count_split(text, counts, dead, 2, 1 << 20, blank=True, words=words)
        assert (split.markers, split.worded, split.last_error) == (3, worded, False)
        assert b"RCCL version 2.18.3" not in counts  # put apart, and looked in
    # "Last error:" where blanking leaves it, in a line dead or not
    text += b"Last error:\n"
    for gone in (set(), {b"Last error:"}):
        split = passes.count_split(text, collections.Counter(), gone, 2, 1 << 20, blank=True)
        assert split.last_error
    with pytest.raises(TypeError, match="non-empty"):
        passes.count_split(text, collections.Counter(), set(), 2, 1, words=(b"",))


def _noise_alternatives() -> list[bytes]:
    """A message for each of NOISE's alternatives, read from its pattern: a word
    added there and not in _fastscan.c's NOISE_WORDS fails the test below."""
    inner = passes.NOISE_ERASED.pattern.split(b"(?:", 1)[1].rsplit(b")[^\\n]*", 1)[0]
    # the topology dump's lines that are read: a GPU's NVLink, a slow PCIe link
    inner = inner.replace(b"(?! *\\+ (?:NVL\\[|PCI\\[[0-2]\\.\\d+\\]))[ +=]", b"=")
    made = []
    for alternative in inner.split(b"|"):
        word = alternative.replace(b"\\d", b"7")
        word = word.replace(b"\\[", b"[").replace(b"(?: +7+)+\\r?$", b" 0 1")
        assert b"\\" not in word and b"(" not in word, alternative
        made.append(word)
    return made


NOISE_MESSAGES = [
    *_noise_alternatives(),
    *(b"%s tail" % m for m in _noise_alternatives()),
    b" ", b"+", b"=", b"  + NVL[370.8] - NVS/0", b"+ NVL[", b" + NVL", b" x", b"++ NVL[",
    b"+ PCI[0.2] - PCI/0-65000 (104c823200000000)", b"    + PCI[2.9] - GPU/1", b"+ PCI[0.0]",
    b"+ PCI[3.0] - GPU/1", b"+ PCI[0.]", b"+ PCI[0]", b"+ PCI[12] - GPU/1000", b"+ PCI[1.5",
    b"+ PCI[24.0] - PCI/2", b"+ PCI[0.25]", b"+ PCI[0.2x]", b"+ PCI[", b"+ PCI[2.", b"+ PCI",
    b"NET/", b"NET/x", b"NET/1", b"Channel :", b"Channel : 1", b"Channel : 1\r", b"Channel : 1 ",
    b"Channel :  12   3", b"Channel : 1\r\r", b"Channel :1", b"Channel : x", b"Channel : 1 x",
    b"Tree", b"Trees", b"Connected to prox", b"connected to proxy", b"", b"-",
]  # fmt: skip


@needs_module
def test_each_noise_message_is_blanked_as_in_python() -> None:
    lines = []
    for message in NOISE_MESSAGES:
        for prefix in (
            b"h:1:1 [0] NCCL INFO ",
            b"x NCCL INFO y NCCL INFO ",
            b"NCCL INFO NCCL INFO ",
        ):
            lines.append(prefix + message)
            lines.append(prefix + message + b" h:1:1 [0] NCCL INFO z NCCL WARN w NCCL INFO ")
            lines.append(prefix + message + b" librccl-tuner.so xy")
    text = b"\n".join(lines) + b"\n"
    _both(text, set())
    for size in range(0, 20):  # a blanked key of every length against a line read whole
        key = b"a" * size + b"NCCL INFO -"
        _both(key + b"\n" + b"a" * size + b"NCCL INFO Tree x\n" + key + b"\n", {key})


@needs_module
def test_wrong_arguments_are_errors_not_crashes() -> None:
    assert FAST is not None
    with pytest.raises(TypeError):
        FAST.erase_channels("text")
    with pytest.raises(TypeError):
        FAST.erase_rings("text")
    with pytest.raises(TypeError):
        FAST.count_split(b"a", [], None, 1, 1)
    with pytest.raises(TypeError):
        FAST.count_split(b"a", {}, [b"a"], 1, 1)
    with pytest.raises(TypeError):
        FAST.count_split(b"a", {}, None, "1", 1)
    with pytest.raises(TypeError):
        FAST.count_split(b"a", {}, None, 1, 1, True, [b"x"])
    with pytest.raises(TypeError):
        FAST.count_split(b"a", {}, None, 1, 1, True, ("x",))
    with pytest.raises(TypeError):
        FAST.read_comm("comm 0x1 rank 0 nranks 1")
    with pytest.raises(TypeError):
        FAST.read_connection("Channel : 0 -> 1 via P2P")


def test_the_pure_python_passes_are_what_runs_without_the_module() -> None:
    """``HPNET_PURE_PYTHON=1`` runs the Python passes: the same verdict on a recorded log."""
    log = str(DATA / "nccl-logs" / sorted(p.name for p in (DATA / "nccl-logs").iterdir())[0])
    outputs = []
    for pure in ("1", "0"):
        done = subprocess.run(
            [sys.executable, "-c", "import sys; from hpnet.ncclog import passes; "
             "print(passes.COMPILED); from hpnet.cli.main import main; "
             "sys.exit(main(['verify', '--json', sys.argv[1]]))", log],
            env={"HPNET_PURE_PYTHON": pure, "PATH": "/usr/bin:/bin"},
            capture_output=True, text=True, timeout=120, check=False, cwd=ROOT,
        )  # fmt: skip
        compiled, _, report = done.stdout.partition("\n")
        assert compiled == str(pure == "0" and BUILT), done.stderr
        outputs.append((done.returncode, report))
    assert outputs[0] == outputs[1]
    assert '"transports"' in outputs[0][1] or '"connections"' in outputs[0][1]


def _read_comm_as_python(message: bytes) -> None:
    """The compiled reading of a communicator line is the Python readers' reading."""
    assert FAST is not None
    data = FAST.read_comm(message)
    if data is None:
        return
    text = message.decode("ascii")
    assert read_message(text, None, "x") == ("comm", data, "")


@needs_module
def test_every_recorded_communicator_line_reads_as_in_python() -> None:
    read = 0
    for path in INPUTS:
        for line in normalise(path.read_bytes()).split(b"\n"):
            at = line.find(b"NCCL INFO ")
            if at < 0:
                continue
            message = line[at + 10 :]
            _read_comm_as_python(message)
            read += FAST is not None and FAST.read_comm(message) is not None
    assert read > 300  # most of them are plain words


NAMES = [
    b"comm", b"rank", b"nranks", b"nRanks", b"cudaDev", b"nvmlDev", b"busId", b"commId",
    b"commHash", b"parent", b"color", b"MNNVL", b"nNodes", b"localRanks", b"localRank", b"Rank",
]  # fmt: skip
VALUES = [
    b"0x55d0", b"0x1F", b"0x", b"0xg", b"3", b"-1", b"-", b"-x", b"1b000", b"abc", b"12ab", b"007",
    b"",
]  # fmt: skip
WORDS = [
    b"-", b"Init", b"Abort", b"Destroy", b"START", b"COMPLETE", b"STARTED", b"x-1", b"a_b",
    b"1.5", b"[repeated", b"NCCL", b"INFO", b"WARN", b"\xc3\xa9", b"",
]  # fmt: skip
_PAIRS = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(NAMES), st.sampled_from(VALUES)).map(b" ".join),
        st.sampled_from(WORDS),
    ),
    max_size=12,
)


@needs_module
@settings(max_examples=3000, deadline=None)
@given(
    st.sampled_from([b"comm 0x55d0", b"ncclCommInitRank", b"ncclCommSplit comm", b"comm 0x"]),
    _PAIRS,
    st.sampled_from([b"", b" - Init START", b" - Init COMPLETE", b" - Abort COMPLETE",
                     b" - Destroy START", b" - Init STARTED", b" - Abort", b"Init START"]),
    st.sampled_from([b" ", b"  ", b"\t"]),
)  # fmt: skip
def test_any_communicator_line_reads_as_in_python(
    head: bytes, words: list[bytes], tail: bytes, space: bytes
) -> None:
    _read_comm_as_python(head + b" " + b" ".join(words) + tail)
    _read_comm_as_python(head + space + space.join(words) + tail)
    _read_comm_as_python(head + b" rank 3 " + b" ".join(words) + tail)  # mostly read in C


def _read_connection_as_python(message: bytes) -> bool:
    """The compiled reading of a connection line is the Python readers' reading; whether
    it was read in C."""
    assert FAST is not None
    data = FAST.read_connection(message)
    if data is None:
        return False
    text = message.decode("ascii")
    assert read_message(text, None, "x") == ("connection", data, "")
    return True


@needs_module
def test_every_recorded_connection_line_reads_as_in_python() -> None:
    read = 0
    for path in INPUTS:
        text = normalise(path.read_bytes())
        for line in (passes.erased_py(text) or text).split(b"\n") + text.split(b"\n"):
            at = line.find(b"NCCL INFO ")
            if at >= 0:
                read += _read_connection_as_python(line[at + 10 :])
    assert read > 2000  # most of them are of the plain form


_RANKS = st.sampled_from([b"0", b"3", b"007", b"12", b"1" * 18, b"1" * 19, b"", b"x", b"-1"])
_DEVICES = st.sampled_from([b"", b"[0]", b"[1b000]", b"[0x1F]", b"[]", b"[g]", b"[0", b"[0] "])


_CONNECTIONS = st.tuples(
    st.sampled_from([b"Channel", b"Ring", b"Channel 02/0", b"Ring 00", b"Channel 3", b"Chan",
                     b"Channel 02/", b"Channel x", b"CollNet 00/0"]),
    st.sampled_from([b" : ", b" :  ", b":", b" :"]),
    _RANKS,
    _DEVICES,
    st.sampled_from([b" -> ", b" ", b"  ->  ", b"->", b" => "]),
    _RANKS,
    _DEVICES,
    st.sampled_from([b"", b" [send]", b" [receive]", b" [recv]", b"[send]"]),
    st.sampled_from([b" via ", b" via", b"  via ", b" VIA "]),
    st.sampled_from([b"P2P/CUMEM", b"NET/IB/0/GDRDMA", b"SHM/direct/direct", b"NET/AWS Libfabric/0",
                     b"P2P/CUMEM ", b"", b"x\r", b"a_b.c-d", b"\xc3\xa9",
                     b"P2P [repeated 2x across cluster]", b"NET/IB/0 NCCL INFO x"]),
).map(b"".join)  # fmt: skip


@needs_module
@settings(max_examples=3000, deadline=None)
@given(_CONNECTIONS)
def test_any_connection_line_reads_as_in_python(message: bytes) -> None:
    _read_connection_as_python(message)


@needs_module
def test_connection_lines_near_the_plain_form_read_as_in_python() -> None:
    """Each part of the plain form, one at a time, made one of its near misses."""
    plain = [b"Channel 02/0", b" : ", b"3", b"[3]", b" -> ", b"4", b"[0]", b" [send]", b" via ",
             b"NET/IB/0/GDRDMA"]  # fmt: skip
    near = [
        [b"Channel", b"Ring", b"Ring 00", b"Channel 3", b"Channel 02/", b"Channel x"],
        [b" :  ", b":", b" :"],
        [b"007", b"1" * 18, b"1" * 19, b"9" * 20, b"", b"x", b"-1"],
        [b"", b"[1b000]", b"[0x1F]", b"[]", b"[g]", b"[0", b"[0] "],
        [b" ", b"  ->  ", b"->", b" => "],
        [b"0", b"1" * 19, b""],
        [b"", b"[]", b"[abc]", b"[0 ]"],
        [b"", b" [receive]", b" [recv]", b"[send]"],
        [b" via", b"  via ", b" VIA "],
        [b"P2P/CUMEM", b"NET/AWS Libfabric/0", b"P2P ", b"", b"x\r", b"a_b.c-d", b"\xc3\xa9",
         b"P2P [repeated 2x across cluster]", b"NET/IB/0 NCCL INFO x"],
    ]  # fmt: skip
    read = 0
    for at, misses in enumerate(near):
        for miss in misses:
            read += _read_connection_as_python(b"".join([*plain[:at], miss, *plain[at + 1 :]]))
    assert _read_connection_as_python(b"".join(plain))
    assert read > 15


@needs_module
def test_a_communicator_line_the_classifier_reads_in_c() -> None:
    """The classifier's reading of a line read in C: its data, and the message as text."""
    message = b"comm 0x7f rank 3 nranks 8 cudaDev 3 busId 1b000 - Init COMPLETE"
    event = Classifier()(b"h:1:1 [3] NCCL INFO " + message, "x")
    assert event is not None
    assert (event.kind, event.text, event.hint) == ("comm", message.decode(), None)
    assert event.data == (
        "Init", "COMPLETE", {"comm": "0x7f", "rank": "3", "nranks": "8", "cudaDev": "3",
                             "busId": "1b000"},
    )  # fmt: skip


@needs_module
def test_the_dead_lines_are_a_set_of_bytes() -> None:
    """The compiled set of dead lines answers as a set of bytes does, grown past its
    first table; it holds bytes only; and the scanner makes it where the module is."""
    assert FAST is not None
    lines = FAST.LineSet()
    made = [b"h:%d:%d [0] NCCL INFO -" % (i, i) for i in range(5000)]
    lines.update(made[::2])
    lines.add(made[0])  # again: one line
    assert len(lines) == 2500 and bool(lines)
    assert [line in lines for line in made[:6]] == [True, False] * 3
    assert "h:0:0 [0] NCCL INFO -" not in lines  # a str is no line
    with pytest.raises(TypeError, match="bytes"):
        lines.add("x")
    with pytest.raises(TypeError, match="no arguments"):
        FAST.LineSet(made)
    lines.clear()
    assert len(lines) == 0 and made[0] not in lines and not lines
    assert type(passes.dead_lines()) is FAST.LineSet
