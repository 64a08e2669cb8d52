-- Named hosts: a host that any number of application processes (replicas) serve with the same
-- tools, instead of the one connection of the client that created the session. A named host is a
-- `hosts` row with `named` set, unique per owner (an application token, or the operator: NULL).
-- It has no host token of its own: each replica registers with its owner's bearer token and gets
-- a replica token for its socket.
ALTER TABLE hosts ADD COLUMN named boolean NOT NULL DEFAULT false;
ALTER TABLE hosts ALTER COLUMN token_hash DROP NOT NULL;
ALTER TABLE hosts ADD CONSTRAINT hosts_named_has_name CHECK (NOT named OR name IS NOT NULL);
CREATE UNIQUE INDEX hosts_named_by_owner
  ON hosts ((COALESCE(token_id, '00000000-0000-0000-0000-000000000000'::uuid)), name) WHERE named;

-- A process serving a named host, with the tool placements it serves (checked against every
-- active session placed in the host each time it connects). Only the token's SHA-256 is kept.
CREATE TABLE host_replicas (
  id uuid PRIMARY KEY,
  host_id uuid NOT NULL REFERENCES hosts (id) ON DELETE CASCADE,
  token_hash bytea NOT NULL,
  tools jsonb NOT NULL,
  created_at timestamptz NOT NULL DEFAULT now()
);

-- A replica's socket: only connections with a replica take a named host's calls.
ALTER TABLE host_connections ADD COLUMN replica_id uuid REFERENCES host_replicas (id) ON DELETE CASCADE;
CREATE INDEX host_connections_open_by_host ON host_connections (host_id) WHERE closed_at IS NULL;

-- The named hosts a session places tools in: its host environment name -> the named host.
CREATE TABLE session_hosts (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  env_name text NOT NULL,
  host_id uuid NOT NULL REFERENCES hosts (id),
  PRIMARY KEY (session_id, env_name)
);
CREATE INDEX session_hosts_by_host ON session_hosts (host_id);
