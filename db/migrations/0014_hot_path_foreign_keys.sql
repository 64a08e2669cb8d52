-- The hot tables keep their integrity without foreign keys (issue 14). A foreign key costs a
-- trigger query per inserted row (a key-share lock on the parent row): it was most of the
-- statements Postgres ran per turn and per tool call. What the dropped keys promised holds by how
-- these tables are written and deleted:
--
-- * Every insert into records, calls, activation_budgets and tool_model_calls happens in a statement
--   that has first locked its session's row: appends insert `FROM` their own
--   `UPDATE sessions SET last_seq ...`; a transition, a tool's model call and an Environment
--   operation take `FOR KEY SHARE` of the session row before charging a budget (the lock the
--   foreign key's check took, now once per statement instead of once per row). For a session that
--   is gone, or being deleted, such a statement waits for the deletion and then writes nothing.
-- * Deleting a session (`DELETE /v1/sessions/:id`, retention) first locks the session row
--   `FOR UPDATE`, then deletes its calls, journal, budgets and tool model calls by session_id in a
--   later statement of the same transaction (whose snapshot sees every child committed before the
--   lock), with the row (`db/src/ops/session-delete.ts`). Tables written off the hot path keep their
--   keys and cascades.
-- * A call's host is its session's host or one of its named hosts (sessions.host_id and
--   session_hosts.host_id, still foreign keys), and retention deletes a host only when no session
--   and no call names it.
--
-- db/test/hot-path-integrity.test.ts proves each point against a real Postgres: no orphan after a
-- deletion, nothing written for a missing session, and none under concurrent deletes and appends.

-- records -> sessions (ON DELETE CASCADE): one check per journal record.
ALTER TABLE records DROP CONSTRAINT records_session_id_fkey;
-- calls -> records (ON DELETE CASCADE): one check per call; the call row is inserted by the same
-- statement as its tool_call_started record.
ALTER TABLE calls DROP CONSTRAINT calls_session_id_seq_fkey;
-- calls -> hosts: one check per call.
ALTER TABLE calls DROP CONSTRAINT calls_host_id_fkey;
-- activation_budgets -> sessions (ON DELETE CASCADE): one check per charged result or model call.
ALTER TABLE activation_budgets DROP CONSTRAINT activation_budgets_session_id_fkey;
-- tool_model_calls -> sessions (ON DELETE CASCADE): one check per model call a tool makes.
ALTER TABLE tool_model_calls DROP CONSTRAINT tool_model_calls_session_id_fkey;

-- Kept: sessions -> hosts, servers, app_tokens; host_connections, host_replicas, session_hosts,
-- workspace_files, session_secrets, environments, trace_cursors -> their parents; mcp_tasks -> calls
-- (ON DELETE CASCADE, so deleting a call still deletes its task). None is written per record.
