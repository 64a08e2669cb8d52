-- Brain as an MCP server: tool calls an MCP client starts (POST /v1/sessions/:id/mcp), outside any
-- model turn, and the MCP tasks that name some of them.

-- Who started a call: the session's Agentloop (from a model turn), or an MCP client. An MCP call
-- belongs to no activation: it is its own budget unit, so its activation_seq is its own seq.
ALTER TABLE calls ADD COLUMN origin text NOT NULL DEFAULT 'agentloop' CHECK (origin IN ('agentloop', 'mcp'));

-- An MCP task is a name for one Brain tool call, and who may see it. Its status and result are the
-- call's, read from the journal: nothing here changes after the row is written (it commits in the
-- transaction of the call's tool_call_started), so a task outlives the server that created it.
CREATE TABLE mcp_tasks (
  id uuid PRIMARY KEY,
  session_id uuid NOT NULL,
  seq bigint NOT NULL,
  -- The principal that created it: an application token, or NULL for the operator. Only the same
  -- principal finds it; any other is told it does not exist.
  token_id uuid REFERENCES app_tokens (id),
  -- How long after creation it may be forgotten (NULL: kept with its session).
  ttl_ms bigint CHECK (ttl_ms IS NULL OR ttl_ms > 0),
  poll_interval_ms integer NOT NULL CHECK (poll_interval_ms > 0),
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  UNIQUE (session_id, seq),
  FOREIGN KEY (session_id, seq) REFERENCES calls (session_id, seq) ON DELETE CASCADE
);
-- tasks/list: one principal's tasks of one session, in creation (call) order.
CREATE INDEX mcp_tasks_by_owner
  ON mcp_tasks (session_id, (COALESCE(token_id, '00000000-0000-0000-0000-000000000000'::uuid)), seq);

-- The public view says where a call came from; an MCP call has no activation.
CREATE OR REPLACE VIEW tool_calls AS
SELECT
  c.session_id,
  c.seq,
  c.tool,
  c.state AS status,
  CASE WHEN c.state = 'ended' THEN c.outcome END AS outcome,
  c.started_at,
  c.ended_at,
  c.deadline_at,
  CASE WHEN c.origin = 'mcp' THEN NULL ELSE c.activation_seq END AS activation_seq,
  c.host_id,
  c.emissions_refused,
  c.origin
FROM calls c;
