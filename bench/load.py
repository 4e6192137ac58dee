"""Markdown loading speed beside the encoder's own batch throughput on the same chunks.

python -m bench load [--files 100] [--path DIR]

Without --path, a deterministic tree of markdown files is generated (titles, overviews, nested
sections, code blocks). The encoder is timed on exactly the texts the loader embeds, before and
after the load (their mean is the reference, to even out drift on a noisy machine). Then the
same tree is loaded into a fresh store with the already-loaded model, loaded again unchanged,
and loaded once more after editing the first section of a tenth of the files.
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.corpus import memory_texts
from cognitive_memory.encoding import SentenceBertEncoder
from cognitive_memory.loaders import chunk_markdown, load_markdown
from cognitive_memory.loaders.files import walk_markdown
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings

__all__ = ["main", "run", "write_tree"]

RESULTS = Path(__file__).parent / "results"
_SECTIONS = ("Overview", "Installation", "Configuration", "Usage", "Troubleshooting", "Internals", "FAQ")


def write_tree(root: Path, files: int, seed: int = 7) -> None:
    """Write ``files`` markdown documents of varied length under ``root`` (in sub-directories)."""
    rng = random.Random(seed)
    sentences = memory_texts(files * 40, seed=seed)
    for n in range(files):
        lines = [f"# Component {n}", "", " ".join(rng.sample(sentences, 2)), ""]
        for name in rng.sample(_SECTIONS, rng.randint(3, len(_SECTIONS))):
            lines += [f"## {name}", ""]
            for _ in range(rng.randint(1, 4)):
                lines += [" ".join(rng.sample(sentences, rng.randint(2, 5))), ""]
            if rng.random() < 0.3:
                lines += ["```bash", f"# run component {n}", f"tool run --id {n}", "```", ""]
            if rng.random() < 0.4:
                lines += [f"### {name} details", "", " ".join(rng.sample(sentences, 3)), ""]
        path = root / f"area-{n % 10}" / f"component-{n}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines))


def _encoder_rate(encoder: SentenceBertEncoder, texts: Sequence[str]) -> float:
    started = time.perf_counter()
    encoder.encode(texts)
    return len(texts) / (time.perf_counter() - started)


def _edit_tenth(root: Path) -> int:
    files, _ = walk_markdown(root)
    edited = files[:: max(1, len(files) // max(1, len(files) // 10))]
    for path in edited:
        path.write_text(path.read_text().replace("\n\n## ", " Revised today.\n\n## ", 1))
    return len(edited)


def run(root: Path) -> dict[str, Any]:
    encoder = SentenceBertEncoder()
    encoder.warm_up()
    files, _ = walk_markdown(root)
    texts = [chunk.content for file in files for chunk in chunk_markdown(file.read_text(), file)]
    encoder.encode(texts[:64])
    before = _encoder_rate(encoder, texts)
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(env_file=None)
        settings.storage.data_dir = Path(data)
        system = build_system(settings, encoder=encoder)
        try:
            first = load_markdown(system.loaded, root)
            unchanged = load_markdown(system.loaded, root)
            edited_files = _edit_tenth(root)
            edited = load_markdown(system.loaded, root)
        finally:
            system.close()
    after = _encoder_rate(encoder, texts)
    reference = (before + after) / 2
    return {
        "benchmark": "load",
        "files": first.files,
        "chunks": first.chunks.added,
        "encoder_batch_per_second": round(reference, 1),
        "encoder_before_after": [round(before, 1), round(after, 1)],
        "load_seconds": round(first.seconds, 2),
        "load_memories_per_second": round(first.memories_per_second, 1),
        "load_over_encoder_throughput": round(first.memories_per_second / reference, 2),
        "reload_unchanged_seconds": round(unchanged.seconds, 3),
        "reload_unchanged_fraction_of_load": round(unchanged.seconds / first.seconds, 4),
        "edited_files": edited_files,
        "reload_edited": {
            "seconds": round(edited.seconds, 2),
            "updated": edited.chunks.updated,
            "added": edited.chunks.added,
            "removed": edited.chunks.removed,
            "unchanged": edited.chunks.unchanged,
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench load", description=__doc__)
    parser.add_argument("--files", type=int, default=100, help="Files to generate (without --path).")
    parser.add_argument("--path", type=Path, help="Load a copy of this markdown tree instead.")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "tree"
        if args.path is not None:
            import shutil

            shutil.copytree(args.path, root, symlinks=True)
        else:
            write_tree(root, args.files)
        result = run(root.resolve())
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "load.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
