-- Model calls from tools, encrypted credentials, Environments, and tools Brain runs over HTTP.

-- Workers run every call Brain runs itself: components, HTTP Environment descriptors and tools an
-- application serves over HTTP. "component" becomes "worker".
ALTER TABLE calls DROP CONSTRAINT calls_executor_check;
UPDATE calls SET executor = 'worker' WHERE executor = 'component';
ALTER TABLE calls ADD CONSTRAINT calls_executor_check CHECK (executor IN ('host', 'worker', 'none'));
DROP INDEX calls_pending_components;
CREATE INDEX calls_pending_worker ON calls (session_id, seq) WHERE state = 'pending' AND executor = 'worker';

-- The activation's model-call budget (BRAIN_MAX_MODEL_CALLS), shared by the Agentloop's calls and
-- its tools' calls, also after the activation returned. A row may now start with a model call.
ALTER TABLE activation_budgets ALTER COLUMN emitted_bytes SET DEFAULT 0;
ALTER TABLE activation_budgets ADD COLUMN model_calls integer NOT NULL DEFAULT 0 CHECK (model_calls >= 0);

-- Provider requests made for tool calls while they are in flight, with the process making them.
-- When that process is declared dead, the call is recorded `unknown` and never replayed.
CREATE TABLE tool_model_calls (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  seq bigint NOT NULL,
  call_seq bigint NOT NULL,
  runner_id uuid NOT NULL,
  started_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, seq)
);
CREATE INDEX tool_model_calls_runner ON tool_model_calls (runner_id);

-- Secrets given at session creation (a provider API key, an Environment's headers), encrypted with
-- AES-256-GCM under the server key (BRAIN_SECRET_KEY). `key_id` names that key by a fingerprint, so a
-- process holding another key refuses clearly instead of failing to authenticate.
CREATE TABLE session_secrets (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  name text NOT NULL,
  key_id text NOT NULL,
  nonce bytea NOT NULL,
  ciphertext bytea NOT NULL,
  tag bytea NOT NULL,
  PRIMARY KEY (session_id, name)
);

-- A session's HTTP Environments. `config` holds the base URL, header names and setup request;
-- header values live encrypted in session_secrets ('environment:<name>').
CREATE TABLE environments (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  name text NOT NULL,
  type text NOT NULL CHECK (type IN ('http')),
  config jsonb NOT NULL,
  status text NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'ready', 'failed')),
  setup_error text,
  created_at timestamptz NOT NULL DEFAULT now(),
  updated_at timestamptz NOT NULL DEFAULT now(),
  PRIMARY KEY (session_id, name)
);

-- What the session's tools may do through ctx.environments (operations, optional name list); NULL:
-- nothing.
ALTER TABLE sessions ADD COLUMN environment_control jsonb;

-- Where a server can be reached, for callbacks of tools served over HTTP (BRAIN_PUBLIC_URL).
ALTER TABLE servers ADD COLUMN url text;

-- One row per model call, the Agentloop's and the tools' alike: who asked (origin, and for a tool
-- the seq of its tool_call_started), the activation whose budget it used, how it ended and what
-- it cost. Scope queries by session_id: the start/end pairing is per session.
CREATE VIEW model_calls AS
SELECT
  s.session_id,
  s.seq,
  COALESCE(s.payload->'origin'->>'type', 'agentloop') AS origin,
  (s.payload->'origin'->>'sequence')::bigint AS tool_call_seq,
  (s.payload->>'activation')::bigint AS activation_seq,
  s.created_at AS started_at,
  e.seq AS ended_seq,
  e.created_at AS ended_at,
  e.payload->'outcome'->>'status' AS status,
  e.payload->'outcome'->'error'->>'code' AS error_code,
  e.payload->>'model' AS model,
  (e.payload->'usage'->>'inputTokens')::bigint AS input_tokens,
  (e.payload->'usage'->>'outputTokens')::bigint AS output_tokens
FROM records s
LEFT JOIN records e
  ON e.session_id = s.session_id AND e.kind = 'model_call_ended' AND (e.payload->>'call')::bigint = s.seq
WHERE s.kind = 'model_call_started';

COMMENT ON VIEW model_calls IS 'One row per model call (Agentloop or tool), named by the seq of its model_call_started record; ended_seq is null while it runs.';
