"""The README's links and the docs pages' reach what they name (issue 26, item 1: the
reference moved from the README to one page per command under docs/, each linking the
repository's files relative to itself)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
COMMANDS = ["check", "detect", "env", "doctor", "verify", "bench", "launch", "isolate", "image"]


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for the page's headings (outside fenced blocks)."""
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.DOTALL | re.MULTILINE)
    headings = re.findall(r"^#+ (.+)$", text, flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-") for h in headings}


def links(page: Path) -> list[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(), flags=re.DOTALL | re.MULTILINE)
    text = re.sub(r"`[^`\n]*`", "", text)
    return re.findall(r"\]\(([^)\s]+)\)", text)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_relative_link_reaches_a_file_and_its_heading(page: Path) -> None:
    for link in links(page):
        if re.match(r"[a-z]+://", link):
            continue
        path, _, anchor = link.partition("#")
        target = (page.parent / path).resolve() if path else page
        assert target.exists(), f"{page.name}: {link}"
        if anchor:
            assert anchor in anchors(target), f"{page.name}: {link}"


def test_the_readme_links_one_page_per_command() -> None:
    readme = (ROOT / "README.md").read_text()
    for command in COMMANDS:
        assert f"](docs/{command}.md)" in readme, command
        page = (ROOT / "docs" / f"{command}.md").read_text()
        assert page.startswith(("# `hpnet ", "# `hpnet profiles` and `hpnet env`")), command
        assert "[hpnet](../README.md) reference." in page, command
