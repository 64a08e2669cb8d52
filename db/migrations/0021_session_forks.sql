-- Forks: a session made from another's journal up to a sequence (POST /v1/sessions/:id/fork). The
-- lineage stays on the fork's row; the source may be deleted later, so it is not a foreign key.
ALTER TABLE sessions ADD COLUMN forked_from uuid, ADD COLUMN forked_at bigint;
CREATE INDEX sessions_forked_from ON sessions (forked_from) WHERE forked_from IS NOT NULL;
