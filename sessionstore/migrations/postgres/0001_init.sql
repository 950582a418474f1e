-- 0001: the three tables of the seed's SqliteSessionStore, on PostgreSQL
-- (the same columns as migrations/0001_init.sql; see there).
--
-- entry is bytea: the bytes are exactly what the CLI wrote. There is no
-- covering (…, seq, facts) index as on SQLite: a facts value may exceed a
-- btree row; the planning pass reads facts from the heap, and the entries
-- themselves live out of line (TOAST), so that stays a narrow sweep.
CREATE TABLE entries (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    project_key text   NOT NULL,
    session_id  text   NOT NULL,
    subpath     text   NOT NULL DEFAULT '',
    uuid        text,
    mtime       bigint NOT NULL,
    facts       text,
    entry       bytea  NOT NULL
);
CREATE UNIQUE INDEX entries_uuid ON entries (project_key, session_id, subpath, uuid) WHERE uuid IS NOT NULL;
CREATE INDEX entries_key ON entries (project_key, session_id, subpath, seq);

CREATE TABLE meta (
    project_key text   NOT NULL,
    session_id  text   NOT NULL,
    subpath     text   NOT NULL DEFAULT '',
    mtime       bigint NOT NULL,
    PRIMARY KEY (project_key, session_id, subpath)
);
CREATE INDEX meta_mtime ON meta (mtime);

CREATE TABLE summaries (
    project_key text   NOT NULL,
    session_id  text   NOT NULL,
    mtime       bigint NOT NULL,
    data        text   NOT NULL,
    PRIMARY KEY (project_key, session_id)
);
CREATE INDEX summaries_mtime ON summaries (mtime);
