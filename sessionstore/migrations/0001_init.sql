-- 0001: the three tables of the seed's SqliteSessionStore.
--
-- entries   one row per transcript entry, in append order (seq); the bytes are
--           exactly what the CLI wrote and are never rewritten. uuid is NULL for
--           entries without one (queue-operation, last-prompt, ...); entries
--           with one are unique per key. facts is derived from entry on insert.
-- meta      one row per stored key (main transcript: subpath ''), stamped with
--           the store's monotonic clock at every write that adds entries.
-- summaries one row per main session: the folded summary sidecar, persisted
--           verbatim, stamped on the same clock as meta.
CREATE TABLE entries (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    project_key TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    subpath     TEXT    NOT NULL DEFAULT '',
    uuid        TEXT,
    mtime       INTEGER NOT NULL,
    facts       TEXT,              -- what the load pipeline needs of the entry (facts.go); before entry, so reading it skips the entry's pages
    entry       BLOB    NOT NULL
);
CREATE UNIQUE INDEX entries_uuid ON entries (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL;
-- Covers the planning pass of a resume (facts in seq order) without
-- touching the table's pages, which hold the large entries.
CREATE INDEX entries_key ON entries (project_key, session_id, subpath, seq, facts);

CREATE TABLE meta (
    project_key TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    subpath     TEXT    NOT NULL DEFAULT '',
    mtime       INTEGER NOT NULL,
    PRIMARY KEY (project_key, session_id, subpath)
);
CREATE INDEX meta_mtime ON meta (mtime);

CREATE TABLE summaries (
    project_key TEXT    NOT NULL,
    session_id  TEXT    NOT NULL,
    mtime       INTEGER NOT NULL,
    data        TEXT    NOT NULL,
    PRIMARY KEY (project_key, session_id)
);
CREATE INDEX summaries_mtime ON summaries (mtime);
