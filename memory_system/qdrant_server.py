"""`memory_system qdrant start|stop|status`: a Qdrant server for this data directory.

start uses Docker Compose when a Docker engine answers, else a `qdrant` binary on PATH; data
lives under ``<data dir>/qdrant-server/``; a state file records what was started so that stop
stops only that (the compose project, or the pid whose command line names our config).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

__all__ = [
    "DEFAULT_PORT",
    "IMAGE",
    "ManagedServer",
    "StartPlan",
    "describe",
    "format_report",
    "launch",
    "load_state",
    "plan_start",
    "probe",
    "save_state",
    "stop",
    "wait_until_ready",
]

logger = logging.getLogger(__name__)

IMAGE = "qdrant/qdrant:v1.19.0"
DEFAULT_PORT = 6333
STATE_FILE = "qdrant-server.json"
LABEL = "io.cognitive-memory.data-dir"


@dataclass(frozen=True, slots=True)
class StartPlan:
    """What ``start`` would do: the command, and the files it writes first."""

    kind: Literal["compose", "binary", "none"]
    command: list[str]
    files: dict[str, str]
    url: str
    message: str


@dataclass(frozen=True, slots=True)
class ManagedServer:
    """What ``start`` started (the state file)."""

    kind: Literal["compose", "binary"]
    url: str
    command: list[str]
    project: str | None = None
    compose_file: str | None = None
    pid: int | None = None
    config_path: str | None = None


def server_dir(data_dir: Path) -> Path:
    return data_dir / "qdrant-server"


def project_name(data_dir: Path) -> str:
    digest = hashlib.sha256(str(data_dir.resolve()).encode()).hexdigest()[:10]
    return f"cognitive-memory-{digest}"


def _compose_file(data_dir: Path, port: int) -> str:
    return (
        "services:\n"
        "  qdrant:\n"
        f"    image: {IMAGE}\n"
        "    restart: unless-stopped\n"
        f'    ports: ["127.0.0.1:{port}:6333"]\n'
        "    volumes: [./storage:/qdrant/storage]\n"
        f'    labels: {{"{LABEL}": "{data_dir.resolve()}"}}\n'
    )


def _binary_config(data_dir: Path, port: int) -> str:
    storage = server_dir(data_dir) / "storage"
    return (
        f"storage:\n  storage_path: {storage}\n  snapshots_path: {server_dir(data_dir) / 'snapshots'}\n"
        f"service:\n  host: 127.0.0.1\n  http_port: {port}\n  grpc_port: {port + 1}\n"
        "telemetry_disabled: true\n"
    )


def plan_start(data_dir: Path, *, docker: bool, binary: str | None, port: int = DEFAULT_PORT) -> StartPlan:
    """Decide how to start Qdrant: Docker Compose first, then a binary on PATH, else nothing."""
    url = f"http://127.0.0.1:{port}"
    home = server_dir(data_dir)
    if docker:
        compose = home / "compose.yml"
        command = ["docker", "compose", "-p", project_name(data_dir), "-f", str(compose), "up", "-d"]
        return StartPlan(
            "compose",
            command,
            {str(compose): _compose_file(data_dir, port)},
            url,
            f"Starting {IMAGE} with Docker Compose (project {project_name(data_dir)}).",
        )
    if binary:
        config = home / "config.yaml"
        command = [binary, "--config-path", str(config)]
        return StartPlan(
            "binary",
            command,
            {str(config): _binary_config(data_dir, port)},
            url,
            f"Starting {binary} with its data in {home}.",
        )
    return StartPlan(
        "none",
        [],
        {},
        url,
        "No Docker engine answers and no `qdrant` binary is on PATH, so no Qdrant server can be "
        f"started here. The embedded Qdrant Edge store in {data_dir / 'vectors'} stays in use; install "
        "Docker or the qdrant binary, or set QDRANT_URL to a server you run elsewhere.",
    )


def docker_available() -> bool:
    """True when a Docker engine answers (not merely when the client is installed)."""
    if shutil.which("docker") is None:
        return False
    try:
        done = subprocess.run(["docker", "info"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def probe(url: str, timeout: float = 2.0) -> dict[str, Any] | None:
    """GET ``url``/ and return the server's JSON (title, version), or None if it does not answer."""
    try:
        with urllib.request.urlopen(f"{url.rstrip('/')}/", timeout=timeout) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except (urllib.error.URLError, OSError, ValueError):
        return None


