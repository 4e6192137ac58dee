"""Named, append-only PostgreSQL migrations, numbered with SQLite's (``storage/migrations.py``).

The first creates the whole schema as SQLite's stands after its migrations 0001-0022 (the same
tables, columns and meaning; FTS5's ``memory_fts`` is SQLite's alone) and records all 22 names,
so the numbering is shared: each later one (0023 on) is written for both under the same name. A
shipped migration is never edited: add a new one.

Text compares as on SQLite, byte by byte (each text column is ``COLLATE "C"``, whatever the
database's locale). Every rule is a constraint the database enforces: keys unique per project (a
partial unique index), the relation names' rule (a regular expression), the CHECKs, the foreign
keys with ON DELETE CASCADE, and a memory's and a version's ``metadata`` and ``tags`` JSON that
parses (SQLite takes any text there, and reads what does not parse as empty). The change log
and ``memory_fields`` are kept by triggers, as on SQLite. Migrations run under the write lock
(``database.WRITE_LOCK``), each in its own transaction, so that servers starting together on a new
database apply each exactly once.
"""

from __future__ import annotations

from datetime import UTC, datetime

from cognitive_memory.storage.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from cognitive_memory.storage.postgres.connection import PostgresConnection
from cognitive_memory.storage.postgres.database import WRITE_LOCK

__all__ = ["MIGRATIONS", "apply_migrations"]

# The names SQLite's migrations 0001-0022 carry: the first migration here stands for them all.
_SQLITE_THROUGH_0022 = tuple(name for name, _sql in SQLITE_MIGRATIONS[:22])

