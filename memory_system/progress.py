"""One progress bar for the loading commands: on stderr, and only when stderr is a terminal."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["progress_bar"]

Advance = Callable[[int, int], None]


@contextmanager
def progress_bar(description: str, unit: str, *, enabled: bool = True) -> Iterator[Advance | None]:
    """A rich progress bar advanced by ``(done, total)``; None when disabled or when stderr is not
    a terminal (a log file or CI gets the summary only). The bar appears with the first advance,
    so a run with nothing to do prints none."""
    from rich.console import Console

    console = Console(stderr=True)
    if not enabled or not console.is_terminal:
        yield None
        return
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    columns = (
        TextColumn("{task.description}", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn(unit),
        TimeElapsedColumn(),
    )
    progress = Progress(*columns, console=console, transient=True)
    task = progress.add_task(description, total=None, start=False)

    def advance(done: int, total: int) -> None:
        if not progress.live.is_started:
            progress.start()
            progress.start_task(task)
        progress.update(task, completed=done, total=total)

    try:
        yield advance
    finally:
        if progress.live.is_started:
            progress.stop()
