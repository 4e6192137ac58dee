"""python -m bench git-load REPO: git-load a repository with the real model into a fresh store.

Prints (as JSON) the first load (commits, patterns by type, memories, seconds, memories/s), a
re-run with no new commits, the time of reading the history alone, and the encoder's own batch
throughput on the same texts, so the loader's share of the time is visible. The model is loaded
before the clock starts; its load time is reported apart.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from cognitive_memory.encoding import SentenceBertEncoder
from cognitive_memory.loaders import load_git
from cognitive_memory.loaders.git_history import head_commit, read_commits, repository_root
from cognitive_memory.main import build_system
from cognitive_memory.settings import Settings


def main(argv: list[str]) -> None:
    repo = Path(argv[0] if argv else ".")
    started = time.perf_counter()
    encoder = SentenceBertEncoder()
    encoder.warm_up()
    model_seconds = time.perf_counter() - started
    root = repository_root(repo)
    head = head_commit(root) or ""
    started = time.perf_counter()
    commits = sum(1 for _ in read_commits(root, head))
    read_seconds = time.perf_counter() - started
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(env_file=None)
        settings.storage.data_dir = Path(data)
        system = build_system(settings, encoder=encoder)
        try:
            first = load_git(system.loaded, repo)
            again = load_git(system.loaded, repo)
            rows = system.records.sources.chunks(f"git:{root}")
            texts = [
                memory.content for memory in system.records.memories.get([row.memory_id for row in rows])
            ]
        finally:
            system.close()
    started = time.perf_counter()
    encoder.encode(texts)
    encode_seconds = time.perf_counter() - started
    encoder_rate = len(texts) / encode_seconds if encode_seconds > 0 else 0.0
    result = {
        "repository": str(root),
        "model_load_seconds": round(model_seconds, 2),
        "history_read_seconds": round(read_seconds, 3),
        "commits": commits,
        "first_load": {
            "patterns": {"cochange": first.cochanges, "hotspot": first.hotspots, "solution": first.solutions},
            "memories_added": first.memories.added,
            "seconds": round(first.seconds, 3),
            "memories_per_second": round(first.memories_per_second, 1),
        },
        "rerun": {"commits_read": again.commits_read, "seconds": round(again.seconds, 4)},
        "encoder_texts_per_second": round(encoder_rate, 1),
        "load_vs_encoder": round(first.memories_per_second / encoder_rate, 2) if encoder_rate else None,
    }
    print(json.dumps(result, indent=2))  # noqa: T201 - the benchmark's report goes to stdout
