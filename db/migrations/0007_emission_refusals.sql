-- Refused emissions are counted per call, not journaled one by one: a host past its budget that
-- keeps emitting would otherwise grow the journal without limit. The first refusal of a call is
-- journaled (emission_rejected); this column counts them all.
ALTER TABLE calls ADD COLUMN emissions_refused integer NOT NULL DEFAULT 0 CHECK (emissions_refused >= 0);

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
  c.activation_seq,
  c.host_id,
  c.emissions_refused
FROM calls c;