_SCHEMA = """
CREATE TABLE memories (
    id TEXT COLLATE "C" PRIMARY KEY,
    content TEXT COLLATE "C" NOT NULL,
    hierarchy_level INTEGER NOT NULL CHECK (hierarchy_level IN (0, 1, 2)),
    memory_type TEXT COLLATE "C" NOT NULL CHECK (memory_type IN ('episodic', 'semantic')),
    created_date TEXT COLLATE "C" NOT NULL,
    timestamp DOUBLE PRECISION NOT NULL,
    modified_date TEXT COLLATE "C",
    source_date TEXT COLLATE "C",
    last_accessed DOUBLE PRECISION,
    access_count BIGINT NOT NULL DEFAULT 0,
    importance_score DOUBLE PRECISION NOT NULL,
    strength DOUBLE PRECISION NOT NULL,
    metadata TEXT COLLATE "C" NOT NULL CHECK (CAST(metadata AS json) IS NOT NULL),
    tags TEXT COLLATE "C" NOT NULL CHECK (CAST(tags AS json) IS NOT NULL),
    dimensions TEXT COLLATE "C" NOT NULL,
    loader_type TEXT COLLATE "C",
    session_id TEXT COLLATE "C",
    embedding BYTEA NOT NULL,
    project TEXT COLLATE "C" NOT NULL DEFAULT 'default',
    content_key TEXT COLLATE "C",
    speaker TEXT COLLATE "C",
    origin TEXT COLLATE "C",
    memory_key TEXT COLLATE "C",
    rowid BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE INDEX memories_type ON memories (memory_type);
CREATE INDEX memories_loader ON memories (loader_type);
CREATE INDEX memories_timestamp ON memories (timestamp);
CREATE INDEX memories_session ON memories (session_id, timestamp);
CREATE INDEX memories_kinds ON memories (hierarchy_level, memory_type, loader_type);
CREATE INDEX memories_project ON memories (project, timestamp);
CREATE INDEX memories_content_key ON memories (content_key);
CREATE UNIQUE INDEX memories_key ON memories (project, memory_key) WHERE memory_key IS NOT NULL;
CREATE INDEX memories_key_alone ON memories (memory_key) WHERE memory_key IS NOT NULL;

CREATE TABLE vector_outbox (
    memory_id TEXT COLLATE "C" PRIMARY KEY,
    operation TEXT COLLATE "C" NOT NULL CHECK (operation IN ('upsert', 'delete')),
    queued_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE store_meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT COLLATE "C" NOT NULL);
CREATE TABLE activity (name TEXT COLLATE "C" PRIMARY KEY, at DOUBLE PRECISION NOT NULL);

CREATE TABLE sources (
    key TEXT COLLATE "C" PRIMARY KEY,
    loader_type TEXT COLLATE "C" NOT NULL,
    fingerprint TEXT COLLATE "C" NOT NULL,
    state TEXT COLLATE "C" NOT NULL DEFAULT '{}',
    loaded_at DOUBLE PRECISION NOT NULL
);
CREATE TABLE source_chunks (
    memory_id TEXT COLLATE "C" PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
    source_key TEXT COLLATE "C" NOT NULL,
    chunk_key TEXT COLLATE "C" NOT NULL,
    content_hash TEXT COLLATE "C" NOT NULL,
    position BIGINT NOT NULL,
    UNIQUE (source_key, chunk_key)
);
CREATE TABLE source_links (
    memory_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_key TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (memory_id, target_key)
);
CREATE INDEX source_links_target ON source_links (target_key);
CREATE TABLE source_digests (
    source_key TEXT COLLATE "C" NOT NULL,
    item_key TEXT COLLATE "C" NOT NULL,
    seq BIGINT NOT NULL,
    data TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (source_key, item_key)
);
CREATE INDEX source_digests_order ON source_digests (source_key, seq);

CREATE TABLE memory_versions (
    memory_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    version BIGINT NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    hierarchy_level INTEGER NOT NULL,
    memory_type TEXT COLLATE "C" NOT NULL,
    importance_score DOUBLE PRECISION NOT NULL,
    tags TEXT COLLATE "C" NOT NULL CHECK (CAST(tags AS json) IS NOT NULL),
    metadata TEXT COLLATE "C" NOT NULL CHECK (CAST(metadata AS json) IS NOT NULL),
    project TEXT COLLATE "C" NOT NULL,
    replaced_at DOUBLE PRECISION NOT NULL,
    replaced_by_session TEXT COLLATE "C",
    PRIMARY KEY (memory_id, version)
);
CREATE TABLE memory_words (
    memory_rowid BIGINT PRIMARY KEY,
    terms TEXT COLLATE "C" NOT NULL,
    context TEXT COLLATE "C" NOT NULL DEFAULT ''
);
CREATE TABLE connections (
    source_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    target_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    kind TEXT COLLATE "C" NOT NULL CHECK (kind IN (
        'temporal', 'semantic', 'co_recall', 'source', 'parent', 'child', 'sibling', 'link'
    )),
    weight DOUBLE PRECISION NOT NULL CHECK (weight > 0),
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (source_id, target_id, kind)
);
CREATE INDEX connections_target ON connections (target_id);
CREATE TABLE relations (
    from_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    to_id TEXT COLLATE "C" NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
    relation TEXT COLLATE "C" NOT NULL CHECK (
        length(relation) BETWEEN 2 AND 40 AND relation ~ '^[a-z][a-z0-9_]*$'
    ),
    note TEXT COLLATE "C",
    created_at DOUBLE PRECISION NOT NULL,
    session_id TEXT COLLATE "C",
    weight DOUBLE PRECISION NOT NULL DEFAULT 0.8 CHECK (weight >= 0 AND weight <= 1),
    PRIMARY KEY (from_id, to_id, relation),
    CHECK (from_id != to_id)
);
CREATE INDEX relations_to ON relations (to_id);

CREATE TABLE trash (
    entry BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    id TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C" NOT NULL,
    project TEXT COLLATE "C" NOT NULL,
    trashed_at DOUBLE PRECISION NOT NULL,
    reason TEXT COLLATE "C" NOT NULL,
    trashed_by TEXT COLLATE "C",
    row TEXT COLLATE "C" NOT NULL,
    embedding BYTEA NOT NULL,
    relations TEXT COLLATE "C" NOT NULL,
    versions TEXT COLLATE "C" NOT NULL,
    connections TEXT COLLATE "C" NOT NULL,
    consolidated_into TEXT COLLATE "C"
);
CREATE INDEX trash_trashed_at ON trash (trashed_at);
CREATE INDEX trash_memory ON trash (id, entry);
CREATE INDEX trash_consolidated_into ON trash (consolidated_into);
CREATE TABLE prune_tokens_used (digest TEXT COLLATE "C" PRIMARY KEY, expires_at DOUBLE PRECISION NOT NULL);
CREATE TABLE set_aside (
    id TEXT COLLATE "C" NOT NULL,
    content TEXT COLLATE "C",
    problem TEXT COLLATE "C" NOT NULL,
    set_aside_at DOUBLE PRECISION NOT NULL,
    row TEXT COLLATE "C" NOT NULL,
    relations TEXT COLLATE "C" NOT NULL,
    versions TEXT COLLATE "C" NOT NULL
);
CREATE INDEX set_aside_id ON set_aside (id);

-- FTS5's memory_fts is SQLite's alone. What the store reads of it besides word search is kept
-- here: each entry's lengths in terms (the word vectors' average length, storage/word_documents.py),
-- and a list filter's match of a memory's own terms (memory_words.terms) against FTS5's
-- expression of it, content : (("a" OR "b") AND ("c")) (storage/lexical.py's _all_of), each
-- quoted word given as its terms (storage/browse.py's lexical_expression).
CREATE TABLE memory_lengths (
    memory_rowid BIGINT PRIMARY KEY,
    content BIGINT NOT NULL,
    context BIGINT NOT NULL
);
CREATE FUNCTION lexical_match(terms TEXT, expression TEXT) RETURNS boolean
    LANGUAGE sql IMMUTABLE AS $$
    SELECT coalesce(bool_and(EXISTS (
        SELECT 1 FROM regexp_matches(part, '"([^"]*)"', 'g') AS word (found)
        WHERE string_to_array(word.found[1], ' ') <@ string_to_array(terms, ' ')
    )), false)
    FROM regexp_split_to_table(substring(expression FROM '^content : \\((.*)\\)$'), ' AND ') AS part
$$;

CREATE TABLE vocabulary (term TEXT COLLATE "C" PRIMARY KEY, memories BIGINT NOT NULL);
CREATE TABLE vocabulary_deletes (
    variant TEXT COLLATE "C" NOT NULL,
    term TEXT COLLATE "C" NOT NULL,
    PRIMARY KEY (variant, term)
);
CREATE TABLE document_frequencies (term TEXT COLLATE "C" PRIMARY KEY, memories BIGINT NOT NULL);
INSERT INTO store_meta (key, value) VALUES ('word_documents', '0'), ('words_indexed', '1');
"""

