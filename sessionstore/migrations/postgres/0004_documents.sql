-- 0004: documents (see migrations/0003_documents.sql).
CREATE TABLE documents (
    flow       text   NOT NULL,
    name       text   NOT NULL,
    body       bytea  NOT NULL,
    updated_at bigint NOT NULL,
    PRIMARY KEY (flow, name)
);
