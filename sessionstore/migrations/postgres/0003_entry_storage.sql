-- 0003: keep entries out of line but uncompressed (STORAGE EXTERNAL). A
-- resume reads a whole transcript in one sweep; decompressing every large
-- entry (pglz) cost more than reading its bytes. Applies to rows written
-- from now on.
ALTER TABLE entries ALTER COLUMN entry SET STORAGE EXTERNAL;