# The change log (SQLite's 0019): a row per write of a memory, its links or its words. The seq
# comes from an identity, taken under the write lock, so seqs commit in order.
_CHANGE_LOG = """
CREATE TABLE change_log (
    seq BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    memory_id TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL CHECK (kind IN ('memory', 'links', 'words'))
);
CREATE FUNCTION change_log_memory() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (memory_id, kind)
        VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END, 'memory');
    RETURN NULL;
END $$;
CREATE TRIGGER change_log_memory AFTER INSERT OR UPDATE OR DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION change_log_memory();
CREATE FUNCTION change_log_connection() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (memory_id, kind)
        VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.source_id ELSE NEW.source_id END, 'links');
    RETURN NULL;
END $$;
CREATE TRIGGER change_log_connection AFTER INSERT OR UPDATE OR DELETE ON connections
    FOR EACH ROW EXECUTE FUNCTION change_log_connection();
CREATE FUNCTION change_log_relation() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        INSERT INTO change_log (memory_id, kind) VALUES (OLD.from_id, 'links'), (OLD.to_id, 'links');
    ELSE
        INSERT INTO change_log (memory_id, kind) VALUES (NEW.from_id, 'links'), (NEW.to_id, 'links');
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER change_log_relation AFTER INSERT OR UPDATE OR DELETE ON relations
    FOR EACH ROW EXECUTE FUNCTION change_log_relation();
CREATE FUNCTION change_log_words() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO change_log (memory_id, kind)
        SELECT id, 'words' FROM memories
        WHERE rowid = CASE WHEN TG_OP = 'DELETE' THEN OLD.memory_rowid ELSE NEW.memory_rowid END;
    RETURN NULL;
END $$;
CREATE TRIGGER change_log_words AFTER INSERT OR UPDATE OR DELETE ON memory_words
    FOR EACH ROW EXECUTE FUNCTION change_log_words();
"""

