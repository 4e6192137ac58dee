"""Configuration from the environment and ``.env``, one class per concern (docs/configuration.md)."""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from pydantic import Field, SecretStr, ValidationError, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from cognitive_memory.errors import ConfigurationError

__all__ = [
    "EncoderSettings",
    "RecallSettings",
    "ScopeSettings",
    "ServerSettings",
    "Settings",
    "StorageSettings",
    "default_cache_dir",
    "default_data_dir",
    "describe_invalid",
    "private_socket_dir",
    "redacted_url",
]

APP_DIR_NAME = "cognitive-memory"
_SOCKET_NAME_MAX = 104  # bytes in sun_path on macOS (108 on Linux), the terminating NUL included


def default_data_dir() -> Path:
    """The user's data directory: XDG on Linux, Application Support on macOS, LOCALAPPDATA on Windows."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP_DIR_NAME
    if sys.platform == "win32":
        return Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local")) / APP_DIR_NAME
    xdg = os.environ.get("XDG_DATA_HOME")
    return (Path(xdg) if xdg else Path.home() / ".local" / "share") / APP_DIR_NAME


def default_cache_dir() -> Path:
    """The user's cache directory (derived files only, e.g. the ONNX export of the model)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches" / APP_DIR_NAME
    if sys.platform == "win32":
        local = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
        return local / APP_DIR_NAME / "cache"
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / APP_DIR_NAME


def _base_config() -> SettingsConfigDict:
    return SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)


def _blank_is_none(value: Any) -> Any:
    return None if isinstance(value, str) and not value.strip() else value


class StorageSettings(BaseSettings):
    """Where memories live: the data directory, the SQLite file, and the vector index."""

    model_config = _base_config()

    data_dir: Path = Field(default_factory=default_data_dir, validation_alias="COGNITIVE_MEMORY_DATA_DIR")
    db_path: Path | None = Field(default=None, validation_alias="COGNITIVE_MEMORY_DB_PATH")
    # A team's store of record on PostgreSQL (docs/team.md); unset: the SQLite file (db_path).
    database_url: SecretStr | None = Field(default=None, validation_alias="COGNITIVE_MEMORY_DATABASE_URL")
    qdrant_url: str | None = Field(default=None, validation_alias="QDRANT_URL")
    qdrant_api_key: SecretStr | None = Field(default=None, validation_alias="QDRANT_API_KEY")
    qdrant_collection: str = Field(default="cognitive_memory", validation_alias="QDRANT_COLLECTION")
    # Forgotten and pruned memories stay restorable this many days (0: until the next start).
    trash_days: float = Field(default=30, ge=0, le=36500, validation_alias="COGNITIVE_MEMORY_TRASH_DAYS")

    _blank = field_validator("db_path", "qdrant_url", "qdrant_api_key", mode="before")(_blank_is_none)

    @field_validator("database_url", mode="before")
    @classmethod
    def _database_url(cls, value: Any) -> Any:
        """Blank is unset; anything else must be a ``postgresql://`` URL (its message never
        repeats the value, which may hold a password)."""
        value = _blank_is_none(value)
        if value is None or isinstance(value, SecretStr):
            return value
        text = str(value).strip()
        scheme = urlsplit(text).scheme.lower() if "://" in text else ""
        if scheme not in ("postgresql", "postgres"):
            what = f"a {scheme}:// URL" if scheme else "not a URL"
            raise ValueError(
                f"it is {what}; give a PostgreSQL URL such as "
                "postgresql://USER:PASSWORD@HOST:5432/DATABASE, or leave it unset for the SQLite file"
            )
        return text

    @field_validator("data_dir", mode="before")
    @classmethod
    def _data_dir(cls, value: Any) -> Any:
        """Blank is unset (the user's data directory: a client config's ``""`` must not put a
        store in whatever directory the client starts the server in); a path is made absolute
        (``~`` expanded), so every message names the same place."""
        value = _blank_is_none(value)
        return default_data_dir() if value is None else Path(value).expanduser().absolute()

    @property
    def database_path(self) -> Path:
        return (self.db_path or self.data_dir / "cognitive_memory.db").expanduser()

    @property
    def vector_path(self) -> Path:
        return self.data_dir.expanduser() / "vectors"

    @property
    def socket_path(self) -> Path:
        """Where the process owning the embedded store serves the others: in the data directory
        when the path fits a Unix socket name, else in the user's runtime directory (checked to be
        private: see ``private_socket_dir``)."""
        beside = self.data_dir.expanduser().resolve() / "vectors.sock"
        if len(str(beside)) < 100:
            return beside
        digest = hashlib.sha256(str(beside).encode()).hexdigest()[:16]
        runtime = os.environ.get("XDG_RUNTIME_DIR")
        if runtime:
            directory = private_socket_dir(Path(runtime), "XDG_RUNTIME_DIR")
        else:
            shared_tmp = Path(tempfile.gettempdir()) / f"cm-{os.getuid()}"
            directory = private_socket_dir(shared_tmp, "TMPDIR", follow_links=False)
        path = directory / f"cognitive-memory-{digest}.sock"
        if len(os.fsencode(path)) >= _SOCKET_NAME_MAX:
            raise ConfigurationError(
                f"The vector store's socket path {path} is too long for a Unix socket "
                f"({len(os.fsencode(path))} bytes, at most {_SOCKET_NAME_MAX - 1}): set XDG_RUNTIME_DIR "
                "to a shorter private directory, or use a shorter COGNITIVE_MEMORY_DATA_DIR."
            )
        return path


