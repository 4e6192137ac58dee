"""Named, append-only SQLite migrations. A shipped migration is never edited: add a new one.
SQLite's alone: PostgreSQL's schema has migrations of its own, with the same numbering."""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime

from cognitive_memory.core.terms import keyed_text, terms
from cognitive_memory.core.validation import check_key
from cognitive_memory.errors import InvalidInputError

__all__ = ["MIGRATIONS", "apply_migrations"]

# 0020_metadata_fields: a memory's (``{row}``) caller's fields as memory_fields rows, from
# ``json_each`` over its metadata (an object that parses; else nothing), the reserved keys of
# core/metadata.py (as they were then: a migration never changes) left out.
_FIELDS_OF = (
    "SELECT {row}.id, j.key, CASE j.type WHEN 'text' THEN 'text' WHEN 'true' THEN 'bool' "
    "WHEN 'false' THEN 'bool' ELSE 'number' END, j.value"
)
_FIELDS_EACH = (
    "json_each(CASE WHEN {row}.loader_type IS NOT NULL AND {row}.loader_type != 'session_lesson' THEN '{{}}' "
    "WHEN json_valid({row}.metadata) AND json_type({row}.metadata) = 'object' THEN {row}.metadata "
    "ELSE '{{}}' END) j WHERE j.type IN ('text', 'integer', 'real', 'true', 'false') AND j.key NOT IN ("
    "'importance_level', 'lesson_type', 'loader_type', 'session_context', 'session_id', 'source_info', "
    "'source_path', 'speaker')"
)

