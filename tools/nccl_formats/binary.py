"""Read NCCL's log formats out of a released ``libnccl.so.2`` (no source needed).

Written for hpnet. NCCL 2.31 and 2.32 were published only as binaries (the PyPI wheels
``nvidia-nccl-cu13`` 2.31.2 and ``nvidia-nccl-cu12`` 2.32.3) when the source history
at hand stopped at 2.30.7. A release build keeps every log call's arguments as
constants next to the call: NCCL's ``INFO``/``WARN``/``TRACE`` macros end in

    ncclDebugLogInternal(level, flags, __FILE__, __func__, __LINE__, fmt, ...)

(x86-64 System V: ``edi``, ``rsi``, ``rdx``, ``rcx``, ``r8d``, ``r9``), so the
disassembly (``objdump -d``) gives, per call site, the level (2 WARN, 3 INFO, 5
TRACE), the subsystem mask, the source file, the function, the line and the format
string, which lives in ``.rodata``. Where an argument is computed at run time (a
``NOWARN`` site picks WARN or INFO, a wrapper passes its caller's format) the site is
kept with that field ``None``: the binary does not say it.

What the binary cannot tell that the source could: whether NCCL returns an error after
a WARN (``fatal``; the statements that follow are machine code, not NCCL's macros), the
formats printed through a helper that takes the format as a parameter, and strings never
passed to the logger (``snprintf`` buffers). The ``NCCL DIAG`` report lines of 2.31's
diagnostics bypass the logger (``printf`` to stdout): they are found by their text.

Usage::

    python tools/nccl_formats/binary.py extract LIB.so OUT.json   # one release
    python tools/nccl_formats/binary.py calibrate OUT_2.30.7.json TABLE.json 2.30.7
    python tools/nccl_formats/binary.py merge TABLE.json NEW_TABLE.json \\
        2.31.2=nvidia-nccl-cu13:OUT_2.31.2.json 2.32.3=nvidia-nccl-cu12:OUT_2.32.3.json

``calibrate`` measures the extractor on a release whose source is known (2.30.7): how
many of the source's formats and WARN sites the binary shows, and what it shows that the
source does not. ``merge`` extends the table's releases: a format the new release prints
verbatim keeps its kinds, evidence and fatal decision, and its runs grow; a WARN gains the
new release's ``file:line`` sites; a format found only in the binary is added with the
same evidence rules as the source extractor, ``fatal: unknown`` and ``binary: true``.
Nothing of NCCL's code is kept, only its format strings, which are facts about its output.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import struct
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "src"))
sys.path.insert(0, str(Path(__file__).parent))

from build_table import example

from hpnet.ncclog.formats import evidence_of

#: ncclDebugLogLevel (src/include/nccl_common.h @2.30.7)
LEVELS = {1: "VERSION", 2: "WARN", 3: "INFO", 4: "ABORT", 5: "TRACE"}
#: argument registers of ncclDebugLogInternal, in order, with their 32/8-bit names
ARGS = {
    "level": ("rdi", "edi"),
    "flags": ("rsi", "esi"),
    "file": ("rdx", "edx"),
    "func": ("rcx", "ecx"),
    "line": ("r8", "r8d"),
    "fmt": ("r9", "r9d"),
}
_REG = {name: arg for arg, names in ARGS.items() for name in names}
_INSN = re.compile(r"^\s*([0-9a-f]+):\s+(\S+)\s+(.*)$")
_LEA = re.compile(r"^lea\s+-?0x[0-9a-f]+\(%rip\),%(\w+)\s+#\s+([0-9a-f]+)")
_MOV_IMM = re.compile(r"^mov[lq]?\s+\$(0x[0-9a-f]+),%(\w+)$")
_OR_ALL = re.compile(r"^or[lq]?\s+\$0xffffffffffffffff,%(\w+)$")
_XOR_SELF = re.compile(r"^xor[lq]?\s+%(\w+),%(\w+)$")
_WRITES = re.compile(r",%(\w+)$")


class Elf:
    """The allocated sections of an ELF64 little-endian file, to read a C string at a
    virtual address."""

    def __init__(self, path: Path) -> None:
        self.data = path.read_bytes()
        d = self.data
        if d[:4] != b"\x7fELF" or d[4] != 2 or d[5] != 1:
            raise SystemExit(f"{path}: not a 64-bit little-endian ELF file")
        (shoff,) = struct.unpack_from("<Q", d, 0x28)
        shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3A)
        heads = [struct.unpack_from("<IIQQQQIIQQ", d, shoff + i * shentsize) for i in range(shnum)]
        names = heads[shstrndx][4]
        self.sections: dict[str, tuple[int, int, int]] = {}
        for name_off, kind, _, addr, offset, size, *_ in heads:
            end = d.index(b"\0", names + name_off)
            name = d[names + name_off : end].decode()
            if addr and kind != 8:  # SHT_NOBITS holds no bytes
                self.sections[name] = (addr, offset, size)

    def string(self, addr: int) -> str | None:
        for start, offset, size in self.sections.values():
            if start <= addr < start + size:
                at = offset + addr - start
                return self.data[at : self.data.index(b"\0", at)].decode("utf-8", "replace")
        return None

    def rodata_strings(self) -> Iterator[str]:
        _, offset, size = self.sections[".rodata"]
        for raw in self.data[offset : offset + size].split(b"\0"):
            if raw:
                yield raw.decode("utf-8", "replace")


def call_sites(lib: Path) -> Iterator[dict[str, object]]:
    """Every call of ncclDebugLogInternal with the constant arguments set up before it
    since the previous call (a register written otherwise is unknown)."""
    proc = subprocess.Popen(
        ["objdump", "-d", "--no-show-raw-insn", "-j", ".text", str(lib)],
        stdout=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None  # noqa: S101
    known: dict[str, int | None] = {}
    for raw in proc.stdout:
        found = _INSN.match(raw)
        if not found:
            known = {}  # a function label or a blank line
            continue
        text = f"{found.group(2)} {found.group(3)}".strip()
        if not text.startswith("lea"):
            text = text.split("  #", 1)[0].strip()  # keep lea's "# ADDR" comment only
        if text.startswith(("call", "jmp")) and "<_Z20ncclDebugLogInternal" in text:
            yield {arg: known.get(arg) for arg in ARGS}  # a call, or a tail call
            known = {}
            continue
        if text.startswith(("call", "jmp", "ret")):
            known = {}
            continue
        if m := _LEA.match(text):
            if m.group(1) in _REG:
                known[_REG[m.group(1)]] = int(m.group(2), 16)
        elif m := _MOV_IMM.match(text):
            if m.group(2) in _REG:
                known[_REG[m.group(2)]] = int(m.group(1), 16)
        elif m := _OR_ALL.match(text):
            if m.group(1) in _REG:
                known[_REG[m.group(1)]] = -1
        elif (m := _XOR_SELF.match(text)) and m.group(1) == m.group(2):
            if m.group(1) in _REG:
                known[_REG[m.group(1)]] = 0
        elif (m := _WRITES.search(text)) and m.group(1) in _REG:
            known[_REG[m.group(1)]] = None  # computed: the binary does not say
    proc.wait()


def extract(lib: Path) -> dict[str, object]:
    """The log formats of one ``libnccl.so.2``: call sites, DIAG lines, the banner."""
    elf = Elf(lib)
    sites = []
    for call in call_sites(lib):
        level = call["level"]
        fmt = elf.string(call["fmt"]) if isinstance(call["fmt"], int) else None  # type: ignore[arg-type]
        file = elf.string(call["file"]) if isinstance(call["file"], int) else None  # type: ignore[arg-type]
        func = elf.string(call["func"]) if isinstance(call["func"], int) else None  # type: ignore[arg-type]
        sites.append({
            "level": LEVELS.get(level) if isinstance(level, int) else None,
            "flags": call["flags"],
            "file": file,
            "func": func,
            "line": call["line"],
            "format": fmt,
        })  # fmt: skip
    strings = list(elf.rodata_strings())
    banner = [s for s in strings if re.fullmatch(r"NCCL version \d+\.\d+\.\d+\+cuda[\d.]+", s)]
    diag = sorted({s for s in strings if " NCCL DIAG " in s})
    # the texts a DIAG line's "%s" carries (RAS checks: "GPU inventory: ..."), found by
    # their check names (src/ras/diagnostics_*.cc in the binary's __FILE__ strings)
    checks = ("GPU inventory", "CUDA driver version", "ECC", "NVLink", "NCCL environment")
    diag_texts = sorted({s for s in strings if s.startswith(tuple(c + ":" for c in checks))})
    tags = sorted({s for s in strings if re.fullmatch(r"\[[A-Z]+\] +", s)})
    return {
        "library": lib.name,
        "sha256": hashlib.sha256(elf.data).hexdigest(),
        "banner": banner,
        "sites": sites,
        "diag": diag,
        "diag_texts": diag_texts,
        "diag_tags": tags,
    }


def _site(site: dict[str, object]) -> str | None:
    if site.get("file") and isinstance(site.get("line"), int):
        return f"{site['file']}:{site['line']}"
    return None


def calibrate(binary_path: str, table_path: str, release: str) -> None:
    """Compare a binary's extraction with the source table for the same release."""
    found = json.loads(Path(binary_path).read_text())
    table = json.loads(Path(table_path).read_text())
    version = tuple(int(p) for p in release.split("."))

    def prints(runs: str) -> bool:
        for run in str(runs).split(","):
            if not run:
                continue
            lo, _, hi = run.partition("~")
            lo_v = tuple(int(p) for p in lo.split("-")[0].split("."))
            hi_v = tuple(int(p) for p in (hi or lo).split("-")[0].split("."))
            if lo_v <= version <= hi_v:
                return True
        return False

    src = [f for f in table["formats"] if not f.get("plugin") and prints(f["runs"])]
    src_fmts = {(f["level"], f["format"]) for f in src if f["level"] in ("INFO", "WARN")}
    src_sites = {
        (f["format"], site)
        for f in src
        if f["level"] == "WARN"
        for site, runs in (f.get("sites") or {}).items()
        if prints(runs)
    }
    sites = found["sites"]
    got = {(s["level"], s["format"]) for s in sites if s["format"] and s["level"]}
    got_sites = {(s["format"], _site(s)) for s in sites if s["level"] == "WARN" and _site(s)}
    complete = [s for s in sites if s["format"] and s["level"]]
    print(f"calls of ncclDebugLogInternal: {len(sites)}; level and format known: {len(complete)}")
    for level in ("INFO", "WARN"):
        want = {f for f in src_fmts if f[0] == level}
        have = {f for f in got if f[0] == level}
        print(
            f"{level}: source {len(want)}, binary {len(have)}, both {len(want & have)}, "
            f"source only {len(want - have)}, binary only {len(have - want)}"
        )
    print(
        f"WARN sites: source {len(src_sites)}, binary {len(got_sites)}, "
        f"both {len(src_sites & got_sites)}"
    )
    missing = sorted(src_fmts - got)
    print("source formats the binary does not show (first 15):")
    for level, text in missing[:15]:
        print(f"  {level}: {text[:100]!r}")
    extra = sorted(got - src_fmts)
    print("binary formats the source table does not hold (first 15):")
    for level, text in extra[:15]:
        print(f"  {level}: {text[:100]!r}")


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(p) for p in tag.split("-", maxsplit=1)[0].split("."))


