"""Blocks too long for one memory are cut at line ends; shorter code blocks stay whole (issue #15)."""

from __future__ import annotations

from pathlib import Path

from cognitive_memory.loaders.markdown import MAX_BLOCK_CHARS, MAX_CHUNK_CHARS, chunk_markdown

DOC = Path("/notes/dump.md")


def _bodies(text: str) -> list[str]:
    """Each chunk's text without the breadcrumb line that later chunks start with."""
    chunks = chunk_markdown(text, DOC)
    return [chunks[0].content] + [c.content.split("\n\n", 1)[1] for c in chunks[1:]]


def test_a_code_block_under_the_block_limit_stays_whole() -> None:
    code = "```\n" + "x = 1\n" * 2_000 + "```"
    bodies = _bodies(f"# Dump\n\nIntro text that is long enough to be its own chunk here.\n\n{code}")
    assert code in bodies


def test_a_block_over_the_limit_is_cut_at_line_ends_into_chunk_sized_pieces() -> None:
    lines = [f"row {n:06d} = {'abc' * 10}" for n in range(MAX_BLOCK_CHARS // 30 + 1_000)]
    code = "```\n" + "\n".join(lines) + "\n```"
    bodies = _bodies(f"# Dump\n\n{code}")
    assert all(len(body) <= MAX_CHUNK_CHARS for body in bodies[1:])
    assert "\n".join(bodies[1:]) == code


def test_a_single_line_over_the_limit_is_cut_inside_and_keeps_every_character() -> None:
    blob = "".join(chr(ord("a") + n % 26) for n in range(MAX_BLOCK_CHARS + 50_000))
    chunks = chunk_markdown(f"# Blob\n\n{blob}", DOC)
    bodies = [c.content.split("\n\n", 1)[1] for c in chunks[1:]]
    assert all(len(body) <= MAX_CHUNK_CHARS for body in bodies)
    assert "".join(bodies) == blob
    assert chunks[1].content.startswith("Blob\n\n")  # each part still says where it belongs
    assert [c.metadata["part"] for c in chunks[1:3]] == [2, 3]


def test_blank_runs_inside_a_huge_block_make_no_empty_memory() -> None:
    code = "```\n" + "data\n" * 10 + "\n" * (MAX_BLOCK_CHARS + 10) + "end\n```"
    chunks = chunk_markdown(f"# Gaps\n\n{code}", DOC)
    assert all(chunk.content.strip() for chunk in chunks)
    assert "end\n```" in chunks[-1].content
