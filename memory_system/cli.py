"""memory_system: serve the MCP server and work with the memory from a shell.

Heavy imports (torch, the MCP SDK, Qdrant) happen inside command bodies so ``--help`` is instant.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from collections.abc import Mapping
from typing import Annotated, Literal

import typer

from memory_system import (
    backup_commands,
    browse_commands,
    consolidate_command,
    doctor,
    encoder_cli,
    git_commands,
    hook_command,
    http_token,
    load_commands,
    move_command,
    relation_commands,
    serving,
    setup_command,
    transfer_commands,
    trash_commands,
    ui_command,
    update_command,
)
from memory_system.opening import fail, load_settings, open_facade, open_system, resolve_settings
from memory_system.options import (
    EXIT_MISSING,
    AfterOption,
    BeforeOption,
    InProjectOption,
    JsonOption,
    LevelsOption,
    MetadataFilterOption,
    ProjectOption,
    SessionOption,
    SourcesOption,
    TagsOption,
    TypesOption,
    emit,
    json_object,
    project_name,
    recall_filters,
)
from memory_system.options import request as _request

__all__ = ["app", "main"]

DEFAULT_MAX_RESULTS = 10  # recall's, as recall_memories' over MCP

app = typer.Typer(
    name="memory_system",
    help="Cognitive Memory: a persistent, searchable long-term memory for AI assistants (MCP).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
serve_app = typer.Typer(help="Run a server.", no_args_is_help=True)
app.add_typer(serve_app, name="serve")
qdrant_app = typer.Typer(help="Run a Qdrant server for this data directory.", no_args_is_help=True)
app.add_typer(qdrant_app, name="qdrant")
doctor.register(app, lambda: resolve_settings())
encoder_cli.register(app, lambda: load_settings())
backup_commands.register(app, lambda: load_settings())
move_command.register(app, lambda: load_settings())
http_token.register(app, lambda: load_settings())


def _configure_logging(level: str) -> None:
    logging.basicConfig(
        stream=sys.stderr, level=level, format="%(asctime)s %(levelname)s %(name)s: %(message)s"
    )


load_commands.register(app, open_facade)
relation_commands.register(app, open_facade)
browse_commands.register(app, open_facade)
git_commands.register(app, open_facade)
update_command.register(app, open_facade)
transfer_commands.register(app, open_facade)
trash_commands.register(app, open_facade)
consolidate_command.register(app, open_facade)
ui_command.register(app, open_system, lambda: load_settings())
hook_command.register(app)
setup_command.register(app)


@serve_app.command("mcp")
def serve_mcp(
    port: Annotated[
        int | None, typer.Option(min=1, max=65535, help="Serve over HTTP on this port (/mcp and /sse).")
    ] = None,
    host: Annotated[str | None, typer.Option(help="HTTP bind address (default 127.0.0.1).")] = None,
    project: Annotated[
        str | None,
        typer.Option(
            callback=project_name,
            help="Serve this project (default: COGNITIVE_MEMORY_PROJECT, else the client's roots, "
            "else 'default').",
        ),
    ] = None,
) -> None:
    """Serve the MCP tools over stdio, or over HTTP with --port (or MCP_SERVER_MODE=http).
    SIGINT and SIGTERM (Ctrl-C) end it with status 0."""
    serving.stop_on_signals()
    _serve(port, host, project)
    serving.exit_now(0)


def _serve(port: int | None, host: str | None, project: str | None) -> None:
    from memory_system import hook_server

    settings = load_settings()
    listen = settings.server
    _configure_logging(listen.log_level)
    http = port is not None or host is not None or listen.mode == "http"
    bind_host, bind_port = host or listen.host, port or listen.port
    token = None
    if http:
        # Only HTTP serving imports the HTTP app (Starlette, the dashboard's templates): a stdio
        # server answers `initialize` sooner without them.
        from cognitive_memory.errors import CognitiveMemoryError
        from interfaces.http_app import InsecureBindError, check_bind

        try:
            # Beyond loopback only a token the user chose: the generated one is for this machine.
            check_bind(bind_host, listen.auth_token.get_secret_value() if listen.auth_token else None)
            token = http_token.server_token(settings)
        except InsecureBindError as exc:
            raise fail(str(exc)) from exc
        except CognitiveMemoryError as exc:
            raise fail(exc.message) from exc
    with open_system(settings, serving=True) as system, hook_server.hooks_answered(system, settings):
        # Imported once the system is open and the model loading (``open_system``): the SDK's
        # import, the larger part of the time to the handshake, overlaps ONNX Runtime's session
        # build, and a store that cannot open fails before it.
        from interfaces.mcp_server import create_server

        server = create_server(
            system,
            max_results=settings.recall.max_memories_per_query,
            project=project or settings.scope.project,
        )
        if http:
            dashboard = ui_command.dashboard_source(system, project or settings.scope.project)
            serving.serve_http(server, bind_host, bind_port, token, listen.extra_hosts, dashboard)
        else:
            serving.on_stop(system.wind_down)
            serving.serve_stdio(server)


@app.command()
def status(
    detailed: Annotated[bool, typer.Option("--detailed", help="Include paths and internals.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print the structured status as JSON.")] = False,
) -> None:
    """Show memory counts, storage health, recent activity and configuration."""
    from cognitive_memory.service import format_status

    with open_facade() as service:
        result = service.show_status(detailed)
        emit(result, format_status(result), as_json)


@app.command()
def store(
    text: Annotated[str, typer.Argument(help="The content to remember ('-': read it from stdin).")],
    level: Annotated[int | None, typer.Option(min=0, max=2, help="0 concept, 1 context, 2 episode.")] = None,
    memory_type: Annotated[str | None, typer.Option("--type", help="episodic or semantic.")] = None,
    importance: Annotated[
        float | None, typer.Option(min=0.0, max=1.0, help="0.0 to 1.0 [default: 0.5].", show_default=False)
    ] = None,
    tag: Annotated[list[str] | None, typer.Option(help="A tag (repeatable).")] = None,
    speaker: Annotated[
        str | None, typer.Option(help="Who said it: the memory is a turn of a conversation.")
    ] = None,
    key: Annotated[
        str | None, typer.Option(help="Its name in the project: a key already held updates that memory.")
    ] = None,
    session: Annotated[str | None, typer.Option(help="The session it belongs to (its id).")] = None,
    metadata: Annotated[
        str | None, typer.Option(help='Your own fields, a JSON object: \'{"phase": "beta", "ticket": 42}\'.')
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Store nothing: say what storing would do.")
    ] = False,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store one memory (the same text again in the project is reported, not stored twice; under a
    held --key, that memory is updated)."""
    from cognitive_memory.service import StoreContext, format_store

    if text == "-":
        from cognitive_memory.core.validation import MAX_TEXT_CHARS

        # Read no more than a memory may hold: stdin can be endless (`< /dev/zero`).
        text = sys.stdin.read(MAX_TEXT_CHARS + 1)
        if len(text) > MAX_TEXT_CHARS:
            raise fail(f"The text on stdin is over {MAX_TEXT_CHARS:,} characters, the most a memory holds.")
    context = _request(
        StoreContext,
        hierarchy_level=level,
        memory_type=memory_type,
        importance_score=importance,
        tags=tag,
        project=project,
        speaker=speaker,
        key=key,
        session=session,
        metadata=json_object(metadata),
    )
    with open_facade() as service:
        result = service.store_experience(text, context, dry_run=dry_run)
        emit(result, format_store(result), as_json)


