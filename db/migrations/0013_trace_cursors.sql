-- OpenTelemetry traces are built from the journal by one server at a time (an advisory lock) and
-- exported over OTLP. A span needs its start and its end, so a span is exported when its end record
-- is read; the cursor says how far each session's journal has been read. Sequences are dense and
-- commit in order per session, so a per-session cursor never skips a record (a global order, such
-- as created_at, would: records of different sessions commit out of that order). It advances only
-- after the trace backend acknowledged the spans: a fail-over re-exports at most the last batch,
-- with the same trace and span ids, which are derived from (session, sequence).
CREATE TABLE trace_cursors (
  session_id uuid PRIMARY KEY REFERENCES sessions (id) ON DELETE CASCADE,
  exported_seq bigint NOT NULL CHECK (exported_seq >= 0),
  exported_at timestamptz NOT NULL DEFAULT now()
);
