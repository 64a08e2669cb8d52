-- Application tokens: scoped credentials for the applications that create sessions. The operator
-- token (BRAIN_API_TOKEN) stays outside the database; these are created and revoked by it.

-- The token is shown once; only its SHA-256 is kept. A revoked token keeps its row, so the
-- sessions and hosts it created still name it (and the operator can see whose they were).
CREATE TABLE app_tokens (
  id uuid PRIMARY KEY,
  name text NOT NULL,
  token_hash bytea NOT NULL UNIQUE,
  created_at timestamptz NOT NULL DEFAULT now(),
  revoked_at timestamptz
);

-- The owning application token; NULL for what the operator created (and for everything created
-- before this migration, which only the operator could create). An application token sees only
-- its own sessions and places sessions only on its own hosts.
ALTER TABLE sessions ADD COLUMN token_id uuid REFERENCES app_tokens (id);
ALTER TABLE hosts ADD COLUMN token_id uuid REFERENCES app_tokens (id);
-- An application's session list, newest first, keyset-paginated like sessions_by_creation.
CREATE INDEX sessions_by_token ON sessions (token_id, created_at DESC, id DESC) WHERE token_id IS NOT NULL;
