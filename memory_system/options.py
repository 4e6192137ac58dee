"""Options several commands share, and typed requests built from them (one line on bad input)."""

from __future__ import annotations

from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

if TYPE_CHECKING:
    from pydantic import BaseModel

    from cognitive_memory.service import ChunkCountsOut, MemoryService, RecallFilters

__all__ = [
    "EXIT_MISSING",
    "AfterOption",
    "BeforeOption",
    "FacadeSource",
    "InProjectOption",
    "MetadataFilterOption",
    "emit",
    "json_object",
    "rate",
    "JsonOption",
    "LevelsOption",
    "ProjectOption",
    "SessionOption",
    "SourcesOption",
    "TagsOption",
    "TypesOption",
    "project_name",
    "recall_filters",
    "request",
]

Model = TypeVar("Model", bound="BaseModel")
# Opens the facade for one command (the CLI's own opener, or a test's).
FacadeSource = Callable[[], AbstractContextManager["MemoryService"]]
# Exit status of a command when an id it was given was not found (or could not be acted on).
EXIT_MISSING = 3


def project_name(value: str | None) -> str | None:
    """A --project value, checked by the rule the MCP tools apply."""
    if value is None:
        return None
    from pydantic import TypeAdapter, ValidationError

    from cognitive_memory.service import ProjectName

    try:
        return TypeAdapter(ProjectName).validate_python(value)
    except ValidationError as exc:
        raise typer.BadParameter(
            exc.errors(include_url=False)[0]["msg"].removeprefix("Value error, ")
        ) from None


ProjectOption = Annotated[
    str | None,
    typer.Option(
        callback=project_name,
        help="The project to work in (default: COGNITIVE_MEMORY_PROJECT, else 'default').",
    ),
]
InProjectOption = Annotated[
    list[str] | None,
    typer.Option(
        "--in-project",
        help="Search this project instead of the current one and global (repeatable; '*' all).",
    ),
]
TagsOption = Annotated[
    list[str] | None, typer.Option("--tag", help="Only memories with this tag (repeatable).")
]
LevelsOption = Annotated[
    list[int] | None, typer.Option("--level", min=0, max=2, help="Only this level (repeatable).")
]
TypesOption = Annotated[
    list[str] | None, typer.Option("--type", help="Only episodic or semantic (repeatable).")
]
SourcesOption = Annotated[
    list[str] | None, typer.Option("--source", help="Only markdown, git or session_lesson (repeatable).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print the result as JSON.")]
SessionOption = Annotated[
    str | None, typer.Option("--session", help="Only memories stored in this session (its id).")
]
AfterOption = Annotated[
    str | None, typer.Option("--after", help="Only memories stored at or after this ISO 8601 date or time.")
]
BeforeOption = Annotated[
    str | None, typer.Option("--before", help="Only memories stored before this ISO 8601 date or time.")
]
MetadataFilterOption = Annotated[
    str | None,
    typer.Option(
        "--metadata",
        help='Only memories whose own fields hold these values, a JSON object: \'{"phase": "beta"}\'.',
    ),
]


def json_object(text: str | None, option: str = "--metadata") -> Any:
    """An option's JSON (None when not given); text that is not JSON exits 1 with one ``Error:``
    line (what it holds is checked by the request it goes into)."""
    if text is None:
        return None
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        typer.echo(
            f"Error: {option} is not JSON ({exc.msg} at character {exc.pos}): give an object such as "
            '\'{"phase": "beta"}\'.',
            err=True,
        )
        raise typer.Exit(code=1) from None


def rate(counts: ChunkCountsOut, per_second: float) -> str:
    """The end of a load's summary: its writing rate, or that nothing needed writing."""
    return f", {per_second:.1f} memories/s" if counts.added + counts.updated else ", nothing changed"


def emit(result: BaseModel, text: str, as_json: bool, *, exclude_none: bool = False) -> None:
    """Print a command's answer: its JSON with ``--json`` (without null fields when
    ``exclude_none``), else the text for people."""
    import json

    body = result.model_dump(mode="json", exclude_none=exclude_none)
    typer.echo(json.dumps(body, indent=2, ensure_ascii=False) if as_json else text)


def request(model: type[Model], **fields: Any) -> Model:
    """``model`` built from command-line values; a rule it breaks exits 1 with one ``Error:`` line."""
    from pydantic import ValidationError

    try:
        return model(**{name: value for name, value in fields.items() if value is not None})
    except ValidationError as exc:
        problems = "; ".join(_problem(err) for err in exc.errors(include_url=False))
        typer.echo(f"Error: {problems}", err=True)
        raise typer.Exit(code=1) from None


def _problem(error: Any) -> str:
    """One validation error as ``field value: what is wrong``."""
    message = str(error["msg"]).removeprefix("Value error, ")
    shown = repr(error["input"])
    shown = shown if len(shown) <= 80 else shown[:77] + "..."
    return f"{error['loc'][0]} {shown}: {message}" if error["loc"] else message


def recall_filters(
    tags: list[str] | None,
    levels: list[int] | None,
    memory_types: list[str] | None,
    sources: list[str] | None,
    projects: list[str] | None,
    after: str | None,
    before: str | None,
    session: str | None = None,
    metadata: str | None = None,
) -> RecallFilters:
    """The filters of ``recall`` and ``list`` from their options (``metadata``: --metadata's JSON)."""
    from cognitive_memory.service import RecallFilters

    return request(
        RecallFilters,
        tags=tags,
        hierarchy_levels=levels,
        memory_types=memory_types,
        sources=sources,
        projects=projects,
        created_after=after,
        created_before=before,
        session=session,
        metadata=json_object(metadata),
    )
