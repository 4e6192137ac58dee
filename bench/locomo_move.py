"""LoCoMo, lived in, then moved to PostgreSQL: the same rankings and the same rows on both sides.

    python -m bench locomo-move [--database-url URL] [--data PATH] [--conversations N] [--dumps DIR]
                                [--one-store TURNS]

For each conversation, as ``python -m bench locomo`` stores it:

1. its store is built on SQLite and lived in: every question asked once, so uses and co-recall
   links are written;
2. it is moved with the code ``memory_system move-store`` runs (``service.moving.move_store``)
   into a new database on the PostgreSQL server of ``--database-url`` (else
   ``COGNITIVE_MEMORY_DATABASE_URL``), made for the conversation (``CREATE DATABASE`` over the
   URL's server) and dropped after it, and into a new SQLite file;
3. the rows of the three stores are counted (``counts``: every table the move copies, the links
   of each kind, the named links of each relation, the memories with a key, the uses) and each
   moved store's compared with the lived-in one's;
4. every question is asked again on each store, the lived-in one with its own index, the moved
   ones from a new data directory (their index written from the store, as a new server writes
   it), each pass on the fixed clock with the same seeded ids and its rankings dumped
   (bench/dumps.py); the counts are compared again after the passes: the two moved stores'
   with each other (the same rankings write the same uses and co-recall links), the lived-in
   store's with theirs for the record (its rankings differ, see below, so its links may too).

With ``--one-store TURNS`` the conversations go into one store instead, their turns cycled until
it holds TURNS (as ``python -m bench lived-in`` stores them, later passes marked), and every
question of them is asked of it (evidence found among the first pass's turns): a store of 10,000
lived-in memories moved whole.

The dumps (``DIR/sqlite.jsonl``, ``DIR/postgresql.jsonl``, ``DIR/sqlite-moved.jsonl``) are compared
as ``python -m bench compare-dumps`` compares them, in pairs (``COMPARED``): the lived-in store
against PostgreSQL, the two moved stores (the same index written the same way: what the store of
record alone changes), and the lived-in store against its move into SQLite (what writing the index
anew changes: its word vectors weighted with the store's current average length, not the one kept
since they were first written). The result (the counts of each conversation, the differences, the
recall of each pass) goes to bench/results/locomo-move.json (``locomo-move-one-TURNS.json`` with
``--one-store``, ``-N`` before ``.json`` with ``--conversations N``). Exit 1 when a count differs
right after the move or between the moved stores after the passes, or the two moved stores'
rankings differ by more than the dumps' last digit.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from psycopg import sql
from pydantic import SecretStr

from bench import dumps
from bench.lived_in import cycled_turns
from bench.locomo import DEFAULT_DATA, Question, questions, score, store_conversation, turns
from cognitive_memory.encoding import Encoder
from cognitive_memory.main import build_system, describe_store, model_encoder, open_records, store_location
from cognitive_memory.service import MemoryService, StoreContext
from cognitive_memory.service.moving import move_store
from cognitive_memory.settings import Settings
from cognitive_memory.storage import moving, opening
from cognitive_memory.storage.sql import Connection
from cognitive_memory.system import CognitiveSystem

__all__ = ["Body", "compare_counts", "conversation", "counts", "database_url", "main", "one_store", "run"]

RESULTS = Path(__file__).parent / "results"
URL_VARIABLE = "COGNITIVE_MEMORY_DATABASE_URL"
# The lived-in store with its own index, then the stores it is moved into, each asked from a new
# data directory (its index written from the store).
SIDES = ("sqlite", "postgresql", "sqlite-moved")
# The last digit of a dumped score (bench/dumps.py) may flip where the float arithmetic differs
# in its last bits: a second comparison ignores one unit of it (a hair over: 1.152766 - 1.152765
# is a hair over 1e-6 in floats).
TOLERANCE = 1.01 * 10.0**-dumps.SCORE_DECIMALS
# The dumps compared: the move (the task of the bench), then the move with the index written the
# same way on both sides (the store of record alone), then the index written anew (no move of kind).
COMPARED = (("sqlite", "postgresql"), ("sqlite-moved", "postgresql"), ("sqlite", "sqlite-moved"))
MOVED = "sqlite-moved vs postgresql"


def database_url(server: str, name: str) -> str:
    """The URL of database ``name`` on the server of ``server`` (a ``postgresql://`` URL): its
    user, password, host and query (a Unix socket's ``?host=``) kept, its database replaced."""
    parts = urlsplit(server)
    return urlunsplit((parts.scheme, parts.netloc, "/" + quote(name, safe=""), parts.query, ""))


def compare_counts(before: Mapping[str, int], after: Mapping[str, int]) -> list[str]:
    """One line per count that differs between two stores (missing on one side: 0), by name."""
    return [
        f"{name}: {before.get(name, 0)} vs {after.get(name, 0)}"
        for name in sorted(before.keys() | after.keys())
        if before.get(name, 0) != after.get(name, 0)
    ]


def _counted(conn: Connection) -> dict[str, int]:
    found = dict(moving.count_rows(conn))
    for name, query in (
        ("connections", "SELECT kind, COUNT(*) FROM connections GROUP BY kind"),
        ("relations", "SELECT relation, COUNT(*) FROM relations GROUP BY relation"),
    ):
        for kind, n in conn.execute(query).fetchall():
            found[f"{name}/{kind}"] = int(n)
    keyed, uses = conn.execute(
        "SELECT COUNT(memory_key), COALESCE(SUM(access_count), 0) FROM memories"
    ).fetchone()
    found["memories with a key"], found["uses (access counts summed)"] = int(keyed), int(uses)
    return found


def counts(settings: Settings) -> dict[str, int]:
    """The rows of the store ``settings`` name: every table ``move-store`` copies, the links of each
    kind (``connections/<kind>``), the named links of each relation (``relations/<relation>``),
    the memories with a key and the uses; in one read."""
    store = opening.open_store(store_location(settings), settings.storage.data_dir)
    try:
        return store.database.read(_counted)
    finally:
        store.close()


class Server:
    """The PostgreSQL server of a URL, on which the bench makes a database per conversation."""

    def __init__(self, url: str) -> None:
        self.url = url

    def check(self) -> None:
        """Exit with one line when the server cannot be reached (or the user may not connect)."""
        try:
            psycopg.connect(self.url, autocommit=True, connect_timeout=10).close()
        except psycopg.Error as exc:
            sys.exit(f"cannot reach {describe_store(self.url)}: {str(exc).strip().splitlines()[0]}")

    def create(self, name: str) -> str:
        """Make the empty database ``name``; its URL. One left by an earlier run is refused."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
                sys.exit(
                    f"database {name} exists on {describe_store(self.url)} (left by a run?): drop it first"
                )
            conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        return database_url(self.url, name)

    def drop(self, name: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))


def _settings(data_dir: Path, url: str | None) -> Settings:
    settings = Settings(env_file=None)
    settings.storage.data_dir = data_dir
    settings.storage.db_path = None
    settings.storage.database_url = SecretStr(url) if url is not None else None
    return settings


@dataclass(frozen=True, slots=True)
class Body:
    """One store's memories and questions: its name, what stores its turns (memory id -> the
    turn's key) and its questions by key, their evidence keyed as the turns."""

    name: str
    fill: Callable[[MemoryService], dict[str, str]]
    asked: list[tuple[str, Question]]


def conversation(sample: dict[str, Any]) -> Body:
    """A LoCoMo conversation's store, as ``python -m bench locomo`` builds and asks it."""
    name = sample["sample_id"]
    asked = [(f"{name}/q{number}", question) for number, question in enumerate(questions(sample))]
    return Body(name, lambda service: store_conversation(service, sample), asked)


def one_store(samples: Sequence[dict[str, Any]], count: int) -> Body:
    """One store of ``count`` turns of every conversation, cycled (``lived_in.cycled_turns``;
    keyed ``<sample>/<dia_id>``, ``#<pass>`` after the first), asked every question of them."""
    name = f"one-{count}"
    asked = [
        (key, replace(question, evidence=frozenset(f"{sample['sample_id']}/{e}" for e in question.evidence)))
        for sample in samples
        for key, question in conversation(sample).asked
    ]
    keys = itertools.islice(
        (
            f"{sample['sample_id']}/{dia_id}" + (f"#{rounds}" if rounds > 1 else "")
            for rounds in itertools.count(1)
            for sample in samples
            for dia_id, _, _ in turns(sample["conversation"])
        ),
        count,
    )

    def fill(service: MemoryService) -> dict[str, str]:
        stored = cycled_turns(samples, count)
        return {
            service.store_experience(text, StoreContext(speaker=speaker)).memory_id: key
            for key, (text, speaker) in zip(keys, stored, strict=True)
        }

    return Body(name, fill, asked)


def _ask(
    system: CognitiveSystem, body: Body, dia_of: Mapping[str, str], dump: list[dict[str, Any]] | None
) -> list[tuple[float, float, float]]:
    """Ask every question once, each after the last one's bookkeeping; with ``dump``, each
    ranking appended to it. The scores of the rankings."""
    if system.index_follower is not None:  # a new server on the database: its index written whole
        system.index_follower.catch_up()
    for replica in system.followed:
        replica.build()  # as a server has them by its first recall
    service = MemoryService(system, session_id=body.name)
    scored = []
    for key, question in body.asked:
        result = service.retrieve_memories(question.text, ["core", "peripheral"], 10, False)
        system.flush()
        listed = [*result.memories.core, *result.memories.peripheral]
        ranked = [dia_of[m.id] for m in listed]
        scored.append(score(ranked, question.evidence))
        if dump is not None:
            pairs = zip(ranked, [dumps.recall_score(m) for m in listed], strict=True)
            dump.append(dumps.question_line(key, pairs, core=len(result.memories.core), text=question.text))
    return scored


def _pass(settings: Settings, encoder: Encoder, work: Callable[[CognitiveSystem], Any], moved: bool) -> Any:
    """``work`` on the system over ``settings``' store, on the fixed clock, with seeded ids; a
    ``moved`` store's index is written from the store at the start, as a new server's is."""
    with dumps.repeatable_ids():
        system = build_system(
            settings, encoder=encoder, clock=dumps.fixed_clock, follow_changes=True, follow_index=moved
        )
        try:
            return work(system)
        finally:
            system.close()


def _move(source: Settings, target: Settings) -> tuple[dict[str, int], float]:
    """Move ``source``'s store into ``target``'s as ``move-store`` does; the rows moved, the seconds."""
    started = time.perf_counter()
    records = open_records(source)
    try:
        into = open_records(target)
        try:
            moved = move_store(records, into, describe_store(source), describe_store(target), "(bench)")
        finally:
            into.close()
    finally:
        records.close()
    return moved.rows, time.perf_counter() - started


def _store(
    body: Body,
    encoder: Encoder,
    server: Server,
    root: Path,
    passes: dict[str, list[dict[str, Any]]],
) -> dict[str, Any]:
    """Build and live in ``body``'s store on SQLite, move it into PostgreSQL and into a new SQLite
    file, count the rows and ask every question again on each store."""
    name = "cm_move_" + "".join(c if c.isalnum() else "_" for c in body.name).lower()
    url = server.create(name)
    try:
        stores = {
            side: _settings(root / body.name / side, url if side == "postgresql" else None) for side in SIDES
        }
        dia_of: dict[str, str] = {}

        def live_in(system: CognitiveSystem) -> None:
            dia_of.update(body.fill(MemoryService(system, session_id=body.name)))
            _ask(system, body, dia_of, None)

        _pass(stores["sqlite"], encoder, live_in, moved=False)
        moved = {side: _move(stores["sqlite"], stores[side]) for side in SIDES[1:]}
        counted = {side: counts(s) for side, s in stores.items()}
        scored = {
            side: _pass(
                s,
                encoder,
                lambda system, side=side: _ask(system, body, dia_of, passes[side]),
                side != "sqlite",
            )
            for side, s in stores.items()
        }
        after = {side: counts(s) for side, s in stores.items()}
    finally:
        server.drop(name)
    return {
        "store": body.name,
        "moved_rows": moved["postgresql"][0],
        "move_seconds": {side: round(seconds, 2) for side, (_, seconds) in moved.items()},
        "counts": counted["sqlite"],
        "counts_differing": {side: compare_counts(counted["sqlite"], counted[side]) for side in SIDES[1:]},
        "counts_after_asking_again": after["sqlite"],
        "counts_after_asking_again_differing": {
            side: compare_counts(after["sqlite"], after[side]) for side in SIDES[1:]
        },
        "counts_after_asking_again_moved_differing": compare_counts(
            after["sqlite-moved"], after["postgresql"]
        ),
        "scored": scored,
    }


def _recall(scored: Sequence[tuple[float, float, float]]) -> dict[str, float]:
    n = max(len(scored), 1)
    return {
        "questions": len(scored),
        "recall@5": round(sum(s[0] for s in scored) / n, 4),
        "recall@10": round(sum(s[1] for s in scored) / n, 4),
        "mrr": round(sum(s[2] for s in scored) / n, 4),
    }


def run(data: Path, url: str, limit: int | None, folder: Path, one: int | None = None) -> dict[str, Any]:
    """Every conversation (the first ``limit``) built, lived in, moved and asked again, each in a
    store of its own or, with ``one``, all in one store of that many turns; the dumps written to
    ``folder``; the result."""
    samples = json.loads(data.read_text())[:limit]
    bodies = [one_store(samples, one)] if one is not None else [conversation(s) for s in samples]
    encoder = model_encoder(Settings(env_file=None))
    encoder.warm_up()
    passes: dict[str, list[dict[str, Any]]] = {side: [] for side in SIDES}
    with tempfile.TemporaryDirectory() as tmp:
        conversations = [_store(body, encoder, Server(url), Path(tmp), passes) for body in bodies]
    folder.mkdir(parents=True, exist_ok=True)
    files = {side: folder / f"{side}.jsonl" for side in SIDES}
    for side, path in files.items():
        dumps.write(path, passes[side])
    rankings = {f"{a} vs {b}": dumps.compare(files[a], files[b]) for a, b in COMPARED}
    beyond = {f"{a} vs {b}": dumps.compare(files[a], files[b], TOLERANCE) for a, b in COMPARED}
    each = [c.pop("scored") for c in conversations]
    scored = {side: [s for asked in each for s in asked[side]] for side in SIDES}
    moved = sum(len(found) for c in conversations for found in c["counts_differing"].values())
    moved += sum(len(c["counts_after_asking_again_moved_differing"]) for c in conversations)
    lived_in = [c["counts_after_asking_again_differing"]["postgresql"] for c in conversations]
    return {
        "benchmark": "locomo-move",
        "data": data.name,
        "server": describe_store(url),
        "stores": conversations,
        "questions": len(passes["sqlite"]),
        "rankings_differing": {pair: len(found) for pair, found in rankings.items()},
        "rankings_differences": rankings,
        "rankings_differing_beyond_tolerance": {pair: len(found) for pair, found in beyond.items()},
        "orders_differing": {
            pair: sum("ranking differs" in f for f in found) for pair, found in rankings.items()
        },
        "tolerance": TOLERANCE,
        "counts_differing": moved,
        "counts_differing_from_the_lived_in_after_asking_again": sum(map(len, lived_in)),
        "recall": {side: _recall(scored[side]) for side in SIDES},
        "dumps": {side: str(path) for side, path in files.items()},
    }


def table(result: dict[str, Any]) -> str:
    lines = [f"LoCoMo {result['data']} moved to {result['server']}: {len(result['stores'])} stores"]
    for c in result["stores"]:
        rows = c["moved_rows"]
        differing = [*c["counts_differing"].values(), c["counts_after_asking_again_moved_differing"]]
        lines.append(
            f"  {c['store']}: moved {rows['memories']} memories, {rows['connections']} links, "
            f"{rows['memory_versions']} versions, {rows['trash']} trash in {c['move_seconds']} s; "
            f"{sum(map(len, differing))} counts differ"
        )
    for pair, found in result["rankings_differences"].items():
        lines.append(
            f"{pair}: {len(found)} of {result['questions']} questions differ, "
            f"{result['rankings_differing_beyond_tolerance'][pair]} beyond {result['tolerance']}, "
            f"{result['orders_differing'][pair]} in their order"
        )
        lines += [f"  {line}" for line in found[: dumps.SHOWN]]
    for side, recall in result["recall"].items():
        lines.append(
            f"{side:<12} R@5 {recall['recall@5']:.4f} R@10 {recall['recall@10']:.4f} MRR {recall['mrr']:.4f}"
        )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench locomo-move", description=__doc__)
    parser.add_argument(
        "--database-url", default=os.environ.get(URL_VARIABLE), help=f"default: {URL_VARIABLE}"
    )
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=None, help="only the first N")
    parser.add_argument(
        "--one-store", type=int, default=None, metavar="N", help="all in one store of N turns (cycled)"
    )
    parser.add_argument("--dumps", type=Path, default=Path("locomo-move"), help="where the two dumps go")
    args = parser.parse_args(argv)
    if not args.database_url or urlsplit(args.database_url).scheme not in ("postgresql", "postgres"):
        parser.error(
            f"give a PostgreSQL server: --database-url postgresql://USER@HOST/postgres or {URL_VARIABLE}"
        )
    if args.one_store is not None and args.one_store < 1:
        parser.error("--one-store takes how many turns the store holds: at least 1")
    Server(args.database_url).check()
    result = run(args.data, args.database_url, args.conversations, args.dumps, args.one_store)
    RESULTS.mkdir(exist_ok=True)
    name = "locomo-move" + (f"-one-{args.one_store}" if args.one_store else "")
    name += f"-{args.conversations}.json" if args.conversations is not None else ".json"
    (RESULTS / name).write_text(json.dumps(result, indent=2) + "\n")
    print(table(result))  # noqa: T201 - the benchmark's report goes to stdout
    if result["counts_differing"] or result["rankings_differing_beyond_tolerance"][MOVED]:
        sys.exit(1)
