"""Build src/hpnet/ncclog/data/nccl_formats.json from NCCL's source history.

Written for hpnet. Inputs (made from a git mirror of NVIDIA/nccl by the tools beside this
file; nothing of NCCL's code is kept, only its format strings, which are facts about its
output):

    python tools/nccl_formats/extract.py --all-sites MIRROR formats.json
    python tools/nccl_formats/warn_fatal.py MIRROR formats.json warn_fatal.json
    python tools/nccl_formats/extract.py --profile aws-ofi-nccl AWS_MIRROR aws.json  # ...
    python tools/nccl_formats/build_table.py formats.json [warn_fatal.json] \\
        src/hpnet/ncclog/data/nccl_formats.json [--plugin aws-ofi-nccl=aws.json ...]

Kept: every INFO, WARN and VERSION format of NCCL's src/ (and the version string), with
the releases that print it and an example line rendered from the format with sample
values; for evidence-carrying formats (hpnet.ncclog.formats.EVIDENCE) the category and
the kinds the parser must read it as; for WARNs the fatal
decision, the releases in which a caller of the failed call goes on (``recover``), and
each ``file:line`` that prints it with its releases.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[2] / "src"))

from hpnet.ncclog.formats import _CONVERSION, evidence_of

#: levels of the NCCL debug log (RAW printf, RAS and DOCA output are not the debug log)
LEVELS = ("INFO", "WARN", "VERSION", "MACRO")


def runs_text(runs: list[list[str]]) -> str:
    return ",".join(f"{a}~{b}" for a, b in runs)


#: sample values for the %s of formats whose meaning the parser reads
_STRINGS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        r"^NET/IB : Using%s %s; OOB",
        (" [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE", "[RO]", "eth0", "10.0.0.1<0>"),
    ),
    (r"^NET/IB : Using%s ; OOB", (" [0]mlx5_0:1/IB", "eth0", "10.0.0.1<0>")),
    (r"^NET/Socket : Using%s", (" [0]eth0:10.0.0.1<0>",)),
    (r"^NET/\w+ ?: Using%s$", (" [0]eth1:10.0.0.2<0> [1]eth2:10.0.0.3<0>",)),
    (r"^NET/OFI Selected [Pp]rovider is %s", ("efa", "efa-direct")),
    (r"aws-ofi-nccl %s", ("1.7.4-aws",)),
    (r"^NET/%s : Using", ("IB", " [0]mlx5_0:1/IB", "eth0", "10.0.0.1<0>")),
    (r"^NET/IB: \[%d\] %s:%s:%d", ("mlx5_0", "uverbs0", "IB", "Mlx5", "0000:3b:00.0")),
    (r"^NET/IB: \[%d\] %s:%d", ("mlx5_0", "IB")),
    (r"Made virtual device", ("mlx5_0",)),
    (r"^Bootstrap ?: Using%s", (" eth0:10.0.0.1<0>",)),
    (r"^Bootstrap: Using %s:%d", ("eth0",)),
    (r"^%s set by environment to", ("NCCL_IB_HCA", "mlx5")),
    (r"set by environment to %s|set to %s", ("mlx5",)),
    (r"GPU Direct RDMA %s for HCA", ("IB", "Disabled", "mlx5_0")),
    (r"GPU Direct RDMA Disabled for %s", ("GPU 0 / HCA 1a (distance 4 > 3)",)),
    (
        r"GPU Direct RDMA Enabled for %s",
        ("GPU 0 / HCA 1a (distance 2 <= 3, read 1, mode Default)",),
    ),
    (r"^NET/%s : GPU Direct RDMA", ("IB",)),
    (r"GPU Direct RDMA Disabled for GPU %d / HCA %s \(%s\)", ("mlx5_0", "no module")),
    (r"GPU Direct RDMA", ("mlx5_0", "x")),
    (r"via NET/%s/%d", ("IB", "/GDRDMA", "", "")),
    (r"via P2P/%s%s%s", ("CUMEM", "", "")),
    (r"via P2P/\w+%s", ("", "")),
    (r"via SHM/%s/%s", ("direct", "direct")),
    (r"via COLLNET/%s", ("SHARP", "/GDRDMA", "")),
    (r"via P2P/indirect", ("",)),
    (r"^%s comm %p", ("ncclCommInitRank",)),
    (r"^\[Rank %d\] %s comm", ("ncclCommInitRankConfig",)),
    (r"^%s:%d \(%s\) -> %d \(%s\)", ("init.cc", "ncclInit", "Connection refused")),
    (r"^%s:%d \(%s\) -> %d", ("init.cc", "ncclInit")),
    (r"^%s:%d -> %d \(%s\)", ("init.cc", "Connection refused")),
    (r"^%s:%d -> %d", ("init.cc",)),
    (r"^NVLS multicast support is %savailable", ("not ",)),
    (r"^Using (?:internal |external )?[Nn]etwork %s", ("IB",)),
    (r"NET plugin %s", ("IB",)),
    (r"plugin %s to comm", ("GIN_IB_GDAKI",)),
    (r"^Count not open %s", ("libibverbs.so.1",)),
)


def example(text: str) -> str:
    """``text`` with its conversions filled with sample values the parser can read."""
    strings: tuple[str, ...] = ()
    for pattern, values in _STRINGS:
        if re.search(pattern, text):
            strings = values
            break
    out = []
    at = 0
    used = 0
    for found in _CONVERSION.finditer(text):
        out.append(text[at : found.start()])
        flags, width, _, _, kind = found.groups()
        if kind == "%":
            value = "%"
        elif kind == "s":
            value = strings[used] if used < len(strings) else "x"
            used += 1
        elif kind in "di":
            value = "1".zfill(int(width)) if width and width.isdigit() and "0" in flags else "1"
        elif kind == "u":
            value = "1"
        elif kind in "xX":
            value = "1a"
        elif kind == "p":
            value = "0x55d0c1e0"
        elif kind in "eEfgG":
            value = "1.5"
        else:
            value = "x"
        out.append(value)
        at = found.end()
    out.append(text[at:])
    return "".join(out)


def site_decisions(decisions: list[dict[str, object]]) -> dict[str, str]:
    """``file:line`` -> the decision over all its releases: ``fatal``, ``recoverable`` (a
    fatal call whose caller goes on without the error), ``nonfatal``, ``unknown``, or
    ``mixed`` where its releases differ."""
    found: dict[str, set[str]] = {}
    for decision in decisions:
        said = str(decision.get("decision") or "unknown")
        callers = decision.get("callers")
        if said == "fatal" and isinstance(callers, dict) and callers.get("do_not_propagate"):
            said = "recoverable"
        found.setdefault(str(decision["site"]), set()).add(said)
    out = {}
    for site, said in found.items():
        if len(said) == 1:
            out[site] = said.pop()
        elif said <= {"fatal", "recoverable"}:
            out[site] = "recoverable"
        else:
            out[site] = "mixed" if "nonfatal" in said else "unknown"
    return out


def build(formats_path: str, fatal_path: str | None) -> dict[str, object]:
    data = json.loads(Path(formats_path).read_text())
    fatal: dict[str, str] = {}
    recover: dict[str, list[str]] = {}
    by_site: dict[str, dict[str, str]] = {}
    if fatal_path:
        for entry in json.loads(Path(fatal_path).read_text())["formats"]:
            fatal[entry["format"]] = entry["fatal"]
            if entry.get("callers_may_recover"):
                recover[entry["format"]] = list(entry["callers_may_recover"])
            by_site[entry["format"]] = site_decisions(entry.get("decisions", []))
    releases = list(data.get("extra_tags", [])) + list(data["tags"])
    out = []
    for entry in data["formats"]:
        level = entry["level"]
        text = entry.get("format")
        if level not in LEVELS or not text:
            continue
        if level == "MACRO" and not text.startswith("NCCL version"):
            continue
        runs = runs_text(entry.get("runs", []))
        extra = sorted(entry.get("extra_tags", {}))
        row: dict[str, object] = {"level": level, "format": text, "runs": runs}
        if extra:
            row["extra"] = extra
        category = evidence_of("WARN" if level == "WARN" else "INFO", text)
        if level == "MACRO":
            category = ("version", frozenset({"bare-version", "version"}))
        if category is not None:
            row["evidence"] = category[0]
            row["kinds"] = sorted(category[1])
        # every format gets a line rendered from it: evidence must be read as its kinds,
        # the rest must not be read as evidence (tests/unit/test_format_table.py)
        row["example"] = (
            "NCCL version 2.21.5+cuda12.4" if level == "MACRO" else example(text.strip())
        )
        if level == "WARN":
            row["fatal"] = fatal.get(text, "unknown")
            if text in recover:  # releases where a caller goes on after the failed call
                row["recover"] = ",".join(recover[text])
            # where one call site decides otherwise than the format as a whole
            differ = {k: v for k, v in by_site.get(text, {}).items() if v != row["fatal"]}
            if differ:
                row["site_fatal"] = dict(sorted(differ.items()))
            sites = {site: list(r) for site, r in entry.get("site_runs", {}).items()}
            # releases before 2.4 (the "extra" tags) are listed per site on their own
            for site, tags in entry.get("extra_site_tags", {}).items():
                sites.setdefault(site, []).extend([tag, tag] for tag in tags)
            row["sites"] = {site: runs_text(r) for site, r in sorted(sites.items())}
        out.append(row)
    out.sort(key=lambda r: (str(r["level"]), str(r["format"])))
    return {
        "generated_from": "NVIDIA/nccl release tags "
        + f"{releases[0]} .. {releases[-1]} ({len(releases)} tags), src/ only; "
        "tools/nccl_formats (extract.py --all-sites, warn_fatal.py, build_table.py)",
        "releases": releases,
        "formats": out,
    }


#: the NET plugins whose format strings are read: the repository each comes from
PLUGINS = {
    "aws-ofi-nccl": "aws/aws-ofi-nccl",
    "nccl-rdma-sharp-plugins": "Mellanox/nccl-rdma-sharp-plugins",
    "nccl-fastsocket": "google/nccl-fastsocket",
    "nccl-plugin-gpudirecttcpx": "google/nccl-plugin-gpudirecttcpx",
    "nccl-plugin-gpudirect-tcpxo": "google/nccl-plugin-gpudirect-tcpxo",
}


def plugin_rows(name: str, path: str) -> tuple[list[dict[str, object]], dict[str, object]]:
    """The INFO and WARN formats of one plugin (``extract.py --profile NAME`` output), and
    what the table says of the plugin: its repository and the tags read."""
    data = json.loads(Path(path).read_text())
    tags = list(data.get("extra_tags", [])) + list(data["tags"])
    rows = []
    seen = set()
    for entry in data["formats"]:
        level = entry["level"]
        text = entry.get("format")
        if level not in ("INFO", "WARN") or not text or (level, text) in seen:
            continue
        seen.add((level, text))
        row: dict[str, object] = {
            "level": level,
            "format": text,
            "runs": runs_text(entry.get("runs", [])),
            "plugin": name,
            "example": example(text.strip()),
        }
        category = evidence_of(level, text)
        if category is not None:
            row["evidence"] = category[0]
            row["kinds"] = sorted(category[1])
        rows.append(row)
    return rows, {"repository": PLUGINS[name], "tags": tags}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("formats", help="extract.py --all-sites output for NVIDIA/nccl")
    parser.add_argument("warn_fatal", nargs="?", help="warn_fatal.py output")
    parser.add_argument("out")
    parser.add_argument(
        "--plugin",
        action="append",
        default=[],
        metavar="NAME=FILE",
        help=f"extract.py --profile NAME output of a NET plugin ({', '.join(PLUGINS)})",
    )
    args = parser.parse_args()
    table = build(args.formats, args.warn_fatal)
    plugins: dict[str, object] = {}
    formats: list[dict[str, object]] = table["formats"]  # type: ignore[assignment]
    for given in args.plugin:
        name, _, path = given.partition("=")
        if name not in PLUGINS or not path:
            parser.error(f"--plugin {given}: expected NAME=FILE with NAME one of {list(PLUGINS)}")
        rows, plugins[name] = plugin_rows(name, path)
        formats.extend(rows)
    formats.sort(key=lambda r: (str(r.get("plugin", "")), str(r["level"]), str(r["format"])))
    table["plugins"] = plugins
    Path(args.out).write_text(json.dumps(table, indent=0, sort_keys=True) + "\n")
    print(f"{args.out}: {len(formats)} formats", file=sys.stderr)


if __name__ == "__main__":
    main()