MIGRATIONS: tuple[tuple[str, str], ...] = (
    (
        "0001_memories",
        """
        CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            content TEXT NOT NULL,
            hierarchy_level INTEGER NOT NULL CHECK (hierarchy_level IN (0, 1, 2)),
            memory_type TEXT NOT NULL CHECK (memory_type IN ('episodic', 'semantic')),
            created_date TEXT NOT NULL,
            timestamp REAL NOT NULL,
            modified_date TEXT,
            source_date TEXT,
            last_accessed REAL,
            access_count INTEGER NOT NULL DEFAULT 0,
            importance_score REAL NOT NULL,
            strength REAL NOT NULL,
            metadata TEXT NOT NULL,
            tags TEXT NOT NULL,
            dimensions TEXT NOT NULL,
            loader_type TEXT,
            session_id TEXT,
            embedding BLOB NOT NULL
        );
        CREATE INDEX memories_level ON memories (hierarchy_level);
        CREATE INDEX memories_type ON memories (memory_type);
        CREATE INDEX memories_loader ON memories (loader_type);
        CREATE INDEX memories_timestamp ON memories (timestamp);
        CREATE TABLE vector_outbox (
            memory_id TEXT PRIMARY KEY,
            operation TEXT NOT NULL CHECK (operation IN ('upsert', 'delete')),
            queued_at REAL NOT NULL
        );
        CREATE TABLE store_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE activity (name TEXT PRIMARY KEY, at REAL NOT NULL);
        """,
    ),
    (
        "0002_lexical_index_and_connections",
        """
        CREATE VIRTUAL TABLE memory_fts USING fts5(
            content, context, tokenize = 'porter unicode61 remove_diacritics 2'
        );
        INSERT INTO memory_fts (rowid, content, context) SELECT rowid, content, '' FROM memories;
        CREATE TABLE connections (
            source_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            target_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN ('temporal', 'semantic', 'co_recall', 'source')),
            weight REAL NOT NULL CHECK (weight > 0),
            updated_at REAL NOT NULL,
            PRIMARY KEY (source_id, target_id, kind)
        );
        CREATE INDEX connections_target ON connections (target_id);
        CREATE INDEX memories_session ON memories (session_id, timestamp);
        """,
    ),
    (
        "0003_sources_and_structure",
        """
        CREATE TABLE sources (
            key TEXT PRIMARY KEY,
            loader_type TEXT NOT NULL,
            fingerprint TEXT NOT NULL,
            state TEXT NOT NULL DEFAULT '{}',
            loaded_at REAL NOT NULL
        );
        CREATE TABLE source_chunks (
            memory_id TEXT PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            source_key TEXT NOT NULL,
            chunk_key TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            position INTEGER NOT NULL,
            UNIQUE (source_key, chunk_key)
        );
        CREATE TABLE source_links (
            memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            target_key TEXT NOT NULL,
            PRIMARY KEY (memory_id, target_key)
        );
        CREATE INDEX source_links_target ON source_links (target_key);
        CREATE TABLE connections_0003 (
            source_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            target_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN (
                'temporal', 'semantic', 'co_recall', 'source', 'parent', 'child', 'sibling', 'link'
            )),
            weight REAL NOT NULL CHECK (weight > 0),
            updated_at REAL NOT NULL,
            PRIMARY KEY (source_id, target_id, kind)
        );
        INSERT INTO connections_0003 SELECT source_id, target_id, kind, weight, updated_at FROM connections;
        DROP TABLE connections;
        ALTER TABLE connections_0003 RENAME TO connections;
        CREATE INDEX connections_target ON connections (target_id);
        """,
    ),
    (
        "0004_source_digests",
        """
        CREATE TABLE source_digests (
            source_key TEXT NOT NULL,
            item_key TEXT NOT NULL,
            seq INTEGER NOT NULL,
            data TEXT NOT NULL,
            PRIMARY KEY (source_key, item_key)
        );
        CREATE INDEX source_digests_order ON source_digests (source_key, seq);
        """,
    ),
    (
        # memory_status counts memories by level, type and loader: a covering index makes that a
        # scan of small index entries instead of every row (2.5 ms instead of 11.5 at 10k).
        "0005_kind_counts_index",
        """
        CREATE INDEX memories_kinds ON memories (hierarchy_level, memory_type, loader_type);
        DROP INDEX memories_level;
        """,
    ),
    (
        # Projects, duplicate detection, versions of updated memories and typed links between
        # memories. Existing memories join the default project; their index payloads are queued
        # for rewriting (the outbox replays them) so the project filter sees them. content_key is
        # filled by SQLiteMemoryStore at start-up (a hash SQLite cannot compute).
        "0006_projects_versions_relations",
        """
        ALTER TABLE memories ADD COLUMN project TEXT NOT NULL DEFAULT 'default';
        ALTER TABLE memories ADD COLUMN content_key TEXT;
        CREATE INDEX memories_project ON memories (project, timestamp);
        CREATE INDEX memories_content_key ON memories (content_key);
        CREATE TABLE memory_versions (
            memory_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            version INTEGER NOT NULL,
            content TEXT NOT NULL,
            hierarchy_level INTEGER NOT NULL,
            memory_type TEXT NOT NULL,
            importance_score REAL NOT NULL,
            tags TEXT NOT NULL,
            metadata TEXT NOT NULL,
            project TEXT NOT NULL,
            replaced_at REAL NOT NULL,
            replaced_by_session TEXT,
            PRIMARY KEY (memory_id, version)
        );
        CREATE TABLE relations (
            from_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            to_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            relation TEXT NOT NULL CHECK (relation IN (
                'relates_to', 'supersedes', 'contradicts', 'caused_by', 'example_of', 'part_of'
            )),
            note TEXT,
            created_at REAL NOT NULL,
            session_id TEXT,
            PRIMARY KEY (from_id, to_id, relation),
            CHECK (from_id != to_id)
        );
        CREATE INDEX relations_to ON relations (to_id);
        INSERT OR REPLACE INTO vector_outbox (memory_id, operation, queued_at)
            SELECT id, 'upsert', CAST(strftime('%s', 'now') AS REAL) FROM memories;
        """,
    ),
    (
        # Forgotten and pruned memories wait here, restorable, until purged. ``row`` holds every
        # column of the memory but the embedding as JSON (so later columns are kept too); links,
        # versions and connections are kept beside it. Purging is one DELETE on trashed_at.
        "0007_trash",
        """
        CREATE TABLE trash (
            id TEXT PRIMARY KEY,
            content TEXT NOT NULL,
            project TEXT NOT NULL,
            trashed_at REAL NOT NULL,
            reason TEXT NOT NULL,
            trashed_by TEXT,
            row TEXT NOT NULL,
            embedding BLOB NOT NULL,
            relations TEXT NOT NULL,
            versions TEXT NOT NULL,
            connections TEXT NOT NULL
        );
        CREATE INDEX trash_trashed_at ON trash (trashed_at);
        """,
    ),
    (
        # A memory merged into a near duplicate by `memory_system consolidate` records which one.
        "0008_trash_consolidated_into",
        """
        ALTER TABLE trash ADD COLUMN consolidated_into TEXT;
        CREATE INDEX trash_consolidated_into ON trash (consolidated_into);
        """,
    ),
    (
        # The terms of each memory's own text after the lexical index's tokenizer (space-separated),
        # read with its row by recall's word shares instead of tokenizing candidates at every recall.
        # Filled from the lexical index itself; storage/words.py keeps it current.
        "0009_memory_words",
        """
        CREATE TABLE memory_words (memory_rowid INTEGER PRIMARY KEY, terms TEXT NOT NULL);
        CREATE VIRTUAL TABLE temp.migration_instances USING fts5vocab(main, memory_fts, 'instance');
        INSERT INTO memory_words (memory_rowid, terms)
            SELECT doc, group_concat(term, ' ') FROM (
                SELECT DISTINCT doc, term FROM temp.migration_instances
                WHERE col = 'content' ORDER BY doc, term
            ) GROUP BY doc;
        DROP TABLE temp.migration_instances;
        """,
    ),
    (
        # Recall reads every link of about a hundred candidates at once: kept in primary-key order
        # (WITHOUT ROWID), a memory's links sit together with their weights, where the rowid table
        # sent each of the ~700 index entries to a row elsewhere (1.05 -> 0.6 ms at 10,000 turns).
        "0010_connections_clustered",
        """
        CREATE TABLE connections_0010 (
            source_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            target_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            kind TEXT NOT NULL CHECK (kind IN (
                'temporal', 'semantic', 'co_recall', 'source', 'parent', 'child', 'sibling', 'link'
            )),
            weight REAL NOT NULL CHECK (weight > 0),
            updated_at REAL NOT NULL,
            PRIMARY KEY (source_id, target_id, kind)
        ) WITHOUT ROWID;
        INSERT INTO connections_0010 SELECT source_id, target_id, kind, weight, updated_at FROM connections;
        DROP TABLE connections;
        ALTER TABLE connections_0010 RENAME TO connections;
        CREATE INDEX connections_target ON connections (target_id);
        """,
    ),
    (
        # A memory forgotten twice (forget, import it again, forget) had its first trash entry
        # replaced, text and all. Each entry now has its own number (AUTOINCREMENT: never reused
        # after a purge, so a restore by number cannot reach a later entry); ``id`` is the memory's
        # and may repeat. A prune's confirm token is single-use: the digests of used tokens stay
        # until they would have expired anyway.
        "0011_trash_entries_and_used_prune_tokens",
        """
        CREATE TABLE trash_0011 (
            entry INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL,
            content TEXT NOT NULL,
            project TEXT NOT NULL,
            trashed_at REAL NOT NULL,
            reason TEXT NOT NULL,
            trashed_by TEXT,
            row TEXT NOT NULL,
            embedding BLOB NOT NULL,
            relations TEXT NOT NULL,
            versions TEXT NOT NULL,
            connections TEXT NOT NULL,
            consolidated_into TEXT
        );
        INSERT INTO trash_0011 (
            id, content, project, trashed_at, reason, trashed_by, row, embedding, relations, versions,
            connections, consolidated_into
        ) SELECT id, content, project, trashed_at, reason, trashed_by, row, embedding, relations, versions,
            connections, consolidated_into FROM trash ORDER BY trashed_at, id;
        DROP TABLE trash;
        ALTER TABLE trash_0011 RENAME TO trash;
        CREATE INDEX trash_trashed_at ON trash (trashed_at);
        CREATE INDEX trash_memory ON trash (id, entry);
        CREATE INDEX trash_consolidated_into ON trash (consolidated_into);
        CREATE TABLE prune_tokens_used (digest TEXT PRIMARY KEY, expires_at REAL NOT NULL);
        """,
    ),
    (
        # Memories whose row cannot be read or indexed (an id that is not a UUID, JSON that does
        # not parse, an embedding of another size), moved here by `doctor --repair` and never
        # purged. ``row`` holds every column as JSON (the embedding as hex), ``relations`` and
        # ``versions`` its links and earlier versions (storage/damaged.py).
        "0012_set_aside",
        """
        CREATE TABLE set_aside (
            id TEXT NOT NULL,
            content TEXT,
            problem TEXT NOT NULL,
            set_aside_at REAL NOT NULL,
            row TEXT NOT NULL,
            relations TEXT NOT NULL,
            versions TEXT NOT NULL
        );
        CREATE INDEX set_aside_id ON set_aside (id);
        """,
    ),
    (
        # The speaker and the origin (the file a note was loaded from) become columns, and the
        # source kind lives only in loader_type: the keys leave ``metadata``, which keeps the rest.
        # A key leaves only when its value is one a record holds (a text, a known kind), as
        # core/memory.py's split_metadata reads an export line; an unknown loader_type becomes
        # NULL. Trash entries (``row``: the columns as JSON, metadata as a JSON text) move the same
        # way, so a restore brings the columns back (``|| ''`` keeps the metadata a JSON text there:
        # json_set would nest json_remove's JSON as an object).
        "0013_speaker_origin_columns",
        """
        ALTER TABLE memories ADD COLUMN speaker TEXT;
        ALTER TABLE memories ADD COLUMN origin TEXT;
        UPDATE memories SET speaker = metadata ->> '$.speaker', metadata = json_remove(metadata, '$.speaker')
            WHERE CASE WHEN json_valid(metadata) THEN json_type(metadata, '$.speaker') = 'text' END;
        UPDATE memories SET origin = metadata ->> '$.source_path',
            metadata = json_remove(metadata, '$.source_path')
            WHERE CASE WHEN json_valid(metadata) THEN json_type(metadata, '$.source_path') = 'text' END;
        UPDATE memories SET metadata = json_remove(metadata, '$.loader_type')
            WHERE CASE WHEN json_valid(metadata)
                THEN metadata ->> '$.loader_type' IN ('markdown', 'git', 'session_lesson') END;
        UPDATE memories SET loader_type = NULL
            WHERE loader_type NOT IN ('markdown', 'git', 'session_lesson');
        UPDATE trash SET row = json_set(row, '$.speaker', (row ->> '$.metadata') ->> '$.speaker',
            '$.metadata', json_remove(row ->> '$.metadata', '$.speaker') || '')
            WHERE CASE WHEN json_valid(row) AND json_valid(row ->> '$.metadata')
                THEN json_type(row ->> '$.metadata', '$.speaker') = 'text' END;
        UPDATE trash SET row = json_set(row, '$.origin', (row ->> '$.metadata') ->> '$.source_path',
            '$.metadata', json_remove(row ->> '$.metadata', '$.source_path') || '')
            WHERE CASE WHEN json_valid(row) AND json_valid(row ->> '$.metadata')
                THEN json_type(row ->> '$.metadata', '$.source_path') = 'text' END;
        UPDATE trash SET row = json_set(row,
            '$.metadata', json_remove(row ->> '$.metadata', '$.loader_type') || '')
            WHERE CASE WHEN json_valid(row) AND json_valid(row ->> '$.metadata')
                THEN (row ->> '$.metadata') ->> '$.loader_type' IN ('markdown', 'git', 'session_lesson') END;
        UPDATE trash SET row = json_set(row, '$.loader_type', NULL)
            WHERE CASE WHEN json_valid(row)
                THEN row ->> '$.loader_type' NOT IN ('markdown', 'git', 'session_lesson') END
        """,
    ),
    (
        # A key names one live memory of its project; the trash keeps a forgotten memory's key in
        # its row, free for another memory meanwhile.
        "0014_memory_keys",
        """
        ALTER TABLE memories ADD COLUMN memory_key TEXT;
        CREATE UNIQUE INDEX memories_key ON memories (project, memory_key) WHERE memory_key IS NOT NULL
        """,
    ),
    (
        # How many memories hold each term of their own text, and each term of letters a-z (three
        # to 64) under itself and its spellings with one letter dropped: recall corrects a
        # misspelt query word against them (storage/vocabulary.py, core/spelling.py).
        "0015_vocabulary",
        """
        CREATE TABLE vocabulary (term TEXT PRIMARY KEY, memories INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE vocabulary_deletes (
            variant TEXT NOT NULL,
            term TEXT NOT NULL,
            PRIMARY KEY (variant, term)
        ) WITHOUT ROWID;
        INSERT INTO vocabulary (term, memories)
            SELECT value, count(*) FROM memory_words, json_each('["' || replace(terms, ' ', '","') || '"]')
            WHERE value != '' GROUP BY value;
        WITH RECURSIVE position (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM position WHERE i < 64)
        INSERT OR IGNORE INTO vocabulary_deletes (variant, term)
            SELECT term, term FROM vocabulary
            WHERE length(term) BETWEEN 3 AND 64 AND term NOT GLOB '*[^a-zA-Z]*'
            UNION ALL
            SELECT substr(term, 1, i - 1) || substr(term, i + 1), term FROM vocabulary, position
            WHERE length(term) BETWEEN 3 AND 64 AND term NOT GLOB '*[^a-zA-Z]*' AND i <= length(term)
        """,
    ),
    (
        # How many memories hold each term in their own text or their neighbours' in time, and how
        # many memories there are: recall weighs a word's rarity by point reads of them instead of
        # FTS5's term lists (storage/vocabulary.py). Each memory keeps its neighbours' terms beside
        # its own, so a write counts what changed. Filled from the lexical index itself.
        "0016_document_frequencies",
        """
        ALTER TABLE memory_words ADD COLUMN context TEXT NOT NULL DEFAULT '';
        CREATE TABLE document_frequencies (term TEXT PRIMARY KEY, memories INTEGER NOT NULL) WITHOUT ROWID;
        CREATE VIRTUAL TABLE temp.migration_rows USING fts5vocab(main, memory_fts, 'row');
        INSERT INTO document_frequencies (term, memories) SELECT term, doc FROM temp.migration_rows;
        DROP TABLE temp.migration_rows;
        CREATE VIRTUAL TABLE temp.migration_instances USING fts5vocab(main, memory_fts, 'instance');
        CREATE TEMP TABLE migration_context AS
            SELECT doc, group_concat(term, ' ') AS terms FROM (
                SELECT DISTINCT doc, term FROM temp.migration_instances
                WHERE col = 'context' ORDER BY doc, term
            ) GROUP BY doc;
        DROP TABLE temp.migration_instances;
        UPDATE memory_words SET context = migration_context.terms
            FROM migration_context WHERE migration_context.doc = memory_words.memory_rowid;
        DROP TABLE migration_context;
        INSERT INTO store_meta (key, value) SELECT 'word_documents', count(*) FROM memory_words
        """,
    ),
    (
        # The vector index holds every memory's words (sparse vectors) when the store is new; a
        # store made before has them built in the background (storage/indexed_words.py).
        "0017_words_indexed",
        """
        INSERT INTO store_meta (key, value)
            SELECT 'words_indexed', '1' WHERE NOT EXISTS (SELECT 1 FROM memories)
        """,
    ),
    (
        # Keys are compared folded (NFKC and case folding: core.validation.fold_key), where they
        # were lower-cased. Each key becomes its folded form; of the keys of a project that fold
        # alike, the one already folded (else the oldest memory's) keeps it and the others lose
        # theirs (the memories stay); a key the rule cannot take is dropped. The trash's rows too.
        "0018_folded_keys",
        """
        CREATE TEMP TABLE migration_keys AS
            SELECT id, folded, row_number() OVER (
                PARTITION BY project, folded ORDER BY folded IS memory_key DESC, timestamp, id
            ) AS rank
            FROM (SELECT id, project, memory_key, timestamp, fold_key(memory_key) AS folded
                  FROM memories WHERE memory_key IS NOT NULL);
        UPDATE memories SET memory_key = NULL
            WHERE id IN (SELECT id FROM migration_keys WHERE rank > 1 OR folded IS NULL);
        UPDATE memories SET memory_key = migration_keys.folded FROM migration_keys
            WHERE migration_keys.id = memories.id AND migration_keys.rank = 1
            AND migration_keys.folded IS NOT memories.memory_key;
        DROP TABLE migration_keys;
        UPDATE trash SET row = json_set(row, '$.memory_key', fold_key(row ->> '$.memory_key'))
            WHERE CASE WHEN json_valid(row) THEN row ->> '$.memory_key' IS NOT NULL END
        """,
    ),
    (
        # The change log (storage/change_log.py): every write of a memory, its links or its words
        # appends the memory's id, with a sequence number that only grows, in the write's own
        # transaction, so whatever follows the store (a process's ranking state, an index, another
        # server) reads what changed since it last looked. Triggers write it, so no write path can
        # forget to (PostgreSQL has the same triggers). Links are stored in both directions in
        # ``connections``, so its source is logged; a relation logs both ends. No AUTOINCREMENT: it
        # writes sqlite_sequence at every row (3,000 stores took 6.81 s against 6.50 s without it,
        # 6.11 s without the log); a row takes the largest seq + 1, and trimming always keeps the
        # newest row, so seq only grows.
        "0019_change_log",
        """
        CREATE TABLE change_log (
            seq INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('memory', 'links', 'words'))
        );
        CREATE TRIGGER change_log_memory_added AFTER INSERT ON memories BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.id, 'memory');
        END;
        CREATE TRIGGER change_log_memory_changed AFTER UPDATE ON memories BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.id, 'memory');
        END;
        CREATE TRIGGER change_log_memory_removed AFTER DELETE ON memories BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (OLD.id, 'memory');
        END;
        CREATE TRIGGER change_log_connection_added AFTER INSERT ON connections BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.source_id, 'links');
        END;
        CREATE TRIGGER change_log_connection_changed AFTER UPDATE ON connections BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.source_id, 'links');
        END;
        CREATE TRIGGER change_log_connection_removed AFTER DELETE ON connections BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (OLD.source_id, 'links');
        END;
        CREATE TRIGGER change_log_relation_added AFTER INSERT ON relations BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.from_id, 'links'), (NEW.to_id, 'links');
        END;
        CREATE TRIGGER change_log_relation_changed AFTER UPDATE ON relations BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.from_id, 'links'), (NEW.to_id, 'links');
        END;
        CREATE TRIGGER change_log_relation_removed AFTER DELETE ON relations BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (OLD.from_id, 'links'), (OLD.to_id, 'links');
        END;
        CREATE TRIGGER change_log_words_added AFTER INSERT ON memory_words BEGIN
            INSERT INTO change_log (memory_id, kind)
                SELECT id, 'words' FROM memories WHERE rowid = NEW.memory_rowid;
        END;
        CREATE TRIGGER change_log_words_changed AFTER UPDATE ON memory_words BEGIN
            INSERT INTO change_log (memory_id, kind)
                SELECT id, 'words' FROM memories WHERE rowid = NEW.memory_rowid;
        END;
        CREATE TRIGGER change_log_words_removed AFTER DELETE ON memory_words BEGIN
            INSERT INTO change_log (memory_id, kind)
                SELECT id, 'words' FROM memories WHERE rowid = OLD.memory_rowid;
        END
        """,
    ),
    (
        # The caller's fields (core/metadata.py) that filters.metadata matches: each top-level
        # string, number and boolean of the metadata of a memory that was not loaded from a
        # source, without the reserved keys, kept in step by triggers on every write path.
        "0020_metadata_fields",
        """
        CREATE TABLE memory_fields (
            memory_id TEXT NOT NULL,
            name TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('text', 'number', 'bool')),
            value
        );
        CREATE INDEX memory_fields_match ON memory_fields (name, kind, value);
        CREATE INDEX memory_fields_memory ON memory_fields (memory_id);
        """
        + "INSERT INTO memory_fields (memory_id, name, kind, value) "
        + _FIELDS_OF.format(row="m")
        + " FROM memories m, "
        + _FIELDS_EACH.format(row="m")
        + ";"
        + "CREATE TRIGGER memory_fields_added AFTER INSERT ON memories BEGIN "
        + "INSERT INTO memory_fields (memory_id, name, kind, value) "
        + _FIELDS_OF.format(row="NEW")
        + " FROM "
        + _FIELDS_EACH.format(row="NEW")
        + "; END;"
        + "CREATE TRIGGER memory_fields_changed AFTER UPDATE OF metadata, loader_type ON memories BEGIN "
        + "DELETE FROM memory_fields WHERE memory_id = OLD.id; "
        + "INSERT INTO memory_fields (memory_id, name, kind, value) "
        + _FIELDS_OF.format(row="NEW")
        + " FROM "
        + _FIELDS_EACH.format(row="NEW")
        + "; END;"
        + "CREATE TRIGGER memory_fields_removed AFTER DELETE ON memories BEGIN "
        + "DELETE FROM memory_fields WHERE memory_id = OLD.id; END",
    ),
    (
        # Relations beyond the first six: a documented set (core/links.py) or the caller's own
        # name within the rule the CHECK states, and a weight (0..1) that activation spreading
        # reads, 0.8 for every link made before (what activation gave them). SQLite cannot
        # change a CHECK, so the table is made again; dropping it dropped its change log triggers
        # (0019), made again here exactly as they were.
        "0021_relation_names_and_weights",
        """
        CREATE TABLE relations_new (
            from_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            to_id TEXT NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            relation TEXT NOT NULL CHECK (
                length(relation) BETWEEN 2 AND 40 AND relation GLOB '[a-z]*'
                AND relation NOT GLOB '*[^a-z0-9_]*'
            ),
            note TEXT,
            created_at REAL NOT NULL,
            session_id TEXT,
            weight REAL NOT NULL DEFAULT 0.8 CHECK (weight >= 0 AND weight <= 1),
            PRIMARY KEY (from_id, to_id, relation),
            CHECK (from_id != to_id)
        );
        INSERT INTO relations_new (from_id, to_id, relation, note, created_at, session_id)
            SELECT from_id, to_id, relation, note, created_at, session_id FROM relations;
        DROP TABLE relations;
        ALTER TABLE relations_new RENAME TO relations;
        CREATE INDEX relations_to ON relations (to_id);
        CREATE TRIGGER change_log_relation_added AFTER INSERT ON relations BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.from_id, 'links'), (NEW.to_id, 'links');
        END;
        CREATE TRIGGER change_log_relation_changed AFTER UPDATE ON relations BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.from_id, 'links'), (NEW.to_id, 'links');
        END;
        CREATE TRIGGER change_log_relation_removed AFTER DELETE ON relations BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (OLD.from_id, 'links'), (OLD.to_id, 'links');
        END
        """,
    ),
    (
        # A key's words are its memory's own (core/terms.keyed_text): each keyed memory's lexical
        # entry holds its text, then its key on a line of its own; its kept terms (keyed_terms:
        # the distinct terms of both) are counted in the vocabulary and the document frequencies
        # where they are new to it, and its vector's write is queued, so the words the index
        # holds follow when the outbox is replayed at start-up. A query that is a whole key finds
        # its memories in every project by the index on keys alone.
        "0022_key_words",
        """
        CREATE INDEX memories_key_alone ON memories (memory_key) WHERE memory_key IS NOT NULL;
        CREATE TEMP TABLE migration_keyed AS
            SELECT m.rowid AS doc, m.id AS id, w.terms AS old_terms, w.context AS context,
                keyed_terms(m.content, m.memory_key) AS new_terms
            FROM memories m JOIN memory_words w ON w.memory_rowid = m.rowid
            WHERE m.memory_key IS NOT NULL;
        UPDATE memory_fts SET content = (
                SELECT m.content || char(10) || m.memory_key FROM memories m WHERE m.rowid = memory_fts.rowid
            ) WHERE rowid IN (SELECT doc FROM migration_keyed);
        CREATE TEMP TABLE migration_added AS
            SELECT k.doc, j.value AS term, instr(' ' || k.context || ' ', ' ' || j.value || ' ') > 0 AS held
            FROM migration_keyed k, json_each('["' || replace(k.new_terms, ' ', '","') || '"]') j
            WHERE j.value != '' AND instr(' ' || k.old_terms || ' ', ' ' || j.value || ' ') = 0;
        INSERT INTO vocabulary (term, memories)
            SELECT term, count(*) FROM migration_added WHERE true GROUP BY term
            ON CONFLICT (term) DO UPDATE SET memories = memories + excluded.memories;
        WITH RECURSIVE position (i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM position WHERE i < 64),
            added (term) AS (SELECT DISTINCT term FROM migration_added)
        INSERT OR IGNORE INTO vocabulary_deletes (variant, term)
            SELECT term, term FROM added
            WHERE length(term) BETWEEN 3 AND 64 AND term NOT GLOB '*[^a-zA-Z]*'
            UNION ALL
            SELECT substr(term, 1, i - 1) || substr(term, i + 1), term FROM added, position
            WHERE length(term) BETWEEN 3 AND 64 AND term NOT GLOB '*[^a-zA-Z]*' AND i <= length(term);
        INSERT INTO document_frequencies (term, memories)
            SELECT term, count(*) FROM migration_added WHERE NOT held GROUP BY term
            ON CONFLICT (term) DO UPDATE SET memories = memories + excluded.memories;
        UPDATE memory_words SET terms = migration_keyed.new_terms FROM migration_keyed
            WHERE migration_keyed.doc = memory_words.memory_rowid
            AND migration_keyed.new_terms != memory_words.terms;
        INSERT OR REPLACE INTO vector_outbox (memory_id, operation, queued_at)
            SELECT id, 'upsert', (julianday('now') - 2440587.5) * 86400.0 FROM migration_keyed;
        DROP TABLE migration_added;
        DROP TABLE migration_keyed
        """,
    ),
    (
        # A memory's uses (access_count and last_accessed, what a recall's bookkeeping writes) are
        # logged as 'uses', not 'memory': they change no point of the vector index, so what keeps
        # an index in step (replicas/index_following.py) passes over them, while the ranking state
        # reads them. An update that changes any other column logs 'memory', as before (every
        # column is compared: tests/integration/storage/test_change_log_kinds.py fails for a new
        # column left out). SQLite cannot widen a CHECK in place: the table is made again, under
        # the legacy rename, which leaves the other tables' triggers that write it as they are.
        "0023_change_log_uses",
        """
        PRAGMA legacy_alter_table = ON;
        CREATE TABLE change_log_0023 (
            seq INTEGER PRIMARY KEY,
            memory_id TEXT NOT NULL,
            kind TEXT NOT NULL CHECK (kind IN ('memory', 'links', 'words', 'uses'))
        );
        INSERT INTO change_log_0023 (seq, memory_id, kind) SELECT seq, memory_id, kind FROM change_log;
        DROP TABLE change_log;
        ALTER TABLE change_log_0023 RENAME TO change_log;
        PRAGMA legacy_alter_table = OFF;
        DROP TRIGGER change_log_memory_changed;
        CREATE TRIGGER change_log_memory_changed AFTER UPDATE ON memories BEGIN
            INSERT INTO change_log (memory_id, kind) VALUES (NEW.id, CASE WHEN
                NEW.id IS OLD.id AND NEW.content IS OLD.content
                AND NEW.hierarchy_level IS OLD.hierarchy_level AND NEW.memory_type IS OLD.memory_type
                AND NEW.created_date IS OLD.created_date AND NEW.timestamp IS OLD.timestamp
                AND NEW.modified_date IS OLD.modified_date AND NEW.source_date IS OLD.source_date
                AND NEW.importance_score IS OLD.importance_score AND NEW.strength IS OLD.strength
                AND NEW.metadata IS OLD.metadata AND NEW.tags IS OLD.tags
                AND NEW.dimensions IS OLD.dimensions AND NEW.loader_type IS OLD.loader_type
                AND NEW.session_id IS OLD.session_id AND NEW.embedding IS OLD.embedding
                AND NEW.project IS OLD.project AND NEW.content_key IS OLD.content_key
                AND NEW.speaker IS OLD.speaker AND NEW.origin IS OLD.origin
                AND NEW.memory_key IS OLD.memory_key
                THEN 'uses' ELSE 'memory' END);
        END
        """,
    ),
)


