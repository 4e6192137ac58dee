"""The documentation holds together: every relative link of README.md and docs/*.md reaches a file
(and a heading, when it names one), and docs/architecture.md draws the import rules the
architecture test checks."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_architecture import CORE_LAYERS, FORBIDDEN

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
ARCHITECTURE = ROOT / "docs" / "architecture.md"

_FENCE = re.compile(r"^(```|~~~).*?^\1", re.MULTILINE | re.DOTALL)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
# [text](target) and ![alt](target), a target optionally in <> and followed by a "title".
_INLINE_LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_REFERENCE_LINK = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)", re.MULTILINE)
_HEADING = re.compile(r"^#{1,6}\s+(.*?)\s*#*\s*$")
_HTML_ANCHOR = re.compile(r"<a\s+(?:id|name)=\"([^\"]+)\"")


def prose(text: str) -> str:
    """``text`` without fenced code blocks and code spans, where brackets are not links."""
    return _CODE_SPAN.sub("", _FENCE.sub("", text))


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, each space a hyphen."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading.strip().lower()).replace("`", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    """The anchors of a page: its headings (a repeated one gets -1, -2, ...) and its <a id>s."""
    text = page.read_text()
    found = set(_HTML_ANCHOR.findall(text))
    seen: dict[str, int] = {}
    for line in _FENCE.sub("", text).splitlines():
        match = _HEADING.match(line)
        if match:
            base = slug(match.group(1))
            found.add(f"{base}-{seen[base]}" if base in seen else base)
            seen[base] = seen.get(base, 0) + 1
    return found


def relative_links(page: Path) -> list[str]:
    text = prose(page.read_text())
    targets = _INLINE_LINK.findall(text) + _REFERENCE_LINK.findall(text)
    return [target for target in targets if not re.match(r"[a-zA-Z][a-zA-Z+.-]*:", target)]


def broken_link(page: Path, target: str) -> str | None:
    """What is wrong with ``target`` as ``page`` links it, or None when it resolves."""
    path, _, anchor = target.partition("#")
    destination = (page.parent / path).resolve() if path else page
    if not destination.exists():
        return f"{target}: no such file"
    if anchor and destination.suffix == ".md" and anchor not in anchors(destination):
        return f"{target}: no heading #{anchor} in {destination.name}"
    return None


@pytest.mark.parametrize("page", PAGES, ids=lambda page: page.name)
def test_every_relative_link_reaches_a_file_and_heading(page: Path) -> None:
    problems = [problem for target in relative_links(page) if (problem := broken_link(page, target))]
    assert problems == []


def test_a_link_to_a_missing_heading_or_file_is_reported(tmp_path: Path) -> None:
    page = tmp_path / "page.md"
    page.write_text("# Quick start\n\n## Quick start\n\n```\n# not a heading\n```\n")
    assert broken_link(page, "#quick-start") is None
    assert broken_link(page, "#quick-start-1") is None
    assert broken_link(page, "#not-a-heading") is not None
    assert broken_link(page, "other.md") is not None


def test_headings_slug_as_github_does() -> None:
    assert slug("Claude Desktop: `scripts/setup_mcp_for_claude.sh`") == (
        "claude-desktop-scriptssetup_mcp_for_claudesh"
    )
    assert slug("Recall quality (LoCoMo, npm READMEs, off-topic questions)") == (
        "recall-quality-locomo-npm-readmes-off-topic-questions"
    )


def test_the_architecture_page_lists_the_import_rules_of_the_test() -> None:
    """Its table "part | never imports" is tests/test_architecture.py's FORBIDDEN, rule for rule."""
    table = ARCHITECTURE.read_text().split("| part | never imports |\n", 1)[1].split("\n\n", 1)[0]
    rows = re.findall(r"^\| `([^`]+)` \| (.+) \|$", table, re.MULTILINE)
    listed = {part: tuple(re.findall(r"`([^`]+)`", banned)) for part, banned in rows}
    assert listed == FORBIDDEN


def test_the_architecture_diagram_draws_the_core_layers_in_the_tests_order() -> None:
    """Each row of the diagram starts with the part it draws, from the top down."""
    diagram = _FENCE.search(ARCHITECTURE.read_text())
    assert diagram is not None
    drawn: list[str] = []
    for line in diagram.group(0).splitlines():
        match = re.match(r"^[\s|]*([a-z_]+)(?:/|\.py)\s", line)
        if match and match.group(1) not in drawn:
            drawn.append(match.group(1))
    assert drawn == ["memory_system", "interfaces", *(names[0] for names in CORE_LAYERS)]
