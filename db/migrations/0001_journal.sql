-- Brain's journal: sessions, hosts, the ordered record stream of every session, and tool calls.
-- Runs with search_path set to Brain's schema (default "brain"); nothing here names a schema.

-- Server processes sharing this database. A server whose heartbeat is stale is presumed dead:
-- its sessions may be taken over and its host connections are lost.
CREATE TABLE servers (
  id uuid PRIMARY KEY,
  started_at timestamptz NOT NULL DEFAULT now(),
  heartbeat_at timestamptz NOT NULL DEFAULT now(),
  stopped_at timestamptz
);

-- Application hosts. The token is shown once; only its SHA-256 is kept.
CREATE TABLE hosts (
  id uuid PRIMARY KEY,
  name text,
  token_hash bytea NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  last_connected_at timestamptz
);

-- One row per WebSocket a host opened, so calls dispatched on it can be found when it is lost.
CREATE TABLE host_connections (
  id uuid PRIMARY KEY,
  host_id uuid NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  server_id uuid NOT NULL REFERENCES servers (id),
  opened_at timestamptz NOT NULL DEFAULT now(),
  closed_at timestamptz
);
CREATE INDEX host_connections_open ON host_connections (server_id) WHERE closed_at IS NULL;

CREATE TABLE sessions (
  id uuid PRIMARY KEY,
  status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'ended')),
  host_id uuid REFERENCES hosts (id),
  -- Provider configuration without secrets.
  model jsonb NOT NULL,
  -- The tool placements as advertised at creation (name, description, schemas, environment).
  tools jsonb NOT NULL,
  metadata jsonb NOT NULL DEFAULT '{}',
  -- The last journal sequence; appends lock this row, which keeps seq dense and in commit order.
  last_seq bigint NOT NULL DEFAULT 0,
  -- The server running this session's Agentloop, and the fencing token of that ownership.
  owner_id uuid REFERENCES servers (id),
  owner_epoch bigint NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL DEFAULT now(),
  ended_at timestamptz
);
CREATE INDEX sessions_by_creation ON sessions (created_at DESC, id DESC);
CREATE INDEX sessions_by_owner ON sessions (owner_id) WHERE status = 'active';

CREATE TABLE records (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq bigint NOT NULL CHECK (seq > 0),
  kind text NOT NULL,
  payload jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (session_id, seq)
);

-- One row per tool call, keyed like its tool_call_started record. `state` moves
-- pending -> running -> returned -> ended, and never leaves ended: every terminal write is
-- conditional on state <> 'ended', so the first terminal cause wins inside the database.
CREATE TABLE calls (
  session_id uuid NOT NULL,
  seq bigint NOT NULL,
  tool text NOT NULL,
  activation_seq bigint NOT NULL,
  host_id uuid REFERENCES hosts (id),
  -- Set, and committed, before the invocation frame is sent: at most one send per call.
  connection_id uuid,
  state text NOT NULL CHECK (state IN ('pending', 'running', 'returned', 'ended')),
  -- The last published result while open; the terminal outcome once ended.
  outcome jsonb,
  deadline_at timestamptz,
  started_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  dispatched_at timestamptz,
  returned_at timestamptz,
  ended_at timestamptz,
  PRIMARY KEY (session_id, seq),
  FOREIGN KEY (session_id, seq) REFERENCES records (session_id, seq) ON DELETE CASCADE
);
CREATE INDEX calls_pending_by_host ON calls (host_id) WHERE state = 'pending';
CREATE INDEX calls_open_by_connection ON calls (connection_id) WHERE state IN ('running', 'returned');
CREATE INDEX calls_open_by_deadline ON calls (deadline_at) WHERE state <> 'ended';

-- Idempotency keys for session creation and messages: hashes only.
CREATE TABLE idempotency_keys (
  scope text NOT NULL,
  key_hash bytea NOT NULL,
  request_hash bytea NOT NULL,
  response jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (scope, key_hash)
);

-- The public, documented surface. The tables above may change; these views keep their columns.
CREATE VIEW journal AS
SELECT session_id, seq, kind, payload, created_at
FROM records;

CREATE VIEW tool_calls AS
SELECT
  c.session_id,
  c.seq,
  c.tool,
  c.state AS status,
  CASE WHEN c.state = 'ended' THEN c.outcome END AS outcome,
  c.started_at,
  c.ended_at,
  c.deadline_at,
  c.activation_seq,
  c.host_id
FROM calls c;

COMMENT ON VIEW journal IS 'Every session''s records in order: (session_id, seq) is unique and seq is dense per session.';
COMMENT ON VIEW tool_calls IS 'One row per tool call, named by the seq of its tool_call_started record.';
