-- 0003: a flow's documents (brief, goal, Q&A log, handoffs, lineage), so a
-- flow continues on a machine whose workspace is a fresh checkout. flow
-- names the flow (a queued flow: its job), name the document's path
-- relative to the workbench ("notes/需求.md", "lineage.json"); body is the
-- file as it was, verbatim.
CREATE TABLE documents (
    flow       TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    body       BLOB    NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (flow, name)
);