def _extend_runs(runs: str, previous: str, release: str) -> str:
    """``2.20.3~2.30.7`` + 2.31.2 (whose previous release is 2.30.7) -> ``2.20.3~2.31.2``."""
    parts = [p for p in runs.split(",") if p]
    if parts and parts[-1].split("~")[-1] == previous:
        parts[-1] = parts[-1].split("~")[0] + "~" + release
    else:
        parts.append(f"{release}~{release}")
    return ",".join(parts)


def _site_runs(runs: str, release: str, previous: str) -> str:
    return _extend_runs(runs, previous, release) if runs else f"{release}~{release}"


def merge(table_path: str, out_path: str, given: list[str]) -> None:
    table = json.loads(Path(table_path).read_text())
    formats: list[dict[str, object]] = table["formats"]
    releases: list[str] = table["releases"]
    binaries: dict[str, object] = table.setdefault("binaries", {})
    for item in given:
        release, _, rest = item.partition("=")
        wheel, _, path = rest.partition(":")
        found = json.loads(Path(path).read_text())
        previous = releases[-1]
        if _version(release) <= _version(previous):
            raise SystemExit(f"{release}: releases are merged in order, after {previous}")
        releases.append(release)
        by_key = {(str(f["level"]), str(f["format"])): f for f in formats if not f.get("plugin")}
        seen: set[tuple[str, str]] = set()
        sites: dict[str, set[str]] = {}
        for site in found["sites"]:
            level, text = site["level"], site["format"]
            if level not in ("INFO", "WARN") or not text:
                continue
            seen.add((level, text))
            where = _site(site)
            if level == "WARN" and where:
                sites.setdefault(text, set()).add(where)
        for key in sorted(seen):
            entry = by_key.get(key)
            if entry is None:
                entry = {"level": key[0], "format": key[1], "runs": "", "binary": True}
                category = evidence_of(key[0], key[1])
                if category is not None:
                    entry["evidence"] = category[0]
                    entry["kinds"] = sorted(category[1])
                entry["example"] = example(key[1].strip())
                if key[0] == "WARN":
                    entry["fatal"] = "unknown"  # machine code: the binary cannot say
                    entry["sites"] = {}
                formats.append(entry)
                by_key[key] = entry
            entry["runs"] = _extend_runs(str(entry["runs"]), previous, release)
            if key[0] == "WARN":
                old = entry.setdefault("sites", {})
                assert isinstance(old, dict)  # noqa: S101
                for where in sorted(sites.get(key[1], ())):
                    old[where] = _site_runs(str(old.get(where, "")), release, previous)
        # the version banner (printed bare at NCCL_DEBUG=VERSION, prefixed at INFO)
        for entry in formats:
            if entry["level"] == "VERSION" or entry["level"] == "MACRO":
                entry["runs"] = _extend_runs(str(entry["runs"]), previous, release)
        binaries[release] = {
            "wheel": f"{wheel} {release}",
            "library": found["library"],
            "sha256": found["sha256"],
            "banner": found["banner"],
            "diag": found["diag"],
            "diag_texts": found["diag_texts"],
            "diag_tags": found["diag_tags"],
        }
    formats.sort(key=lambda r: (str(r.get("plugin", "")), str(r["level"]), str(r["format"])))
    table["generated_from"] = (
        str(table["generated_from"]).split("; binaries", 1)[0]
        + "; binaries "
        + ", ".join(f"{r} ({b['wheel']})" for r, b in binaries.items())  # type: ignore[index]
        + ": tools/nccl_formats/binary.py"
    )
    Path(out_path).write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"{out_path}: {len(formats)} formats, releases up to {releases[-1]}", file=sys.stderr)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    sub = parser.add_subparsers(dest="command", required=True)
    one = sub.add_parser("extract", help="the formats of one libnccl.so.2")
    one.add_argument("library", type=Path)
    one.add_argument("out", type=Path)
    cal = sub.add_parser("calibrate", help="compare with the source table for one release")
    cal.add_argument("extracted")
    cal.add_argument("table")
    cal.add_argument("release")
    mer = sub.add_parser("merge", help="add binary-only releases to the table")
    mer.add_argument("table")
    mer.add_argument("out")
    mer.add_argument("releases", nargs="+", metavar="RELEASE=WHEEL:EXTRACTED.json")
    args = parser.parse_args()
    if args.command == "extract":
        data = extract(args.library)
        args.out.write_text(json.dumps(data, indent=0) + "\n")
        print(f"{args.out}: {len(data['sites'])} log calls", file=sys.stderr)  # type: ignore[arg-type]
    elif args.command == "calibrate":
        calibrate(args.extracted, args.table, args.release)
    else:
        merge(args.table, args.out, args.releases)


if __name__ == "__main__":
    main()