def private_socket_dir(directory: Path, variable: str, *, follow_links: bool = True) -> Path:
    """``directory``, made (mode 0700) if missing, once it is certain that no other user can
    replace a socket in it: it must be this user's and closed to group and others. In a shared
    /tmp another user may have made it first, to receive every vector, tag and query sent to the
    owner of the store, so anything else is refused, never repaired."""
    try:
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        state = os.stat(directory, follow_symlinks=follow_links)
    except OSError as exc:
        raise ConfigurationError(
            f"Cannot use {directory} for the vector store's socket ({exc.strerror or exc}): "
            f"set {variable} to a directory of yours."
        ) from None
    problem = _socket_dir_problem(state)
    if problem:
        raise ConfigurationError(
            f"Refusing to put the vector store's socket in {directory}: it {problem}, so another "
            f"user could intercept your memories. Remove it (as its owner or root) if you did not "
            f"make it, or set {variable} to a directory of yours with mode 0700."
        )
    return directory


def _socket_dir_problem(state: os.stat_result) -> str | None:
    if stat.S_ISLNK(state.st_mode):
        return "is a symbolic link"
    if not stat.S_ISDIR(state.st_mode):
        return "is not a directory"
    if state.st_uid != os.getuid():
        return f"belongs to uid {state.st_uid}, not to you (uid {os.getuid()})"
    if state.st_mode & 0o077:
        return f"has mode {stat.S_IMODE(state.st_mode):04o} (group or others have access; 0700 expected)"
    return None


class EncoderSettings(BaseSettings):
    """The embedding model: a name of the packaged model or a local directory, and how it runs."""

    model_config = _base_config()

    model: str = Field(default="all-MiniLM-L6-v2", validation_alias="SENTENCE_BERT_MODEL")
    backend: Literal["onnx", "torch"] = Field(default="onnx", validation_alias="COGNITIVE_MEMORY_ENCODER")
    cache_dir: Path = Field(default_factory=default_cache_dir, validation_alias="COGNITIVE_MEMORY_CACHE_DIR")
    device: str = Field(default="cpu", validation_alias="COGNITIVE_MEMORY_DEVICE")
    threads: int | None = Field(default=None, ge=1, le=64, validation_alias="COGNITIVE_MEMORY_TORCH_THREADS")

    _blank = field_validator("threads", mode="before")(_blank_is_none)

    @field_validator("backend", "cache_dir", mode="before")
    @classmethod
    def _blank_is_default(cls, value: Any, info: ValidationInfo) -> Any:
        if isinstance(value, str) and not value.strip():
            return "onnx" if info.field_name == "backend" else default_cache_dir()
        return value.strip().lower() if info.field_name == "backend" and isinstance(value, str) else value


class RecallSettings(BaseSettings):
    """Limits and weights of recall_memories."""

    model_config = _base_config()

    max_memories_per_query: int = Field(
        default=50, ge=1, le=1000, validation_alias="MCP_MAX_MEMORIES_PER_QUERY"
    )
    session_lesson_boost: float = Field(
        default=1.1, ge=1.0, le=3.0, validation_alias="MCP_SESSION_LESSON_BOOST"
    )
    bridge_threshold: float = Field(
        default=0.5, ge=0.0, le=1.0, validation_alias="MCP_BRIDGE_DISCOVERY_THRESHOLD"
    )
    # Where recall searches the words: the vector index's sparse vectors or SQLite FTS5; unset
    # (blank), recall's own default (RetrievalConfig.words_in_index).
    words: Literal["index", "fts5"] | None = Field(default=None, validation_alias="COGNITIVE_MEMORY_WORDS")

    @field_validator("words", mode="before")
    @classmethod
    def _any_case(cls, value: Any) -> Any:
        value = _blank_is_none(value)
        return value.strip().lower() if isinstance(value, str) else value


class ScopeSettings(BaseSettings):
    """Which project a process works in, and when a new memory counts as a near duplicate."""

    model_config = _base_config()

    project: str | None = Field(default=None, max_length=100, validation_alias="COGNITIVE_MEMORY_PROJECT")
    near_duplicate: float = Field(
        default=0.92, ge=0.5, le=1.0, validation_alias="COGNITIVE_MEMORY_NEAR_DUPLICATE"
    )

    _blank = field_validator("project", mode="before")(_blank_is_none)


