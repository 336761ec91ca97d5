#!/usr/bin/env python3
"""Check sites whose error NCCL does not pass up: the checks inside a function that
returns a flag instead of the error (``int``/``bool``, ending in ``return fail;``,
``return ret != ncclSuccess;`` or ``return (ret == ncclSuccess);``), which its caller
takes as "could not" and goes on:

- ``ncclTransportCollNetSetup`` (src/transport.cc): its caller ORs the flag, warns
  "Cannot initialize CollNet" and sets up the communicator without CollNet;
- ``ncclIsCuMemSupported`` and ``ncclCuMemHostEnable`` (src/misc/cudawrap.cc): a failed
  CUDA call there is "cuMem not supported", and NCCL goes on with its legacy buffers.

    python tools/nccl_formats/absorbed_sites.py /work/.mirror/NVIDIA+nccl/repo

Prints each ``file:N`` (the file's name, as NCCL prints ``__FILE__`` without its folder
in the site hpnet compares) at which *every* release that has a check statement there
(NCCLCHECK and CUDACHECK, CUCHECK, SYSCHECK and their GOTO forms: the macros that print
``file:line -> code`` or the WARN of the failed call) has it inside such a function,
with those releases: a trail or a WARN at such a site is a failure NCCL absorbed.
Standard library only; hpnet.ncclog.recovery holds the result.
"""

import re
import subprocess
import sys

CHECK = re.compile(
    r"\b(?:NCCLCHECK|NCCLCHECKGOTO|CUDACHECK|CUDACHECKGOTO|CUCHECK|CUCHECKGOTO|SYSCHECK"
    r"|SYSCHECKGOTO)\("
)
FLAG_RETURN = re.compile(r"^\s*return (?:fail|ret != ncclSuccess|\(ret == ncclSuccess\));")
HEADER = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:int|bool)\s+\w+\(")


def _git(repo: str, *args: str) -> str:
    command = ["git", f"--git-dir={repo}", *args]
    done = subprocess.run(command, check=False, capture_output=True, text=True)
    return done.stdout if done.returncode == 0 else ""


def _flag_bodies(lines: list[str]) -> list[tuple[int, int]]:
    """(first, last) 0-based line of each function that returns a flag, not the error."""
    bodies = []
    for at, line in enumerate(lines):
        if not FLAG_RETURN.match(line):
            continue
        start = next((i for i in range(at, -1, -1) if HEADER.match(lines[i])), None)
        if start is None:
            continue
        depth, end = 0, None
        for j in range(start, len(lines)):
            depth += lines[j].count("{") - lines[j].count("}")
            if j > start and depth == 0 and "}" in lines[j]:
                end = j
                break
        if end is None or end < at:
            continue
        returns = [x.strip() for x in lines[start : end + 1] if x.strip().startswith("return")]
        if all(FLAG_RETURN.match(r) or r in ("return 0;", "return 1;") for r in returns):
            bodies.append((start, end))
    return bodies


def main(repo: str) -> None:
    tags = [t for t in _git(repo, "tag").split() if t.startswith("v2.")]
    tags.sort(key=lambda t: [int(x) for x in re.findall(r"\d+", t)])
    files = sorted(
        {
            hit.split(":", 2)[1]
            for tag in tags
            for hit in _git(
                repo, "grep", "-lE", r"return (fail|ret != ncclSuccess|\(ret == ncclSuccess\));",
                tag, "--", "src",
            ).split()
        }
    )  # fmt: skip
    inside: dict[str, set[str]] = {}
    elsewhere: dict[str, set[str]] = {}
    for tag in tags:
        release = tag[1:].rsplit("-", 1)[0]
        for path in files:
            text = _git(repo, "show", f"{tag}:{path}")
            if not text:
                continue
            lines = text.split("\n")
            bodies = _flag_bodies(lines)
            name = path.rsplit("/", 1)[-1]
            for number, line in enumerate(lines, 1):
                if CHECK.search(line):
                    into = inside if any(s < number - 1 <= e for s, e in bodies) else elsewhere
                    into.setdefault(f"{name}:{number}", set()).add(release)
    for site in sorted(inside, key=lambda s: (s.split(":")[0], int(s.split(":")[1]))):
        if site not in elsewhere:
            releases = sorted(inside[site], key=lambda v: [int(x) for x in v.split(".")])
            print(site, ",".join(releases))


if __name__ == "__main__":
    main(sys.argv[1])
