"""The health of the installation: the configuration, the data directory and the model.

The first checks of the doctor's checkup: the settings must resolve and the data directory take
writes before anything opens the store; the model is checked once the system is built. An
expected failure (an invalid setting, a model that does not load, a full disk) is a ``fail``
result with a message that says what to do, never an exception.
"""

from __future__ import annotations

import shutil
import stat
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
from pydantic import SecretStr

from cognitive_memory.encoding import OnnxEncoder
from cognitive_memory.errors import CognitiveMemoryError, EncoderError
from cognitive_memory.main import EMBEDDING_DIMENSION
from cognitive_memory.settings import redacted_url
from cognitive_memory.storage.database import file_in_the_way
from cognitive_memory.upkeep.health import CheckResult

if TYPE_CHECKING:
    from cognitive_memory.settings import Settings, StorageSettings
    from cognitive_memory.system import CognitiveSystem

__all__ = ["SettingsSource", "check_config", "check_data_dir", "check_model", "mask_secret"]

SettingsSource = Callable[[], "Settings"]
LOW_DISK_BYTES = 500 * 1024 * 1024
NORM_TOLERANCE = 1e-3


def mask_secret(secret: str) -> str:
    """``****`` and at most the last two characters, and those only of a long secret."""
    return "****" + secret[-2:] if len(secret) >= 12 else "(set)"


def check_config(resolve: SettingsSource) -> tuple[Settings | None, CheckResult]:
    """Resolve the settings as the caller does (``Settings``: the environment and ./.env) and
    summarise them with secrets masked."""
    try:
        settings = resolve()
    except CognitiveMemoryError as exc:
        return None, CheckResult("config", "fail", exc.message)
    storage, encoder = settings.storage, settings.encoder
    env_file = Path(".env")
    parts = [
        f"data_dir={storage.data_dir.expanduser()}",
        f"database={_database(storage)}",
        f"QDRANT_URL={redacted_url(storage.qdrant_url) if storage.qdrant_url else '(unset)'}",
        f"QDRANT_COLLECTION={storage.qdrant_collection}",
        f"model={encoder.model} ({encoder.backend}, {encoder.device})",
        f".env={env_file.resolve() if env_file.is_file() else 'none'}",
        *(f"{name}={masked}" for name, masked in _secrets(settings)),
    ]
    detail = ", ".join(parts)
    if storage.qdrant_api_key is not None and not storage.qdrant_url:
        return settings, CheckResult(
            "config", "warn", f"{detail}; QDRANT_API_KEY is unused without QDRANT_URL"
        )
    return settings, CheckResult("config", "ok", detail)


def _secrets(settings: Settings) -> list[tuple[str, str]]:
    """(variable, masked value) of every secret that is set, in every settings section."""
    found = []
    for section in vars(settings).values():
        for name, field in getattr(type(section), "model_fields", {}).items():
            value = getattr(section, name)
            if isinstance(value, SecretStr) and name != "database_url":  # shown as the database
                found.append((str(field.validation_alias or name), mask_secret(value.get_secret_value())))
    return found


def _database(storage: StorageSettings) -> str:
    """The store of record: the PostgreSQL URL with its password masked, or the SQLite file."""
    if storage.database_url is not None:
        return redacted_url(storage.database_url.get_secret_value())
    return str(storage.database_path)


def check_data_dir(storage: StorageSettings) -> CheckResult:
    """The data directory (and the database's directory) exist or can be made, and take writes."""
    directory = storage.data_dir.expanduser()
    folders = {directory: "COGNITIVE_MEMORY_DATA_DIR"}
    folders.setdefault(storage.database_path.parent, "COGNITIVE_MEMORY_DB_PATH")
    for folder, variable in folders.items():
        problem = _unwritable(folder, variable)
        if problem:
            return CheckResult("data_dir", "fail", problem)
    free = shutil.disk_usage(directory).free
    detail = f"{directory} is writable, {free / 1e9:.1f} GB free"
    if free < LOW_DISK_BYTES:
        return CheckResult("data_dir", "warn", f"{detail}: writes will fail when the disk is full")
    mode = stat.S_IMODE(directory.stat().st_mode)
    if mode & 0o077 and sys.platform != "win32":
        return CheckResult(
            "data_dir",
            "warn",
            f"{detail}, but it has mode {mode:04o}: other users can read the memory database in it. "
            f"`chmod 700 {directory}` closes it (new data directories are made 0700).",
        )
    return CheckResult("data_dir", "ok", detail)


def _unwritable(folder: Path, variable: str) -> str | None:
    if blocker := file_in_the_way(folder):
        return f"{blocker} is a file, not a directory: point {variable} at a directory"
    try:
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)  # as build_system makes it
        with tempfile.NamedTemporaryFile(dir=folder, prefix=".doctor-") as probe:
            probe.write(b"doctor")
            probe.flush()
    except OSError as exc:
        return f"cannot create or write to {folder} ({exc.strerror or exc}): check {variable} and permissions"
    return None


def check_model(system: CognitiveSystem) -> CheckResult:
    """The model loads from local files and gives one normalized vector of the expected size."""
    encoder = system.encoder
    started = time.perf_counter()
    problem = _damaged_export(encoder)
    if problem:
        return CheckResult("model", "fail", problem)
    try:
        encoder.warm_up()
        seconds = time.perf_counter() - started
        vectors = encoder.encode(["memory_system doctor checks that the embedding model works."])
    except EncoderError as exc:
        return CheckResult("model", "fail", exc.message)
    if vectors.shape != (1, EMBEDDING_DIMENSION):
        expected = (1, EMBEDDING_DIMENSION)
        return CheckResult("model", "fail", f"{encoder.name} gave shape {vectors.shape}, not {expected}")
    norm = float(np.linalg.norm(vectors[0]))
    if abs(norm - 1.0) > NORM_TOLERANCE:
        return CheckResult("model", "fail", f"{encoder.name} gave a vector of norm {norm:.4f}, not 1")
    backend = getattr(encoder, "backend", "torch")
    detail = (
        f"{encoder.name} ({backend}) loaded offline in {seconds:.1f} s, {EMBEDDING_DIMENSION}-d, "
        f"norm {norm:.4f}"
    )
    return CheckResult("model", "ok", detail)


def _damaged_export(encoder: object) -> str | None:
    """What is wrong with the ONNX export, checked against the sha256 and vectors saved when it was
    made (an export from before they were saved is exported again by the warm-up that follows)."""
    if not isinstance(encoder, OnnxEncoder):
        return None
    try:
        state, detail = encoder.check_export()
    except EncoderError as exc:
        return exc.message
    if state != "damaged":
        return None
    return (
        f"{detail}: run `memory_system encoder export` to export it again from the installed weights "
        "(until then a server ignores it and embeds with torch)"
    )
