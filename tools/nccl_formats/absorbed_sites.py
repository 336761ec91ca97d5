#!/usr/bin/env python3
"""Trail sites whose error NCCL does not pass up: the checks inside
``ncclTransportCollNetSetup`` (src/transport.cc), which returns a flag ("fail", later
``ret != ncclSuccess``) that its caller ORs and then warns "Cannot initialize CollNet"
about, in every release from 2.10.3 to the newest tag read.

    python tools/nccl_formats/absorbed_sites.py /work/.mirror/NVIDIA+nccl/repo

Prints each ``transport.cc:N`` at which *every* release that has a check statement there
(NCCLCHECK, NCCLCHECKGOTO, CUDACHECK, CUDACHECKGOTO: the macros that print
``file:line -> code``) has it inside that function, with those releases: a trail line
at such a site can only be a CollNet setup failure that NCCL absorbed. Standard library
only; hpnet.ncclog.recovery holds the result.
"""

import re
import subprocess
import sys

CHECK = re.compile(r"\b(?:NCCLCHECK|NCCLCHECKGOTO|CUDACHECK|CUDACHECKGOTO)\(")


def main(repo: str) -> None:
    git = ["git", f"--git-dir={repo}"]
    tags = [
        t
        for t in subprocess.run(
            [*git, "tag"], capture_output=True, text=True, check=True
        ).stdout.split()
        if t.startswith("v2.")
    ]
    tags.sort(key=lambda t: [int(x) for x in re.findall(r"\d+", t)])
    inside: dict[int, set[str]] = {}
    elsewhere: dict[int, set[str]] = {}
    for tag in tags:
        shown = subprocess.run(
            [*git, "show", f"{tag}:src/transport.cc"], capture_output=True, text=True, check=False
        )
        if shown.returncode:
            continue
        lines = shown.stdout.split("\n")
        start = next(
            (
                i
                for i, line in enumerate(lines)
                if re.match(r"^\w+ ncclTransportCollNetSetup\(", line)
            ),
            None,
        )
        end = -1
        if start is not None:
            depth = 0
            for j in range(start, len(lines)):
                depth += lines[j].count("{") - lines[j].count("}")
                if j > start and depth == 0 and "}" in lines[j]:
                    end = j
                    break
            returns = [
                line.strip() for line in lines[start : end + 1] if line.strip().startswith("return")
            ]
            if not all(r in ("return fail;", "return ret != ncclSuccess;") for r in returns):
                start, end = None, -1  # a release whose function passes the error up
        for number, line in enumerate(lines, 1):
            if CHECK.search(line):
                into = inside if start is not None and start < number - 1 <= end else elsewhere
                into.setdefault(number, set()).add(tag[1:].rsplit("-", 1)[0])
    for number in sorted(inside):
        if number not in elsewhere:
            print(
                f"transport.cc:{number}",
                ",".join(sorted(inside[number], key=lambda v: [int(x) for x in v.split(".")])),
            )


if __name__ == "__main__":
    main(sys.argv[1])
