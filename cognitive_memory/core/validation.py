"""Input rules shared by every entry point; a violation raises InvalidInputError with a fix."""

from __future__ import annotations

import json
import math
import re
import unicodedata
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from cognitive_memory.errors import InvalidInputError

__all__ = [
    "ALL_PROJECTS",
    "CURRENT_SESSION",
    "MAX_KEY_CHARS",
    "MAX_PROJECT_CHARS",
    "MAX_QUERY_CHARS",
    "MAX_TAGS",
    "MAX_TAG_CHARS",
    "MAX_TEXT_CHARS",
    "check_importance",
    "check_key",
    "check_memory_id",
    "check_metadata",
    "check_project",
    "check_session",
    "check_tags",
    "check_text",
    "fold_key",
    "is_blank",
]

MAX_TEXT_CHARS = 100_000
MAX_QUERY_CHARS = 10_000
MAX_TAGS = 50
MAX_TAG_CHARS = 100
MAX_METADATA_BYTES = 64_000
MAX_PROJECT_CHARS = 100
# filters.projects: ["*"] searches every project, so no project is named "*".
ALL_PROJECTS = "*"
_PROJECT = re.compile(r"^[^\x00-\x1f\x7f*]+$")
MAX_KEY_CHARS = 100
# Keys and session names: letters, digits and . _ : / - (no spaces), so they read as one word.
_NAME = re.compile(r"[\w.:/-]+")
_MARKS = frozenset({"Mn", "Mc", "Me"})
# filters.session: "current" names the session of the call, so no session is named so.
CURRENT_SESSION = "current"
# Categories that print nothing: controls (NUL...), format characters (zero-width space, joiners,
# BOM, soft hyphen) and separators; plus the default-ignorable letters and marks among the rest.
_INVISIBLE_CATEGORIES = frozenset({"Cc", "Cf", "Zs", "Zl", "Zp"})
_IGNORABLE = frozenset(
    "\u034f\u115f\u1160\u3164\uffa0" + "".join(map(chr, range(0xFE00, 0xFE10)))
) | frozenset(map(chr, range(0xE0100, 0xE01F0)))


def is_blank(text: str) -> bool:
    """No character of ``text`` shows: it is empty, whitespace, control or zero-width characters."""
    return not any(
        char not in _IGNORABLE and unicodedata.category(char) not in _INVISIBLE_CATEGORIES for char in text
    )


def check_text(text: str, *, field: str = "text", limit: int = MAX_TEXT_CHARS) -> str:
    """Return the text stripped of surrounding whitespace, in Unicode's composed form (NFC: "é" as
    one character, however it was typed, so the same text is one memory and its words match), or
    raise why it cannot be used."""
    if not isinstance(text, str):
        raise InvalidInputError(f"`{field}` must be a string.", code="invalid_type")
    stripped = text.strip()
    if not stripped.isascii():
        stripped = unicodedata.normalize("NFC", stripped)
    if not stripped:
        raise InvalidInputError(f"`{field}` is empty: give the text to use.", code="empty_text")
    if is_blank(stripped):
        raise InvalidInputError(
            f"`{field}` has no visible characters (only control or zero-width characters such as NUL "
            "or U+200B): give the text to use.",
            code="empty_text",
        )
    if len(stripped) > limit:
        raise InvalidInputError(
            f"`{field}` has {len(stripped):,} characters; the limit is {limit:,}. "
            "Split it into several memories.",
            code="text_too_long",
        )
    try:
        stripped.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInputError(
            f"`{field}` contains characters that are not valid Unicode (position {exc.start}).",
            code="invalid_text",
        ) from exc
    return stripped


