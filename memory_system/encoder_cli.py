"""memory_system encoder export|status: the ONNX export of the embedding model.

``make install`` runs ``export`` so a new machine starts on ONNX Runtime; without the export the
server exports in the background on its first start and serves from torch meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from cognitive_memory.encoding import OnnxEncoder
    from cognitive_memory.settings import Settings

__all__ = ["register"]


def register(app: typer.Typer, resolve_settings: Callable[[], Settings]) -> None:
    """Add the ``encoder`` command group to ``app``."""
    encoder_app = typer.Typer(help="The embedding model's ONNX export.", no_args_is_help=True)
    app.add_typer(encoder_app, name="encoder")

    @encoder_app.command("export")
    def export_command() -> None:
        """Export the model to ONNX (checked against torch: cosine > 0.999), unless it exists."""
        encoder = _onnx_encoder(resolve_settings())
        if encoder is None:
            typer.echo("COGNITIVE_MEMORY_ENCODER=torch (or a GPU device): nothing to export.")
            return
        if not encoder.export_file().is_file():
            typer.echo("Exporting the model to ONNX and checking it against torch (about 30 s)...", err=True)
        path = encoder.export()
        if path is None:
            typer.echo("Error: the ONNX export failed (see the log above); torch will serve.", err=True)
            raise typer.Exit(code=1)
        typer.echo(f"ONNX export ready: {path}")

    @encoder_app.command("status")
    def status_command() -> None:
        """Say which backend the server will use and where the export is."""
        encoder = _onnx_encoder(resolve_settings())
        if encoder is None:
            typer.echo("backend: torch (configured)")
            return
        path = encoder.export_file()
        state, detail = encoder.check_export()
        if state == "ok":
            typer.echo(f"backend: onnx\nexport: {path} (ready: it gives the vectors it was exported with)")
        elif state == "missing":
            typer.echo(
                "backend: torch until the ONNX export exists (a server makes it in the background; "
                f"`memory_system encoder export` makes it now)\nexport: {path} (missing)"
            )
        elif state == "unverified":
            typer.echo(
                "backend: torch until the export is made again (a server does it in the background at "
                f"its first start; `memory_system encoder export` does it now)\nexport: {path} (made by "
                "an older version, which recorded no sha256 of it)"
            )
        else:
            typer.echo(
                f"backend: torch: {detail}\nexport: {path} (damaged: run `memory_system encoder export` "
                "to export it again)"
            )
            raise typer.Exit(code=1)


def _onnx_encoder(settings: Settings) -> OnnxEncoder | None:
    from cognitive_memory.encoding import OnnxEncoder
    from cognitive_memory.errors import CognitiveMemoryError
    from cognitive_memory.main import model_encoder

    try:
        encoder = model_encoder(settings)
        if isinstance(encoder, OnnxEncoder):
            encoder.export_file()  # resolves the model: a bad SENTENCE_BERT_MODEL fails here
            return encoder
    except CognitiveMemoryError as exc:
        typer.echo(f"Error: {exc.message}", err=True)
        raise typer.Exit(code=1) from exc
    return None
