"""Errors raised by the memory core.

Every error carries a short machine-readable ``code`` and a message that tells the caller
what to do. The edges (MCP tools, the typer CLI) translate them; nothing below does.

    CognitiveMemoryError            code + actionable message
    ├── ConfigurationError          a setting (environment or .env) has a value that cannot work
    ├── InvalidInputError           the caller's input is wrong; nothing was stored
    │   ├── NotFoundError           a memory id the call needs does not exist
    │   ├── LoadedMemoryError       the memory comes from a file or repository: change it there
    │   └── EditConflictError       the memory changed after the edit was read; nothing was written
    ├── StorageError                SQLite or the vector index failed
    │   ├── StoreLockedError        another process holds the embedded vector store
    │   ├── IndexMismatchError      the index was built by another model or dimension
    │   └── RejectedPointsError     points the vector index cannot take; nothing of the call written
    └── EncoderError                the embedding model could not be loaded or run
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = [
    "CognitiveMemoryError",
    "ConfigurationError",
    "EditConflictError",
    "EncoderError",
    "IndexMismatchError",
    "InvalidInputError",
    "LoadedMemoryError",
    "NotFoundError",
    "RejectedPointsError",
    "StorageError",
    "StoreLockedError",
]


class CognitiveMemoryError(Exception):
    """Base class: ``code`` names the failure, ``message`` says how to fix it."""

    default_code = "memory_error"

    def __init__(self, message: str, *, code: str | None = None) -> None:
        super().__init__(message)
        self.code = code or self.default_code
        self.message = message


class ConfigurationError(CognitiveMemoryError):
    """A setting from the environment or .env cannot be used as given."""

    default_code = "invalid_setting"


class InvalidInputError(CognitiveMemoryError):
    """The input cannot be accepted as given."""

    default_code = "invalid_input"


class NotFoundError(InvalidInputError):
    """A memory the call names does not exist (forgotten, or never stored)."""

    default_code = "not_found"


class LoadedMemoryError(InvalidInputError):
    """The memory was loaded from markdown or git; its source is where it changes."""

    default_code = "loaded_memory"


class EditConflictError(InvalidInputError):
    """The memory changed after the caller read the state its edit was made from."""

    default_code = "edit_conflict"


class StorageError(CognitiveMemoryError):
    """SQLite or the vector index could not do what was asked."""

    default_code = "storage_error"


class StoreLockedError(StorageError):
    """The embedded vector store is opened by another process."""

    default_code = "store_locked"


class IndexMismatchError(StorageError):
    """The stored vectors come from a different model or dimension than the encoder."""

    default_code = "index_mismatch"


class RejectedPointsError(StorageError):
    """Points the vector index cannot take (an id that is not a UUID, a vector of another size);
    nothing of the call was written. ``rejected`` maps each such point's id to what is wrong."""

    default_code = "rejected_points"

    def __init__(self, message: str, rejected: Mapping[str, str]) -> None:
        super().__init__(message)
        self.rejected = dict(rejected)


class EncoderError(CognitiveMemoryError):
    """The embedding model could not be loaded or run."""

    default_code = "encoder_unavailable"