@app.command()
def recall(
    query: Annotated[str, typer.Argument(help="What to recall.")],
    max_results: Annotated[
        int | None,
        typer.Option(
            min=1,
            help="Most memories, bridges included [default: 10, or MCP_MAX_MEMORIES_PER_QUERY if lower].",
            show_default=False,
        ),
    ] = None,
    no_bridges: Annotated[bool, typer.Option("--no-bridges", help="Skip bridge discovery.")] = False,
    detail: Annotated[
        Literal["brief", "full"],
        typer.Option(help="brief: text, one score, why it was found; full: whole records and scores."),
    ] = "brief",
    tag: TagsOption = None,
    level: LevelsOption = None,
    memory_type: TypesOption = None,
    source: SourcesOption = None,
    project: ProjectOption = None,
    in_project: InProjectOption = None,
    after: AfterOption = None,
    before: BeforeOption = None,
    session: SessionOption = None,
    metadata: MetadataFilterOption = None,
    explain: Annotated[
        list[str] | None,
        typer.Option(
            "--explain",
            metavar="ID",
            help="Say why this memory ranked where it did, returned or not (repeatable, at most 10).",
        ),
    ] = None,
    as_json: JsonOption = False,
) -> None:
    """Recall memories of the project (and global ones) for a query, optionally filtered; --explain
    says why named memories were or were not returned."""
    from cognitive_memory.service import format_recall

    filters = recall_filters(tag, level, memory_type, source, in_project, after, before, session, metadata)
    settings = load_settings()
    most = settings.recall.max_memories_per_query
    if max_results is None:
        max_results = min(DEFAULT_MAX_RESULTS, most)  # as recall_memories' default: capped quietly
    elif max_results > most:
        raise fail(f"--max-results is {max_results}; at most {most} (MCP_MAX_MEMORIES_PER_QUERY).")
    with open_facade(settings) as service:
        result = service.retrieve_memories(
            query,
            None,
            max_results,
            not no_bridges,
            filters,
            project=project,
            detail=detail,
            explain=explain or (),
        )
        emit(result, format_recall(result), as_json, exclude_none=True)


