-- 0002: runs (see migrations/0002_runs.sql).
CREATE TABLE runs (
    run        text             NOT NULL PRIMARY KEY,
    started_at double precision NOT NULL,
    row        text             NOT NULL
);