class ServerSettings(BaseSettings):
    """How ``memory_system serve mcp`` listens (command-line options take precedence)."""

    model_config = _base_config()

    mode: Literal["stdio", "http"] = Field(default="stdio", validation_alias="MCP_SERVER_MODE")
    host: str = Field(default="127.0.0.1", validation_alias="MCP_SERVER_HOST")
    port: int = Field(default=8080, ge=1, le=65535, validation_alias="MCP_SERVER_PORT")
    auth_token: SecretStr | None = Field(default=None, validation_alias="MCP_AUTH_TOKEN")
    # token: without MCP_AUTH_TOKEN, a token generated into the data directory; off: no token on
    # loopback, for a machine where every local user is trusted.
    http_auth: Literal["token", "off"] = Field(default="token", validation_alias="MCP_HTTP_AUTH")
    allowed_hosts: str = Field(default="", validation_alias="MCP_ALLOWED_HOSTS")
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"] = Field(
        default="INFO", validation_alias="COGNITIVE_MEMORY_LOG_LEVEL"
    )

    _blank = field_validator("auth_token", mode="before")(_blank_is_none)

    @field_validator("mode", "log_level", "http_auth", mode="before")
    @classmethod
    def _any_case(cls, value: Any, info: ValidationInfo) -> Any:
        if not isinstance(value, str):
            return value
        if not value.strip():
            return {"mode": "stdio", "log_level": "INFO", "http_auth": "token"}[info.field_name or ""]
        return value.strip().upper() if info.field_name == "log_level" else value.strip().lower()

    @field_validator("http_auth")
    @classmethod
    def _one_way_to_authenticate(cls, value: str, info: ValidationInfo) -> str:
        if value == "off" and info.data.get("auth_token") is not None:
            raise ValueError("it asks for no token while MCP_AUTH_TOKEN sets one: unset one of them")
        return value

    @property
    def extra_hosts(self) -> list[str]:
        """Host names (besides loopback) that DNS-rebinding protection accepts."""
        return [name.strip() for name in self.allowed_hosts.split(",") if name.strip()]


class Settings:
    """All settings, read together from the environment and one ``.env`` file."""

    def __init__(self, env_file: Path | str | None = ".env") -> None:
        """Raises ConfigurationError naming each variable whose value cannot be used."""
        try:
            self.storage = StorageSettings(_env_file=env_file)  # type: ignore[call-arg]  # pydantic-settings init kwarg
            self.encoder = EncoderSettings(_env_file=env_file)  # type: ignore[call-arg]  # pydantic-settings init kwarg
            self.recall = RecallSettings(_env_file=env_file)  # type: ignore[call-arg]  # pydantic-settings init kwarg
            self.server = ServerSettings(_env_file=env_file)  # type: ignore[call-arg]  # pydantic-settings init kwarg
            self.scope = ScopeSettings(_env_file=env_file)  # type: ignore[call-arg]  # pydantic-settings init kwarg
        except ValidationError as exc:
            raise ConfigurationError(describe_invalid(exc)) from None


# Variables whose values are secrets: an error about one shows it with its password hidden.
_SECRET_VARIABLES = frozenset({"COGNITIVE_MEMORY_DATABASE_URL", "QDRANT_API_KEY", "MCP_AUTH_TOKEN"})


def describe_invalid(exc: ValidationError) -> str:
    """One sentence per bad variable: its name, the value given (a secret's hidden) and what it
    accepts."""

    def shown(variable: object, value: object) -> str:
        if variable not in _SECRET_VARIABLES:
            return repr(value)
        return repr(redacted_url(str(value))) if "://" in str(value) else "(hidden)"

    problems = "; ".join(
        f"{variable}={shown(variable, error['input'])}: {str(error['msg']).removeprefix('Value error, ')}"
        for error in exc.errors(include_url=False)
        for variable in [error["loc"][0] if error["loc"] else "a setting"]
    )
    return f"Invalid setting {problems}. Fix it in the environment or in .env (see .env.example)."


def redacted_url(url: str) -> str:
    """``url`` with its password (in the user part or a ``password=`` parameter) replaced by
    ``****``: what messages and ``status`` may show of a database's or server's address."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an unreadable URL)"
    netloc = parts.netloc
    if "@" in netloc:
        user, _, host = netloc.rpartition("@")
        name, colon, _password = user.partition(":")
        netloc = f"{name}:****@{host}" if colon else f"{user}@{host}"
    pairs = parse_qsl(parts.query, keep_blank_values=True)
    hidden = [(key, "****" if key.lower() == "password" else value) for key, value in pairs]
    query = urlencode(hidden, safe="*/")
    return urlunsplit((parts.scheme, netloc, parts.path, query if pairs else parts.query, parts.fragment))
