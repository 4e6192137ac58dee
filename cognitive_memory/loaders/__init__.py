"""Loaders: markdown notes and git history turned into memories, incrementally."""

from cognitive_memory.loaders.files import Skipped
from cognitive_memory.loaders.git_load import GitLoadReport, load_git
from cognitive_memory.loaders.markdown import chunk_markdown
from cognitive_memory.loaders.notes import LoadReport, load_markdown, remove_markdown

__all__ = [
    "GitLoadReport",
    "LoadReport",
    "Skipped",
    "chunk_markdown",
    "load_git",
    "load_markdown",
    "remove_markdown",
]
