-- WebAssembly components, session workspaces, and workers as executors of tool calls.

-- Component binaries, content-addressed and admitted (checked to be a component exporting the
-- brain:tool world) once.
CREATE TABLE components (
  sha256 text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
  bytes bytea NOT NULL,
  size integer NOT NULL,
  wit text NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A session's workspace: files an Environment may grant to its tools. It lives in Postgres so a
-- worker needs nothing but the database; a worker materialises it for the invocation.
CREATE TABLE workspace_files (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  path text NOT NULL CHECK (path ~ '^[^/].*' AND path !~ '(^|/)\.\.(/|$)'),
  content bytea NOT NULL,
  PRIMARY KEY (session_id, path)
);

-- Who runs a call: an application host, a component worker, or nobody (refused before dispatch).
ALTER TABLE calls ADD COLUMN executor text NOT NULL DEFAULT 'host' CHECK (executor IN ('host', 'component', 'none'));
CREATE INDEX calls_pending_components ON calls (session_id, seq) WHERE state = 'pending' AND executor = 'component';

-- Workers heartbeat like servers and hold a "connection" their claimed calls are dispatched on.
ALTER TABLE servers ADD COLUMN kind text NOT NULL DEFAULT 'server' CHECK (kind IN ('server', 'worker'));
ALTER TABLE host_connections ALTER COLUMN host_id DROP NOT NULL;
