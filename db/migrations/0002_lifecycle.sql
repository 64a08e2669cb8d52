-- Per-activation emission budgets (BRAIN_MAX_EMITTED_BYTES): results and extension events of one
-- activation, including those of background tools after the activation returned, share one counter.
CREATE TABLE activation_budgets (
  session_id uuid NOT NULL REFERENCES sessions (id) ON DELETE CASCADE,
  activation_seq bigint NOT NULL,
  emitted_bytes bigint NOT NULL CHECK (emitted_bytes >= 0),
  PRIMARY KEY (session_id, activation_seq)
);