@app.command()
def forget(
    memory_ids: Annotated[list[str] | None, typer.Argument(help="The ids of the memories to forget.")] = None,
    key: Annotated[
        list[str] | None, typer.Option("--key", help="Forget the memory stored under this key (repeatable).")
    ] = None,
    project: ProjectOption = None,
    as_json: JsonOption = False,
) -> None:
    """Forget memories by id or key (exit 3 if some were not found or are loaded from files)."""
    from cognitive_memory.service import format_forget

    with open_facade() as service:
        result = service.forget_memories(memory_ids or [], key or [], project=project)
        emit(result, format_forget(result), as_json)
    if result.missing or result.kept:
        raise typer.Exit(EXIT_MISSING)


@qdrant_app.command("start")
def qdrant_start(
    port: Annotated[int, typer.Option(min=1, max=65534, help="HTTP port (gRPC: port + 1).")] = 6333,
) -> None:
    """Start Qdrant (Docker Compose, else a qdrant binary) and move this memory's index into it."""
    import shutil

    from memory_system import qdrant_server

    data_dir = load_settings().storage.data_dir.expanduser()
    running = qdrant_server.load_state(data_dir)
    if running is not None and qdrant_server.probe(running.url) is not None:
        typer.echo(f"Qdrant already runs for {data_dir} at {running.url}.")
        return
    plan = qdrant_server.plan_start(
        data_dir, docker=qdrant_server.docker_available(), binary=shutil.which("qdrant"), port=port
    )
    if plan.kind == "none":
        raise fail(plan.message)
    typer.echo(plan.message)
    try:
        started = qdrant_server.launch(plan, data_dir)
    except (OSError, subprocess.SubprocessError) as exc:
        raise fail(f"Could not start Qdrant: {exc}") from exc
    qdrant_server.save_state(data_dir, started)
    if not qdrant_server.wait_until_ready(started.url, 60):
        raise fail(f"Qdrant did not answer at {started.url} within 60 s; see {data_dir / 'qdrant-server'}.")
    with open_facade() as cli:
        copied = cli.rebuild_index()
    typer.echo(
        f"Qdrant runs at {started.url}; {copied} vectors copied from SQLite. memory_system uses it now."
    )