def check_importance(value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise InvalidInputError("`importance_score` must be a number from 0.0 to 1.0.", code="invalid_type")
    if not 0.0 <= value <= 1.0:
        raise InvalidInputError(
            f"`importance_score` is {value}; it must be from 0.0 to 1.0.", code="out_of_range"
        )
    return float(value)


def check_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Strip, drop empties and duplicates (keeping order), and enforce the limits."""
    cleaned: list[str] = []
    for tag in tags:
        if not isinstance(tag, str):
            raise InvalidInputError("Every tag must be a string.", code="invalid_type")
        tag = "" if is_blank(tag) else check_text(tag, field="tags[]", limit=MAX_TAG_CHARS)
        if tag and tag not in cleaned:
            cleaned.append(tag)
    if len(cleaned) > MAX_TAGS:
        raise InvalidInputError(
            f"{len(cleaned)} tags given; at most {MAX_TAGS} are kept.", code="too_many_tags"
        )
    return tuple(cleaned)


def check_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Metadata must be a JSON object of modest size."""
    if metadata is None:
        return {}
    if not isinstance(metadata, Mapping):
        raise InvalidInputError("`metadata` must be an object.", code="invalid_type")
    if not all(isinstance(key, str) for key in metadata):
        raise InvalidInputError("`metadata` keys must be strings.", code="invalid_metadata")
    try:
        size = len(json.dumps(dict(metadata), ensure_ascii=False, allow_nan=False).encode("utf-8"))
    except (TypeError, ValueError) as exc:
        raise InvalidInputError(f"`metadata` must be plain JSON: {exc}", code="invalid_metadata") from exc
    if size > MAX_METADATA_BYTES:
        raise InvalidInputError(
            f"`metadata` is {size:,} bytes as JSON; the limit is {MAX_METADATA_BYTES:,}.",
            code="metadata_too_large",
        )
    return dict(metadata)


def check_project(value: str, *, field: str = "project") -> str:
    """A project name stripped: 1-100 characters, no control characters, no '*'."""
    name = value.strip() if isinstance(value, str) else ""
    if not name or len(name) > MAX_PROJECT_CHARS or not _PROJECT.match(name):
        raise InvalidInputError(
            f"`{field}` is {str(value)[:40]!r}: a project name is 1-{MAX_PROJECT_CHARS} characters without "
            f"control characters or '{ALL_PROJECTS}'.",
            code="invalid_project",
        )
    return name


def check_memory_id(value: str, *, field: str = "id") -> str:
    """A memory id in its canonical form (lower-case hex with hyphens): any spelling of a UUID is
    taken (upper case, braces, ``urn:uuid:``); anything else is refused, because the vector index
    addresses every memory by a UUID."""
    if isinstance(value, str) and len(value) <= 45:
        try:
            return str(uuid.UUID(value))
        except ValueError:
            pass
    raise InvalidInputError(
        f"`{field}` is {str(value)[:60]!r}, not a UUID "
        "(memory ids are UUIDs: give it one, e.g. from `uuidgen`).",
        code="invalid_id",
    )


def fold_key(value: str) -> str:
    """A key as it is compared: compatibility-composed and case-folded (Unicode's NFKC, case
    folding, NFKC again), so ``Coding``, fullwidth ``ｃoding``, and ``café`` typed with a composed
    or a combining accent are each one key. The rule cannot be undone: ``Straße`` is ``strasse``."""
    return unicodedata.normalize("NFKC", unicodedata.normalize("NFKC", value).casefold())


def check_key(value: str, *, field: str = "key") -> str:
    """A memory's key as stored: stripped and folded (``fold_key``), then 1-100 letters (with
    their accents), digits or ``. _ : / -``; or why it cannot be used."""
    key = fold_key(value.strip()) if isinstance(value, str) else ""
    if key and len(key) <= MAX_KEY_CHARS and _is_name(key):
        return key
    folded = f" ({len(key)} once folded)" if isinstance(value, str) and len(key) > MAX_KEY_CHARS else ""
    raise InvalidInputError(
        f"`{field}` is {str(value)[: MAX_KEY_CHARS + 20]!r}{folded}; a key is 1-{MAX_KEY_CHARS} letters, "
        "digits or . _ : / - (no spaces; case, width and accents are compared folded).",
        code="invalid_value",
    )


def _is_name(text: str) -> bool:
    """Letters, digits and ``_ . : / -``, each maybe followed by combining marks (accents: folding
    leaves ``İ`` as i and a combining dot)."""
    if _NAME.fullmatch(text):
        return True
    return all(
        _NAME.fullmatch(char) or (i > 0 and unicodedata.category(char) in _MARKS)
        for i, char in enumerate(text)
    )


def check_session(value: str, *, field: str = "session") -> str:
    """A session name as given (case kept, accents composed: NFC), 1-100 letters, digits or
    ``. _ : / -``, never ``current`` (filters.session's word for the caller's own); or why it
    cannot be used."""
    session = unicodedata.normalize("NFC", value.strip()) if isinstance(value, str) else ""
    if not session or len(session) > MAX_KEY_CHARS or not _is_name(session) or session == CURRENT_SESSION:
        raise InvalidInputError(
            f"`{field}` is {value!r}; a session is 1-{MAX_KEY_CHARS} letters, digits or . _ : / -, "
            f"not {CURRENT_SESSION!r}.",
            code="invalid_value",
        )
    return session