def apply_migrations(conn: sqlite3.Connection, count: int | None = None) -> list[str]:
    """Apply every migration not yet recorded (only the first ``count``, if given), each in its
    own IMMEDIATE transaction.

    The check happens inside the transaction, so processes starting together on a new database
    apply each migration exactly once (the others wait on the write lock, then see it recorded).
    """
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)"
    )
    conn.create_function("fold_key", 1, _folded_key, deterministic=True)
    conn.create_function("keyed_terms", 2, _keyed_terms, deterministic=True)
    applied = []
    for name, sql in MIGRATIONS[:count]:
        conn.execute("BEGIN IMMEDIATE")
        try:
            if conn.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone() is None:
                for statement in _statements(sql):
                    conn.execute(statement)
                stamp = datetime.now(UTC).isoformat()
                conn.execute("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, stamp))
                applied.append(name)
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return applied


def _statements(sql: str) -> list[str]:
    """Split a migration into statements: at each ';' that ends one (a trigger's body holds
    several, which ``sqlite3.complete_statement`` knows)."""
    statements: list[str] = []
    pending = ""
    for part in sql.split(";"):
        pending += part + ";"
        if sqlite3.complete_statement(pending):
            statements.append(pending.strip().removesuffix(";").strip())
            pending = ""
    tail = pending.removesuffix(";").strip()
    return [statement for statement in [*statements, tail] if statement]


def _folded_key(key: object) -> str | None:
    """A stored key in today's form (``check_key``); None for one the rule cannot take."""
    if not isinstance(key, str):
        return None
    try:
        return check_key(key)
    except InvalidInputError:
        return None


def _keyed_terms(content: object, key: object) -> str:
    """A keyed memory's kept terms (``memory_words.terms``): the distinct terms of its text and
    key (``terms.keyed_text``), sorted, one space between."""
    text = keyed_text(str(content), key if isinstance(key, str) else None)
    return " ".join(sorted(set(terms(text))))