@qdrant_app.command("stop")
def qdrant_stop() -> None:
    """Stop the Qdrant server `qdrant start` started for this data directory (nothing else)."""
    from memory_system import qdrant_server

    data_dir = load_settings().storage.data_dir.expanduser()
    was_managed = qdrant_server.load_state(data_dir) is not None
    try:
        typer.echo(qdrant_server.stop(data_dir))
    except (OSError, subprocess.SubprocessError) as exc:
        raise fail(f"Could not stop Qdrant: {exc}") from exc
    if not was_managed:
        return
    with open_facade() as cli:  # back on the embedded store: bring its index up to date from SQLite
        copied = cli.rebuild_index()
    typer.echo(f"The embedded store is in use again; {copied} vectors copied from SQLite.")


def _left_out(rejected: Mapping[str, str]) -> str:
    """The memories a copy left out of an index that refused them, named (see ``doctor``)."""
    first, problem = next(iter(rejected.items()))
    count = f"{len(rejected)} memory was" if len(rejected) == 1 else f"{len(rejected)} memories were"
    more, them = (f" and {len(rejected) - 1} more", "them") if len(rejected) > 1 else ("", "it")
    return (
        f"{count} left out: {first!r} ({problem}){more}. `memory_system doctor` names {them} and "
        f"`memory_system doctor --repair` sets {them} aside."
    )


@qdrant_app.command("migrate")
def qdrant_migrate(
    to: Annotated[str, typer.Option("--to", help="The Qdrant server or cluster URL, e.g. http://host:6333.")],
    api_key: Annotated[str | None, typer.Option("--api-key", help="API key of that server.")] = None,
    collection: Annotated[
        str | None, typer.Option(help="Target collection (default: QDRANT_COLLECTION).")
    ] = None,
) -> None:
    """Copy every vector SQLite keeps into a Qdrant server collection (no re-embedding)."""
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.upkeep import migrate_to_server
    from memory_system.qdrant_migrate import check_url

    if (problem := check_url(to)) is not None:
        raise fail(problem)
    storage = load_settings().storage
    if not storage.database_path.is_file():
        raise fail(f"No memories to migrate: {storage.database_path} does not exist.")
    name = collection or storage.qdrant_collection
    try:
        report = migrate_to_server(
            storage.database_path,
            to,
            api_key,
            name,
            lambda done, total: typer.echo(f"copied {done}/{total}", err=True),
        )
    except CognitiveMemoryError as exc:
        raise fail(f"Migration to {to} failed: {exc.message}") from exc
    if not report.verified:
        raise fail(
            f"{to} collection {name!r} holds {report.target_count} points after copying {report.copied}."
        )
    if report.rejected:
        typer.echo(_left_out(report.rejected), err=True)
    key_hint = " and QDRANT_API_KEY" if api_key else ""
    typer.echo(
        f"Copied {report.copied} vectors to {to} collection {name!r} (verified; {report.stale_removed} stale "
        f"points removed). To use it, set QDRANT_URL={to}{key_hint}"
        + ("" if name == storage.qdrant_collection else f" and QDRANT_COLLECTION={name}")
        + " in .env or your MCP client's env block, then restart the server."
    )


@qdrant_app.command("status")
def qdrant_status(
    as_json: Annotated[bool, typer.Option("--json", help="Print the status as JSON.")] = False,
) -> None:
    """Embedded or server mode, reachability, version, collections and counts."""
    from memory_system import qdrant_server

    settings = load_settings()
    report = qdrant_server.describe(settings)
    typer.echo(json.dumps(report, indent=2) if as_json else qdrant_server.format_report(report))
    if report["mode"] == "server" and not report["reachable"]:
        raise typer.Exit(code=1)


def main() -> None:
    """Console-script entry point."""
    app()
