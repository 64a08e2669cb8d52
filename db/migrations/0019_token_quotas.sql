-- Quotas per application token, set by the operator: how many active sessions, registered hosts
-- (named-host replicas included) and open tool calls a token may have at once, and how many bytes
-- of components it may have uploaded. NULL: the server's default (BRAIN_QUOTA_*), itself
-- unlimited unless set. The operator's own sessions have no quota.
ALTER TABLE app_tokens
  ADD COLUMN max_sessions integer CHECK (max_sessions >= 0),
  ADD COLUMN max_hosts integer CHECK (max_hosts >= 0),
  ADD COLUMN max_open_calls integer CHECK (max_open_calls >= 0),
  ADD COLUMN max_component_bytes bigint CHECK (max_component_bytes >= 0);

-- Who uploaded which component, for the component-bytes quota. Components stay content-addressed
-- and shared; a token is charged for the ones it uploaded, once each, for as long as they are kept.
CREATE TABLE component_uploads (
  token_id uuid NOT NULL REFERENCES app_tokens (id) ON DELETE CASCADE,
  sha256 text NOT NULL REFERENCES components (sha256) ON DELETE CASCADE,
  size integer NOT NULL,
  PRIMARY KEY (token_id, sha256)
);
CREATE INDEX component_uploads_by_component ON component_uploads (sha256);
