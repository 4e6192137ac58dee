"""`setup claude-code`: merge our hooks and MCP server entry into Claude Code's configuration.

Claude Code reads hooks from ``.claude/settings.json`` (project) or ``~/.claude/settings.json``
(user), and MCP servers from ``.mcp.json`` at the project root (project) or the top-level
``mcpServers`` of ``~/.claude.json`` (user). The merge functions are pure (a dict in, a new dict
out); ``write`` backs a file up and replaces it atomically, keeping its mode.

Ours: a hook handler whose command runs ``memory_system ... hook EVENT``, and the server entry
named ``cognitive-memory``. Everything else is kept as it was, in its order.
"""

from __future__ import annotations

import copy
import difflib
import json
import os
import re
import shlex
import shutil
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "HOOK_EVENTS",
    "SERVER_KEY",
    "FileChange",
    "SetupError",
    "desired_hooks",
    "diff",
    "plan",
    "server_entry",
    "with_hooks",
    "with_server",
    "without_hooks",
    "without_server",
    "write",
]

SERVER_KEY = "cognitive-memory"
DATA_DIR_VARIABLE = "COGNITIVE_MEMORY_DATA_DIR"
# Claude Code's event -> (our hook subcommand, Claude Code's timeout in seconds). The hook gives up
# by itself first (COGNITIVE_MEMORY_HOOK_TIMEOUT, 10 s) and exits 0 with nothing to add; the end
# hooks hand their work to a detached process.
HOOK_EVENTS: dict[str, tuple[str, int]] = {
    "SessionStart": ("session-start", 15),
    "UserPromptSubmit": ("user-prompt-submit", 15),
    "PreCompact": ("pre-compact", 30),
    "SessionEnd": ("session-end", 30),
}
# A command that runs our executable's ``hook`` subcommand (the path may be quoted).
_OURS = re.compile(r"memory_system['\"]?\s+hook(\s|$)")
Json = dict[str, Any]


class SetupError(Exception):
    """A configuration file that cannot be merged safely; nothing was written."""


@dataclass(frozen=True, slots=True)
class FileChange:
    """One configuration file: what it holds (None: no such file) and what it should hold."""

    path: Path
    before: Json | None
    after: Json

    @property
    def changed(self) -> bool:
        return self.before != self.after and not (self.before is None and not self.after)


def hook_command(executable: str, event: str, data_dir: str | None) -> str:
    """The shell command of one hook; with ``data_dir`` it names the server's data directory."""
    command = f"{shlex.quote(executable)} hook {event}"
    return f"{DATA_DIR_VARIABLE}={shlex.quote(data_dir)} {command}" if data_dir else command


def desired_hooks(executable: str, data_dir: str | None) -> dict[str, Json]:
    """Our one matcher group per Claude Code event (no matcher: every source of the event)."""
    return {
        name: {
            "hooks": [
                {"type": "command", "command": hook_command(executable, event, data_dir), "timeout": timeout}
            ]
        }
        for name, (event, timeout) in HOOK_EVENTS.items()
    }


def server_entry(executable: str, data_dir: str | None, current: Mapping[str, Any] | None = None) -> Json:
    """Our stdio server entry, keeping the other keys (and env variables) of ``current``."""
    entry: Json = copy.deepcopy(dict(current or {}))
    entry.update({"type": "stdio", "command": executable, "args": ["serve", "mcp"]})
    env = entry.get("env")
    env = dict(env) if isinstance(env, dict) else {}
    if data_dir:
        env[DATA_DIR_VARIABLE] = data_dir
    else:
        env.pop(DATA_DIR_VARIABLE, None)
    if env:
        entry["env"] = env
    else:
        entry.pop("env", None)
    return entry


def _is_ours(handler: Any) -> bool:
    return isinstance(handler, dict) and bool(_OURS.search(str(handler.get("command", ""))))


def _hooks_of(settings: Json, path: Path) -> Json:
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict):
        raise SetupError(f'"hooks" in {path} is not an object; fix it, then run again.')
    for event in HOOK_EVENTS:
        if not isinstance(hooks.get(event, []), list):
            raise SetupError(f'"hooks"."{event}" in {path} is not a list; fix it, then run again.')
    return hooks


def _strip_ours(groups: list[Any]) -> tuple[list[Any], int | None]:
    """The groups without our handlers (a group left empty by that goes too), and the position of
    the first group that held one of ours."""
    kept: list[Any] = []
    first: int | None = None
    for group in groups:
        handlers = group.get("hooks") if isinstance(group, dict) else None
        if not isinstance(handlers, list) or not any(_is_ours(h) for h in handlers):
            kept.append(group)
            continue
        first = len(kept) if first is None else first
        others = [h for h in handlers if not _is_ours(h)]
        if others:
            kept.append({**group, "hooks": others})
    return kept, first


