"""What the dashboard's forms and query strings hold, turned into the facade's request models.

A value the models refuse becomes a ``FormError`` with a sentence a person can act on; the page
shows it beside the values as they were typed, so nothing typed is lost.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

from pydantic import ValidationError
from starlette.requests import Request

from cognitive_memory.core.validation import ALL_PROJECTS
from cognitive_memory.service import MemoryChanges, MemoryRecordOut, RecallFilters

__all__ = [
    "EDIT_FIELDS",
    "FILTER_FIELDS",
    "MAX_FORM_BYTES",
    "FieldChange",
    "FilterForm",
    "FormError",
    "compare_edit",
    "describe",
    "edit_values",
    "memory_changes",
    "read_form",
    "split_list",
]

MAX_FORM_BYTES = 256 * 1024
FILTER_FIELDS = ("project", "tags", "level", "type", "source", "after", "before", "session")
EDIT_FIELDS = {
    "text": "Text",
    "tags": "Tags",
    "importance": "Importance",
    "level": "Level",
    "memory_type": "Type",
    "source_info": "Source",
}


class FormError(ValueError):
    """A form value that cannot be used; ``message`` says which and why."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def describe(exc: ValidationError) -> str:
    """A validation error as one readable sentence per problem."""
    parts = []
    for error in exc.errors(include_input=False, include_url=False):
        where = ".".join(str(p) for p in error["loc"] if not isinstance(p, int)) or "form"
        parts.append(f"{where}: {error['msg'].removeprefix('Value error, ')}")
    return "; ".join(parts)


def split_list(text: str) -> list[str]:
    """Comma-separated values, trimmed, empties dropped, order kept, no repeats."""
    return list(dict.fromkeys(part.strip() for part in text.split(",") if part.strip()))


@dataclass(frozen=True)
class FilterForm:
    """The filter fields as typed (``values``) and as the facade's ``RecallFilters``."""

    values: dict[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, params: Mapping[str, str]) -> FilterForm:
        return cls({name: params.get(name, "").strip() for name in FILTER_FIELDS})

    def filters(self) -> RecallFilters:
        """The filters; every project unless one is named. Raises ``FormError``."""
        v = self.values
        data: dict[str, Any] = {
            "projects": split_list(v["project"]) or [ALL_PROJECTS],
            "tags": split_list(v["tags"]),
            "hierarchy_levels": [int(x) if x.isdigit() else x for x in split_list(v["level"])],
            "memory_types": split_list(v["type"]),
            "sources": split_list(v["source"]),
            "created_after": v["after"] or None,
            "created_before": v["before"] or None,
            "session": v["session"] or None,
        }
        try:
            return RecallFilters.model_validate(data)
        except ValidationError as exc:
            raise FormError(f"Filter not usable: {describe(exc)}") from None

    def query(self, **extra: str) -> str:
        """The filters (and ``extra``) as a query string, empty fields left out."""
        return urlencode({k: v for k, v in {**self.values, **extra}.items() if v})


def edit_values(memory: MemoryRecordOut, revision: str, form: Mapping[str, str]) -> dict[str, str]:
    """The edit form's fields and the ``revision`` they were read at: as posted when an edit comes
    back refused (a form without a revision stays stale), else as ``memory`` holds them now."""
    if "text" not in form:
        return {
            "text": memory.content,
            "tags": ", ".join(memory.tags),
            "importance": str(memory.importance_score),
            "level": str(memory.hierarchy_level),
            "memory_type": memory.memory_type,
            "source_info": str(memory.metadata.get("source_info", "")),
            "revision": revision,
        }
    return {name: form.get(name, "") for name in (*EDIT_FIELDS, "revision")}


@dataclass(frozen=True)
class FieldChange:
    """One field of an edit against the memory as stored now, both as text."""

    label: str
    stored: str
    posted: str
    differs: bool


def _same(name: str, stored: str, posted: str) -> bool:
    if name == "tags":
        return split_list(stored) == split_list(posted)
    if name == "importance":
        try:
            return float(stored) == float(posted)
        except ValueError:
            return False
    return _lines(stored).strip() == _lines(posted).strip()


def compare_edit(stored: Mapping[str, str], posted: Mapping[str, str]) -> list[FieldChange]:
    """Each field of the edit form as stored now and as posted, marking those that differ."""
    changes = []
    for name, label in EDIT_FIELDS.items():
        now, given = stored[name], _lines(posted.get(name, ""))
        changes.append(FieldChange(label, now, given, not _same(name, now, given)))
    return changes


def _lines(text: str) -> str:
    """Browsers post a textarea's line breaks as CRLF; memories keep LF."""
    return text.replace("\r\n", "\n")


def memory_changes(form: Mapping[str, str]) -> MemoryChanges:
    """The edit form as ``MemoryChanges`` (every field sent; unchanged ones change nothing)."""
    data: dict[str, Any] = {
        "text": _lines(form.get("text", "")),
        "tags": split_list(form.get("tags", "")),
        "memory_type": form.get("memory_type") or None,
        "source_info": form.get("source_info", "").strip() or None,
    }
    try:
        data["importance_score"] = float(form.get("importance", ""))
        data["hierarchy_level"] = int(form.get("level", ""))
    except ValueError:
        raise FormError("Importance is a number from 0 to 1 and level is 0, 1 or 2.") from None
    try:
        return MemoryChanges.model_validate(data)
    except ValidationError as exc:
        raise FormError(f"Not saved: {describe(exc)}") from None


async def read_form(request: Request) -> dict[str, str]:
    """The urlencoded body (at most ``MAX_FORM_BYTES``); the last value of a repeated field."""
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise FormError(f"The form is larger than {MAX_FORM_BYTES // 1024} KiB.")
    try:
        text = body.decode("utf-8")
    except UnicodeDecodeError:
        raise FormError("The form is not UTF-8.") from None
    return dict(parse_qsl(text, keep_blank_values=True))
