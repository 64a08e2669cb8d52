-- An MCP task is found by its session and its id, never by the id alone (db/src/ops/mcp-tasks.ts):
-- its key now says so. On a Citus cluster (db/src/citus.ts) every table of a session's hot path
-- is distributed by session id, and Citus refuses a unique constraint without that column.
ALTER TABLE mcp_tasks DROP CONSTRAINT mcp_tasks_pkey;
ALTER TABLE mcp_tasks ADD PRIMARY KEY (session_id, id);
