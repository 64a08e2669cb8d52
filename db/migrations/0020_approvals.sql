-- Approval gates: a call of a tool placed with `approval: "always"` starts 'awaiting' a person's
-- decision and is dispatched ('pending') only once approved; a denial ends it. An approval with
-- edited input keeps that input here, for the invocation; the journal holds both.
ALTER TABLE calls DROP CONSTRAINT calls_state_check;
ALTER TABLE calls ADD CONSTRAINT calls_state_check
  CHECK (state IN ('awaiting', 'pending', 'running', 'returned', 'ended'));
ALTER TABLE calls ADD COLUMN approved_input jsonb;
CREATE INDEX calls_awaiting ON calls (session_id, seq) WHERE state = 'awaiting';

-- The calls waiting for a decision, with what the model asked for and the hash a decision binds.
CREATE VIEW approvals AS
SELECT
  c.session_id,
  c.seq AS call,
  c.tool,
  r.payload->>'callId' AS call_id,
  r.payload->'input' AS input,
  r.payload->'approval'->>'inputHash' AS input_hash,
  c.deadline_at,
  c.started_at AS requested_at
FROM calls c
JOIN records r ON r.session_id = c.session_id AND r.seq = c.seq
WHERE c.state = 'awaiting';
