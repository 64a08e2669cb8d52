-- Approval predicates: a host may hold a call of a tool placed with `approval: "predicate"` for a
-- person's decision (its approval_checked record, required true, carries the input's hash). The
-- view takes the hash, and the time the call began to wait, from that record when the call's
-- tool_call_started has none.
CREATE OR REPLACE VIEW approvals AS
SELECT
  c.session_id,
  c.seq AS call,
  c.tool,
  r.payload->>'callId' AS call_id,
  r.payload->'input' AS input,
  COALESCE(r.payload->'approval'->>'inputHash', k.input_hash) AS input_hash,
  c.deadline_at,
  COALESCE(k.created_at, c.started_at) AS requested_at
FROM calls c
JOIN records r ON r.session_id = c.session_id AND r.seq = c.seq
LEFT JOIN LATERAL (
  SELECT a.payload->>'inputHash' AS input_hash, a.created_at FROM records a
  WHERE a.session_id = c.session_id AND a.seq > c.seq AND a.kind = 'approval_checked'
    AND a.payload->>'call' = c.seq::text
  ORDER BY a.seq DESC LIMIT 1
) k ON r.payload->'approval' IS NULL
WHERE c.state = 'awaiting';
