"""Markdown chunking: headers outside code only, exact text, splits, merges, levels, links."""

from __future__ import annotations

from pathlib import Path

from cognitive_memory.core.memory import HierarchyLevel
from cognitive_memory.loaders.markdown import (
    MAX_CHUNK_CHARS,
    chunk_markdown,
    front_matter,
    link_targets,
    plain_title,
    split_sections,
)

DOC = Path("/notes/guide.md")
FILLER = "This sentence is here so that the section is long enough to stand on its own. " * 2


def _keys(text: str) -> list[str]:
    return [chunk.key for chunk in chunk_markdown(text, DOC)]


def test_hash_lines_inside_fenced_code_are_not_headers() -> None:
    text = f"# Title\n\n{FILLER}\n\n```bash\n# install it\npip install x\n```\n\n~~~\n## not either\n~~~\n"
    sections = split_sections(text)
    assert [s.path for s in sections] == [("Title",)]
    assert "# install it" in sections[0].text and "## not either" in sections[0].text


def test_a_longer_fence_is_closed_only_by_a_fence_at_least_as_long() -> None:
    text = "# A\n\n````\n```\n# still code\n```\n````\n\n## B\n\ntext"
    assert [s.path for s in split_sections(text)] == [("A",), ("A", "B")]


def test_indented_and_hashtag_lines_are_not_headers_but_setext_lines_are() -> None:
    text = "    # indented code\n#hashtag\n\nSetext One\n==========\n\nbody\n\nSetext Two\n----------\n\nmore"
    sections = split_sections(text)
    assert [s.path for s in sections] == [(), ("Setext One",), ("Setext One", "Setext Two")]
    assert sections[1].depth == 1 and sections[2].depth == 2


def test_a_thematic_break_after_a_blank_line_is_not_a_header() -> None:
    text = f"# Title\n\n{FILLER}\n\n---\n\n{FILLER}"
    assert [s.path for s in split_sections(text)] == [("Title",)]


def test_a_file_without_headers_is_one_chunk_with_all_its_text() -> None:
    text = "Just a note about the release process.\n\nIt has two paragraphs."
    chunks = chunk_markdown(text, DOC)
    assert len(chunks) == 1
    assert chunks[0].content == text
    assert chunks[0].metadata["title"] == "guide"
    assert chunks[0].hierarchy_level is HierarchyLevel.CONCEPT


def test_front_matter_gives_title_and_tags_and_is_not_content() -> None:
    text = '---\ntitle: "Deploy Guide"\ntags:\n  - ops\n  - deploy\nauthor: x\n---\n# Deploy\n\n' + FILLER
    chunks = chunk_markdown(text, DOC)
    assert chunks[0].metadata["title"] == "Deploy Guide"
    assert chunks[0].tags == ("ops", "deploy")
    assert "author" not in chunks[0].content and chunks[0].content.startswith("# Deploy")


def test_inline_tag_lists_and_missing_front_matter_end() -> None:
    assert front_matter("---\ntags: [a, 'b']\n---\nbody") == ({"tags": ["a", "b"]}, "body")
    assert front_matter("---\nno end here\n")[0] == {}


def test_tables_stay_whole_inside_their_section() -> None:
    table = "| name | port |\n|------|------|\n| api  | 8080 |\n| db   | 5432 |"
    chunks = chunk_markdown(f"# Ports\n\n{FILLER}\n\n{table}\n", DOC)
    assert table in chunks[0].content


def test_a_long_section_is_split_at_paragraphs_and_never_truncated() -> None:
    paragraphs = [f"Paragraph {n}. " + "word " * 60 for n in range(20)]
    code = "```python\n" + "\n\nprint('x')  # a blank line above stays inside\n" * 3 + "```"
    body = "\n\n".join([*paragraphs[:10], code, *paragraphs[10:]])
    chunks = chunk_markdown(f"# Big\n\n{body}\n", DOC)
    assert len(chunks) > 2
    assert all(len(c.content) <= MAX_CHUNK_CHARS + 100 for c in chunks)
    joined = "\n".join(c.content for c in chunks)
    for paragraph in paragraphs:
        assert paragraph.strip() in joined
    assert sum(code in c.content for c in chunks) == 1
    assert [c.metadata.get("part") for c in chunks] == list(range(1, len(chunks) + 1))
    assert all(c.parent == chunks[0].key for c in chunks[1:])