# A memory's caller's fields (SQLite's 0020): the top-level string, number and boolean values
# of its metadata (an object; else none; none for a loader's memory but a session lesson), the
# reserved keys of core/metadata.py as they were then left out. ``value`` is the JSON value, a
# boolean as 0 or 1 (as SQLite's json_each gives it and core/metadata's filter asks for it).
_MEMORY_FIELDS = """
CREATE TABLE memory_fields (
    memory_id TEXT COLLATE "C" NOT NULL,
    name TEXT COLLATE "C" NOT NULL,
    kind TEXT COLLATE "C" NOT NULL CHECK (kind IN ('text', 'number', 'bool')),
    value JSONB
);
CREATE INDEX memory_fields_match ON memory_fields (name, kind, value);
CREATE INDEX memory_fields_memory ON memory_fields (memory_id);
CREATE FUNCTION memory_fields_of(metadata TEXT, loader_type TEXT) RETURNS jsonb
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN loader_type IS NOT NULL AND loader_type != 'session_lesson' THEN '{}'::jsonb
        WHEN jsonb_typeof(CAST(metadata AS jsonb)) = 'object' THEN CAST(metadata AS jsonb)
        ELSE '{}'::jsonb
    END
$$;
CREATE FUNCTION memory_fields_write() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP != 'INSERT' THEN
        DELETE FROM memory_fields WHERE memory_id = OLD.id;
    END IF;
    IF TG_OP = 'DELETE' THEN
        RETURN NULL;
    END IF;
    INSERT INTO memory_fields (memory_id, name, kind, value)
        SELECT NEW.id, j.key,
            CASE jsonb_typeof(j.value) WHEN 'string' THEN 'text' WHEN 'boolean' THEN 'bool' ELSE 'number' END,
            CASE WHEN jsonb_typeof(j.value) != 'boolean' THEN j.value
                WHEN j.value = 'true' THEN '1'::jsonb ELSE '0'::jsonb END
        FROM jsonb_each(memory_fields_of(NEW.metadata, NEW.loader_type)) j
        WHERE jsonb_typeof(j.value) IN ('string', 'number', 'boolean') AND j.key NOT IN (
            'importance_level', 'lesson_type', 'loader_type', 'session_context', 'session_id',
            'source_info', 'source_path', 'speaker');
    RETURN NULL;
END $$;
CREATE TRIGGER memory_fields_added AFTER INSERT ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_fields_write();
CREATE TRIGGER memory_fields_changed AFTER UPDATE OF metadata, loader_type ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_fields_write();
CREATE TRIGGER memory_fields_removed AFTER DELETE ON memories
    FOR EACH ROW EXECUTE FUNCTION memory_fields_write();
"""

# SQLite's 0023: a memory's uses (access_count and last_accessed alone) are logged as 'uses'. The
# row with its uses put back is compared with the old one whole, so a column added later is
# compared without being named here.
_CHANGE_LOG_USES = """
ALTER TABLE change_log DROP CONSTRAINT change_log_kind_check;
ALTER TABLE change_log ADD CONSTRAINT change_log_kind_check
    CHECK (kind IN ('memory', 'links', 'words', 'uses'));
CREATE OR REPLACE FUNCTION change_log_memory() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    unused memories;
BEGIN
    IF TG_OP = 'UPDATE' THEN
        unused := NEW;
        unused.access_count := OLD.access_count;
        unused.last_accessed := OLD.last_accessed;
        INSERT INTO change_log (memory_id, kind)
            VALUES (NEW.id, CASE WHEN unused IS NOT DISTINCT FROM OLD THEN 'uses' ELSE 'memory' END);
    ELSE
        INSERT INTO change_log (memory_id, kind)
            VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.id ELSE NEW.id END, 'memory');
    END IF;
    RETURN NULL;
END $$;
"""

# (names recorded, SQL): each entry one transaction.
MIGRATIONS: tuple[tuple[tuple[str, ...], str], ...] = (
    (_SQLITE_THROUGH_0022, _SCHEMA + _CHANGE_LOG + _MEMORY_FIELDS),
    (("0023_change_log_uses",), _CHANGE_LOG_USES),
)

_CREATE_RECORD = (
    "CREATE TABLE IF NOT EXISTS schema_migrations "
    '(name TEXT COLLATE "C" PRIMARY KEY, applied_at TEXT COLLATE "C" NOT NULL)'
)


def apply_migrations(conn: PostgresConnection) -> list[str]:
    """Apply every migration not yet recorded, each in its own transaction under the write lock
    (the check happens inside it, so servers starting together apply each exactly once); the names
    recorded now. ``conn`` is in autocommit mode."""
    raw = conn.raw
    applied: list[str] = []
    for names, sql in MIGRATIONS:
        with raw.transaction():
            raw.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            raw.execute(_CREATE_RECORD)
            if raw.execute("SELECT 1 FROM schema_migrations WHERE name = %s", (names[-1],)).fetchone():
                continue
            raw.execute(sql.encode())  # no parameters: several statements in one
            stamp = datetime.now(UTC).isoformat()
            raw.cursor().executemany(
                "INSERT INTO schema_migrations (name, applied_at) VALUES (%s, %s)",
                [(name, stamp) for name in names],
            )
            applied += names
    return applied
