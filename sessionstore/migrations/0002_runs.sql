-- 0002: runs, so that a store shared by many machines also shows every run.
-- row is the run's manifest row as the command wrote it (JSON, verbatim; the
-- store does not interpret it); started_at orders the listing.
CREATE TABLE runs (
    run        TEXT NOT NULL PRIMARY KEY,
    started_at REAL NOT NULL,
    row        TEXT NOT NULL
);
