"""Markdown documents cut into memories: one per section, exact, never truncated.

Rules (docs/cli.md "Loading markdown" documents them for users):

- Sections start at ATX headers (``#`` to ``######``) and setext headers (a one-line paragraph
  underlined with ``===`` or ``---``). Nothing inside a fenced code block (``` or ~~~) or an
  indented line is a header. Text before the first header is the preamble. A file without
  headers is one section.
- YAML front matter is not content; its ``title`` names the document and its ``tags`` tag every
  chunk. Otherwise the first level-1 header is the title, else the file name.
- A section longer than ``MAX_CHUNK_CHARS`` is split at paragraph boundaries outside code blocks
  (a code block is not cut); the parts together hold the whole section. A block longer than
  ``MAX_BLOCK_CHARS`` (a huge fenced block or one-line blob) could be no memory whole: it is cut at
  line ends into pieces of ``MAX_CHUNK_CHARS`` (a longer line inside), small enough for the
  encoder to see all of each. A section shorter than ``MIN_CHUNK_CHARS`` is merged into its first
  subsection, or else into the chunk before it.
- Each chunk after the first starts with a breadcrumb line (document title and the enclosing
  headers) so it can be found by what it belongs to.
- Level: the document's first chunk and sections named like an overview (overview, introduction,
  summary, about, abstract) are L0 concepts; sections under level-1 and level-2 headers are L1
  contexts; deeper sections are L2 details. All are semantic memories.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from cognitive_memory.core.memory import HierarchyLevel, MemoryType
from cognitive_memory.core.sources import SourceChunk
from cognitive_memory.core.validation import MAX_TEXT_CHARS

__all__ = [
    "MAX_BLOCK_CHARS",
    "MAX_CHUNK_CHARS",
    "MIN_CHUNK_CHARS",
    "Section",
    "chunk_markdown",
    "front_matter",
    "link_targets",
    "plain_title",
    "split_sections",
]

MAX_CHUNK_CHARS = 1500
MIN_CHUNK_CHARS = 60
# The longest block kept whole: a memory holds MAX_TEXT_CHARS, and the breadcrumb needs room.
MAX_BLOCK_CHARS = MAX_TEXT_CHARS - 10_000
BREADCRUMB_SEPARATOR = " › "

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")
_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(={3,}|-{3,})[ \t]*$")
_BADGE = re.compile(r"\[!\[[^\]]*\]\([^)]*\)\]\([^)]*\)|!\[[^\]]*\]\([^)]*\)")
_INLINE_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")
_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_LINK = re.compile(
    r"\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+[\"'(][^)]*)?\)|^[ \t]*\[[^\]]+\]:[ \t]*<?(\S+?)>?(?:\s|$)",
    re.MULTILINE,
)
_OVERVIEW = re.compile(r"^(overview|introduction|intro|summary|about|abstract|tl;?dr)\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Section:
    """A header and its body. ``path`` holds the header texts from the top level down; ``depth`` is
    the header level (0 for the preamble or a file without headers)."""

    path: tuple[str, ...]
    depth: int
    text: str


def _fence_state(line: str, fence: str | None) -> tuple[str | None, bool]:
    """The open fence after ``line`` and whether the line belongs to a code block."""
    match = _FENCE.match(line)
    if fence is None:
        if match and not (match.group(1)[0] == "`" and "`" in match.group(2)):
            return match.group(1), True
        return None, False
    closing = match is not None and not match.group(2).strip() and match.group(1)[0] == fence[0]
    if match and closing and len(match.group(1)) >= len(fence):
        return None, True
    return fence, True


def _headers(lines: list[str]) -> dict[int, tuple[int, str, int]]:
    """Line index where a header starts -> (depth, header text, number of lines it spans)."""
    found: dict[int, tuple[int, str, int]] = {}
    fence: str | None = None
    for i, line in enumerate(lines):
        fence, in_code = _fence_state(line, fence)
        if in_code:
            continue
        atx = _ATX.match(line)
        if atx:
            found[i] = (len(atx.group(1)), plain_title(atx.group(2) or ""), 1)
            continue
        setext = _SETEXT.match(line)
        previous = lines[i - 1] if i > 0 else ""
        if (
            setext
            and previous.strip()
            and i - 1 not in found
            and not previous.lstrip().startswith(("|", "-", "*", "+", ">", "<"))
            and not previous.startswith(("    ", "\t"))
            and (i < 2 or not lines[i - 2].strip())
        ):
            found[i - 1] = (1 if setext.group(1)[0] == "=" else 2, plain_title(previous), 2)
    return found


def plain_title(header: str) -> str:
    """A header as a title: badges, images and HTML tags dropped, links reduced to their text
    (``# cssesc [![Build](b.svg)](ci)`` is titled ``cssesc``). The chunk keeps the raw line."""
    plain = _INLINE_LINK.sub(r"\1", _TAG.sub("", _BADGE.sub("", header)))
    return " ".join(plain.split()) or header.strip()


def split_sections(text: str) -> list[Section]:
    """The document's sections in order; empty preambles are dropped."""
    lines = text.split("\n")
    headers = _headers(lines)
    sections: list[Section] = []
    path: list[tuple[int, str]] = []
    starts = sorted(headers)
    if not starts or starts[0] > 0:
        preamble = "\n".join(lines[: starts[0] if starts else len(lines)]).strip()
        if preamble:
            sections.append(Section((), 0, preamble))
    for n, start in enumerate(starts):
        depth, title, _ = headers[start]
        end = starts[n + 1] if n + 1 < len(starts) else len(lines)
        while path and path[-1][0] >= depth:
            path.pop()
        path.append((depth, title))
        body = "\n".join(lines[start:end]).strip()
        sections.append(Section(tuple(name for _, name in path), depth, body))
    return sections


def _blocks(text: str) -> list[str]:
    """Paragraph-level blocks: split at blank lines that are not inside a fenced code block."""
    blocks: list[list[str]] = [[]]
    fence: str | None = None
    for line in text.split("\n"):
        fence, in_code = _fence_state(line, fence)
        if not line.strip() and not in_code:
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(line)
    return ["\n".join(block) for block in blocks if block]


def _split_long(text: str) -> list[str]:
    """Parts of at most MAX_CHUNK_CHARS (a single longer block stays whole up to MAX_BLOCK_CHARS),
    joined by blank lines."""
    if len(text) <= MAX_CHUNK_CHARS:
        return [text]
    parts: list[str] = []
    for block in _blocks(text):
        for piece in _cut(block) if len(block) > MAX_BLOCK_CHARS else [block]:
            if parts and len(parts[-1]) + 2 + len(piece) <= MAX_CHUNK_CHARS:
                parts[-1] += "\n\n" + piece
            else:
                parts.append(piece)
    return parts


def _cut(block: str) -> list[str]:
    """A block too long for one memory, cut at line ends into pieces of at most MAX_CHUNK_CHARS (a
    longer line is cut inside). Blank pieces are dropped: there is nothing in them to remember."""
    pieces: list[str] = []
    lines: list[str] = []
    size = -1
    for line in block.split("\n"):
        for start in range(0, max(len(line), 1), MAX_CHUNK_CHARS):
            segment = line[start : start + MAX_CHUNK_CHARS]
            if lines and size + 1 + len(segment) > MAX_CHUNK_CHARS:
                pieces.append("\n".join(lines))
                lines, size = [], -1
            lines.append(segment)
            size += 1 + len(segment)
    pieces.append("\n".join(lines))
    return [piece for piece in pieces if piece.strip()]


def _merge_tiny(sections: list[Section]) -> list[Section]:
    """Fold short sections into their first subsection, or else into the section before them."""
    merged: list[Section] = []
    carry: Section | None = None
    for i, section in enumerate(sections):
        if carry is not None:
            section = replace(section, text=carry.text + "\n\n" + section.text)
            carry = None
        following = sections[i + 1] if i + 1 < len(sections) else None
        opens_subsection = (
            following is not None
            and len(following.path) > len(section.path)
            and following.path[: len(section.path)] == section.path
        )
        if len(section.text) >= MIN_CHUNK_CHARS:
            merged.append(section)
        elif opens_subsection:
            carry = section
        elif merged and len(merged[-1].text) + len(section.text) + 2 <= MAX_CHUNK_CHARS:
            merged[-1] = replace(merged[-1], text=merged[-1].text + "\n\n" + section.text)
        else:
            merged.append(section)
    return merged


def _level(section: Section, first: bool) -> HierarchyLevel:
    if first or (section.path and _OVERVIEW.match(section.path[-1])):
        return HierarchyLevel.CONCEPT
    return HierarchyLevel.CONTEXT if section.depth <= 2 else HierarchyLevel.EPISODE


def front_matter(text: str) -> tuple[dict[str, Any], str]:
    """Split YAML front matter off the text. Only ``title`` and ``tags`` are read (a scalar, an
    inline list or a block list); anything else in it is ignored, and nothing in it fails a load."""
    lines = text.split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
    if end is None:
        return {}, text
    fields: dict[str, Any] = {}
    current: str | None = None
    for line in lines[1:end]:
        item = re.match(r"^\s+-\s+(.+)$", line)
        if item and current == "tags":
            fields.setdefault("tags", []).append(_unquote(item.group(1)))
            continue
        pair = re.match(r"^([A-Za-z_][\w-]*)\s*:\s*(.*)$", line)
        current = pair.group(1).lower() if pair else None
        if pair and current == "title" and pair.group(2).strip():
            fields["title"] = _unquote(pair.group(2))
        elif pair and current == "tags" and pair.group(2).strip():
            fields["tags"] = [_unquote(tag) for tag in pair.group(2).strip("[] ").split(",") if tag.strip()]
    return fields, "\n".join(lines[end + 1 :])


def _unquote(value: str) -> str:
    return value.strip().strip("\"'").strip()


def link_targets(text: str, document: Path) -> tuple[str, ...]:
    """Absolute paths of the local markdown files a text links to (inline and reference links)."""
    targets: dict[str, None] = {}
    for match in _LINK.finditer(text):
        target = (match.group(1) or match.group(2) or "").split("#")[0].split("?")[0]
        if not target or re.match(r"^[a-zA-Z][\w+.-]*:", target) or target.startswith("//"):
            continue
        if target.lower().endswith((".md", ".markdown")):
            targets[str((document.parent / target).resolve())] = None
    return tuple(targets)


def chunk_markdown(text: str, document: Path) -> list[SourceChunk]:
    """The chunks of a markdown document (see the module docstring for the rules)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n").lstrip("\ufeff")
    fields, body = front_matter(text)
    split = split_sections(body)
    # The title comes before merging: an H1 with no text of its own is folded into its first
    # subsection and would otherwise leave the document titled by its file name.
    title = str(fields.get("title") or _first_title(split) or document.stem)
    sections = _merge_tiny(split)
    tags = tuple(dict.fromkeys(str(tag) for tag in fields.get("tags", ()) if str(tag).strip()))
    chunks: list[SourceChunk] = []
    keys: dict[tuple[str, ...], str] = {}
    taken: set[str] = set()
    for n, section in enumerate(sections):
        key = _unique_key("/".join(section.path) or "(preamble)", taken)
        ancestors = (section.path[:i] for i in range(len(section.path) - 1, -1, -1))
        parent = next((keys[path] for path in ancestors if path in keys), None)
        # A chunk also stands for enclosing sections merged into it (a title with no text of its own).
        for i in range(1, len(section.path) + 1):
            keys.setdefault(section.path[:i], key)
        parts = _split_long(section.text)
        for i, part in enumerate(parts):
            chunks.append(
                _chunk(
                    section,
                    part,
                    title,
                    document,
                    tags,
                    n == 0 and i == 0,
                    key if i == 0 else f"{key}#part{i + 1}",
                    parent if i == 0 else key,
                    (i + 1, len(parts)),
                )
            )
    return chunks


def _first_title(sections: list[Section]) -> str | None:
    return next((s.path[0] for s in sections if s.depth == 1 and s.path and s.path[0]), None)


def _unique_key(key: str, taken: set[str]) -> str:
    """``key``, or ``key#2``, ``key#3``... when a heading repeats; the result is added to ``taken``."""
    candidate, n = key, 1
    while candidate in taken:
        n += 1
        candidate = f"{key}#{n}"
    taken.add(candidate)
    return candidate


def _chunk(
    section: Section,
    text: str,
    title: str,
    document: Path,
    tags: tuple[str, ...],
    first: bool,
    key: str,
    parent: str | None,
    part: tuple[int, int],
) -> SourceChunk:
    # Later parts of a split section also name the section itself.
    trail = list(section.path if part[0] > 1 else section.path[:-1])
    if trail[:1] != [title] and section.path[:1] != (title,):
        trail.insert(0, title)
    content = text if first or not trail else BREADCRUMB_SEPARATOR.join(trail) + "\n\n" + text
    metadata: dict[str, Any] = {
        "title": title,
        "section": section.path[-1] if section.path else title,
        "section_path": list(section.path),
    }
    if part[1] > 1:
        metadata["part"], metadata["parts"] = part
    return SourceChunk(
        key=key,
        content=content,
        hierarchy_level=_level(section, first),
        memory_type=MemoryType.SEMANTIC,
        metadata=metadata,
        tags=tags,
        parent=parent,
        links=link_targets(text, document),
        origin=str(document),
    )