def wait_until_ready(url: str, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if probe(url) is not None:
            return True
        time.sleep(0.25)
    return False


def load_state(data_dir: Path) -> ManagedServer | None:
    """The Qdrant server `qdrant start` recorded for ``data_dir``; None when there is none. A state
    file that is not a regular file of the user's (another user may have put it there) is ignored
    with a warning: it must not choose the server, nor block the command in opening it."""
    from cognitive_memory.regular_files import NotRegularFileError, read_regular

    path = data_dir / STATE_FILE
    try:
        text = read_regular(path, owned=True)
    except (FileNotFoundError, NotADirectoryError):  # a data directory that is a file is named later
        return None
    except NotRegularFileError as exc:
        logger.warning(
            "Ignoring %s: it is %s, not a file `memory_system qdrant start` wrote.", path, exc.what
        )
        return None
    return ManagedServer(**json.loads(text))


def save_state(data_dir: Path, server: ManagedServer) -> None:
    from cognitive_memory.regular_files import write_replacing

    write_replacing(data_dir / STATE_FILE, json.dumps(asdict(server), indent=2) + "\n")


def launch(plan: StartPlan, data_dir: Path) -> ManagedServer:
    """Write the plan's files and run its command; the server's own output goes to a log file."""
    for name, text in plan.files.items():
        Path(name).parent.mkdir(parents=True, exist_ok=True)
        Path(name).write_text(text)
    if plan.kind == "compose":
        subprocess.run(plan.command, check=True, capture_output=True, timeout=300)
        return ManagedServer(
            "compose", plan.url, plan.command, project=plan.command[3], compose_file=plan.command[5]
        )
    # A detached process of its own session (it outlives this command), output to a log file.
    log = str(server_dir(data_dir) / "qdrant.log")
    pid = os.posix_spawnp(
        plan.command[0],
        plan.command,
        dict(os.environ),
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
            (os.POSIX_SPAWN_OPEN, 1, log, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ],
        setsid=True,
    )
    return ManagedServer("binary", plan.url, plan.command, pid=pid, config_path=plan.command[-1])


def _is_ours(pid: int, config_path: str) -> bool:
    """The pid is alive and its command line names our config file (never anyone else's process)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return config_path.encode() in cmdline


def stop(data_dir: Path) -> str:
    """Stop what ``start`` started for this data directory, and only that."""
    state = load_state(data_dir)
    if state is None:
        return f"Nothing to stop: memory_system started no Qdrant server for {data_dir}."
    if state.kind == "compose" and state.project and state.compose_file:
        subprocess.run(
            ["docker", "compose", "-p", state.project, "-f", state.compose_file, "down"],
            check=True,
            capture_output=True,
            timeout=300,
        )
        message = f"Stopped the Docker Compose project {state.project}."
    elif state.pid is not None and state.config_path and _is_ours(state.pid, state.config_path):
        os.kill(state.pid, signal.SIGTERM)
        message = f"Stopped the qdrant process {state.pid}."
    else:
        message = f"The Qdrant server recorded for {data_dir} is no longer running; forgot it."
    (data_dir / STATE_FILE).unlink(missing_ok=True)
    return message


def _get_json(url: str, api_key: str | None) -> dict[str, Any] | None:
    request = urllib.request.Request(url, headers={"api-key": api_key} if api_key else {})
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            answer: dict[str, Any] = json.loads(response.read())
            return answer
    except (urllib.error.URLError, OSError, ValueError):
        return None


def _server_report(url: str, api_key: str | None, collection: str) -> dict[str, Any]:
    root = _get_json(f"{url.rstrip('/')}/", api_key)
    report: dict[str, Any] = {
        "url": url,
        "reachable": root is not None,
        "version": (root or {}).get("version"),
    }
    listing = _get_json(f"{url.rstrip('/')}/collections", api_key) or {}
    names = [c["name"] for c in listing.get("result", {}).get("collections", [])]
    counts = {}
    for name in names:
        details = _get_json(f"{url.rstrip('/')}/collections/{name}", api_key) or {}
        counts[name] = details.get("result", {}).get("points_count")
    report["collections"] = counts
    report["memory_collection"] = collection
    return report


def _embedded_report(path: Path) -> dict[str, Any]:
    from cognitive_memory.errors import StorageError
    from cognitive_memory.upkeep import embedded_point_count

    report: dict[str, Any] = {"path": str(path), "reachable": True, "exists": path.exists()}
    if not path.exists():
        report["points"] = 0
        return report
    try:
        report["points"] = embedded_point_count(path)
    except StorageError as exc:
        report["points"] = None
        report["note"] = exc.message
    return report


def describe(settings: Any) -> dict[str, Any]:
    """The state of the vector index this configuration uses, and what `start` could do."""
    storage = settings.storage
    data_dir = storage.data_dir.expanduser()
    managed = load_state(data_dir)
    report: dict[str, Any] = {
        "mode": "server" if storage.qdrant_url else "embedded",
        "managed": asdict(managed) if managed else None,
        "docker_engine": docker_available(),
        "qdrant_binary": shutil.which("qdrant"),
    }
    if storage.qdrant_url:
        key = storage.qdrant_api_key.get_secret_value() if storage.qdrant_api_key else None
        report |= _server_report(storage.qdrant_url, key, storage.qdrant_collection)
    else:
        report |= _embedded_report(storage.vector_path)
    return report


def format_report(report: dict[str, Any]) -> str:
    if report["mode"] == "server":
        state = f"reachable, Qdrant {report['version']}" if report["reachable"] else "NOT reachable"
        lines = [f"Mode: server at {report['url']} ({state})"]
        lines += [f"  collection {name}: {count} points" for name, count in report["collections"].items()]
    else:
        points = report["points"] if report["points"] is not None else "unknown"
        lines = [f"Mode: embedded Qdrant Edge in {report['path']} ({points} points)"]
        if report.get("note"):
            lines.append(f"  {report['note']}")
    if report["managed"]:
        lines.append(f"Started by memory_system: {report['managed']['kind']} at {report['managed']['url']}")
    can_start = (
        "Docker Compose" if report["docker_engine"] else report["qdrant_binary"] or "nothing (embedded only)"
    )
    lines.append(f"`memory_system qdrant start` would use: {can_start}")
    return "\n".join(lines)