def test_a_tiny_title_is_merged_into_its_first_subsection() -> None:
    text = f"# Project\n\n## Install\n\n{FILLER}\n\n## Usage\n\n{FILLER}"
    chunks = chunk_markdown(text, DOC)
    assert [c.key for c in chunks] == ["Project/Install", "Project/Usage"]
    assert chunks[0].content.startswith("# Project\n\n## Install")
    assert chunks[1].parent == "Project/Install"


def test_a_tiny_last_section_joins_the_chunk_before_it() -> None:
    chunks = chunk_markdown(f"# Notes\n\n{FILLER}\n\n## See also\n\nthe wiki", DOC)
    assert len(chunks) == 1 and chunks[0].content.endswith("## See also\n\nthe wiki")


def test_levels_put_titles_and_overviews_high_and_details_low() -> None:
    text = (
        f"# Guide\n\n{FILLER}\n\n## Overview\n\n{FILLER}\n\n## Setup\n\n{FILLER}\n\n"
        f"### Linux\n\n{FILLER}\n\n#### Debian\n\n{FILLER}"
    )
    levels = {c.key: c.hierarchy_level for c in chunk_markdown(text, DOC)}
    assert levels == {
        "Guide": HierarchyLevel.CONCEPT,
        "Guide/Overview": HierarchyLevel.CONCEPT,
        "Guide/Setup": HierarchyLevel.CONTEXT,
        "Guide/Setup/Linux": HierarchyLevel.EPISODE,
        "Guide/Setup/Linux/Debian": HierarchyLevel.EPISODE,
    }


def test_later_chunks_carry_a_breadcrumb_and_their_section_path() -> None:
    text = f"# Guide\n\n{FILLER}\n\n## Setup\n\n{FILLER}\n\n### Linux\n\n{FILLER}"
    linux = chunk_markdown(text, DOC)[-1]
    assert linux.content.startswith("Guide › Setup\n\n### Linux")
    assert linux.metadata["section_path"] == ["Guide", "Setup", "Linux"]
    assert linux.metadata["section"] == "Linux"
    assert linux.parent == "Guide/Setup"


def test_repeated_headings_get_distinct_keys_and_siblings_share_a_parent() -> None:
    text = f"# A\n\n{FILLER}\n\n## Example\n\n{FILLER}\n\n## Example\n\n{FILLER}"
    chunks = chunk_markdown(text, DOC)
    assert [c.key for c in chunks] == ["A", "A/Example", "A/Example#2"]
    assert chunks[1].parent == chunks[2].parent == "A"


def test_links_to_local_markdown_files_resolve_and_others_are_ignored() -> None:
    text = (
        "See [setup](setup.md#linux), [faq](../faq.markdown), [site](https://x.org/a.md), "
        "[mail](mailto:a@b.md), [image](logo.png) and [ref].\n\n[ref]: ./ref.md"
    )
    assert link_targets(text, DOC) == ("/notes/setup.md", "/faq.markdown", "/notes/ref.md")


def test_windows_line_endings_and_a_byte_order_mark_are_normalised() -> None:
    chunks = chunk_markdown("\ufeff# Title\r\n\r\n" + FILLER + "\r\n", DOC)
    assert chunks[0].content.startswith("# Title\n\n") and "\r" not in chunks[0].content


def test_titles_drop_badges_images_and_tags_and_keep_link_text() -> None:
    badge = "[![Build status](https://ci.example/b.svg?branch=main)](https://ci.example/x)"
    assert plain_title(f"cssesc {badge} ![logo](logo.png)") == "cssesc"
    assert plain_title("Using [the CLI](docs/cli.md) <sup>new</sup>") == "Using the CLI new"
    assert plain_title("`cssesc(value, options)`") == "`cssesc(value, options)`"
    assert plain_title("![only an image](x.png)") == "![only an image](x.png)"
    text = f"# cssesc {badge}\n\n{FILLER}\n\n## Install [npm](https://npmjs.com)\n\n{FILLER}\n"
    chunks = chunk_markdown(text, DOC)
    assert [chunk.metadata["section"] for chunk in chunks] == ["cssesc", "Install npm"]
    assert chunks[0].content.startswith(f"# cssesc {badge}")


def test_an_h1_without_text_of_its_own_still_titles_the_document() -> None:
    text = (
        "# Payments runbook\n\n## Refunds\n\n"
        "Refunds go through the ledger service and need an idempotency key.\n"
    )

    chunks = chunk_markdown(text, Path("/notes/runbook.md"))

    assert {chunk.metadata["title"] for chunk in chunks} == {"Payments runbook"}