def with_hooks(settings: Json, wanted: Mapping[str, Json], path: Path) -> Json:
    """``settings`` with exactly our group per event: in place of the first one of ours, else last."""
    merged = copy.deepcopy(settings)
    hooks = _hooks_of(merged, path)
    for event, group in wanted.items():
        kept, first = _strip_ours(hooks.get(event, []))
        kept.insert(len(kept) if first is None else first, copy.deepcopy(group))
        hooks[event] = kept
    merged["hooks"] = hooks
    return merged


def without_hooks(settings: Json, path: Path) -> Json:
    """``settings`` without our handlers, and without the groups, events or ``hooks`` that leaves empty."""
    if "hooks" not in settings:
        return copy.deepcopy(settings)
    stripped = copy.deepcopy(settings)
    hooks = _hooks_of(stripped, path)
    for event in HOOK_EVENTS:
        if event in hooks:
            hooks[event] = _strip_ours(hooks[event])[0]
            if not hooks[event]:
                del hooks[event]
    if not hooks:
        del stripped["hooks"]
    return stripped


def _servers_of(config: Json, path: Path) -> Json:
    servers = config.get("mcpServers", {})
    if not isinstance(servers, dict):
        raise SetupError(f'"mcpServers" in {path} is not an object; fix it, then run again.')
    if not isinstance(servers.get(SERVER_KEY, {}), dict):
        raise SetupError(f'"mcpServers"."{SERVER_KEY}" in {path} is not an object; fix it, then run again.')
    return servers


def with_server(config: Json, executable: str, data_dir: str | None, path: Path) -> Json:
    """``config`` with our server entry (other keys of an existing entry kept)."""
    merged = copy.deepcopy(config)
    servers = _servers_of(merged, path)
    servers[SERVER_KEY] = server_entry(executable, data_dir, servers.get(SERVER_KEY))
    merged["mcpServers"] = servers
    return merged


def without_server(config: Json, path: Path) -> Json:
    """``config`` without our server entry (and without ``mcpServers`` if that leaves it empty)."""
    stripped = copy.deepcopy(config)
    servers = _servers_of(stripped, path)
    if "mcpServers" in stripped:
        servers.pop(SERVER_KEY, None)
        if not servers:
            del stripped["mcpServers"]
    return stripped


def read_object(path: Path) -> Json | None:
    """The JSON object in ``path``; None when there is no such file (an empty file counts as {})."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise SetupError(f"Cannot read {path}: {exc}") from None
    try:
        value = json.loads(text) if text.strip() else {}
    except json.JSONDecodeError as exc:
        raise SetupError(
            f"{path} is not valid JSON ({exc}); fix it or move it away, then run again."
        ) from None
    if not isinstance(value, dict):
        raise SetupError(f"{path} does not hold a JSON object; fix it or move it away, then run again.")
    return value


def plan(
    settings_path: Path, servers_path: Path, executable: str, data_dir: str | None, *, remove: bool
) -> list[FileChange]:
    """What both files should hold: with our hooks and server entry, or (``remove``) without them."""
    settings = read_object(settings_path)
    servers = read_object(servers_path)
    if remove:
        new_settings = without_hooks(settings or {}, settings_path)
        new_servers = without_server(servers or {}, servers_path)
    else:
        new_settings = with_hooks(settings or {}, desired_hooks(executable, data_dir), settings_path)
        new_servers = with_server(servers or {}, executable, data_dir, servers_path)
    return [
        FileChange(settings_path, settings, new_settings),
        FileChange(servers_path, servers, new_servers),
    ]


def _text(value: Json | None) -> str:
    return "" if value is None else json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def diff(change: FileChange) -> str:
    """A unified diff of the change (of the file as this command would write it)."""
    lines = difflib.unified_diff(
        _text(change.before).splitlines(keepends=True),
        _text(change.after).splitlines(keepends=True),
        fromfile=f"{change.path} (now)" if change.before is not None else "/dev/null",
        tofile=f"{change.path} (after)",
    )
    return "".join(lines)


def _backup(path: Path) -> Path:
    stamp = time.strftime("%Y%m%d%H%M%S")
    backup = path.with_name(f"{path.name}.backup.{stamp}")
    number = 1
    while backup.exists():
        backup = path.with_name(f"{path.name}.backup.{stamp}.{number}")
        number += 1
    shutil.copy2(path, backup)
    return backup


def write(change: FileChange) -> Path | None:
    """Back the file up (if it exists), then replace it atomically with ``change.after``, keeping
    its mode (0644 for a new file). Returns the backup's path."""
    path = change.path
    backup = _backup(path) if path.exists() else None
    mode = path.stat().st_mode & 0o7777 if path.exists() else 0o644
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(_text(change.after))
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return backup
