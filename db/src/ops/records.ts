import type { RecordPayload } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import type { CallKey } from "../call-key.js";
import { tables } from "../tables.js";

export interface RecordRow {
  seq: number;
  kind: string;
  payload: unknown;
  created_at: Date;
}

/** Records after a sequence, in order. Dense per-session sequences mean `after` never skips a gap. */
export async function readRecords(sql: Sql, sessionId: string, after: number, limit = 1000): Promise<RecordRow[]> {
  const brain = tables(sql);
  return sql<RecordRow[]>`
    SELECT seq, kind, payload, created_at FROM ${brain.records}
    WHERE session_id = ${sessionId} AND seq > ${after}
    ORDER BY seq LIMIT ${limit}`;
}

export interface TurnState {
  /** The activation_ended record answering the message, once written. */
  end: { seq: number; payload: RecordPayload<"activation_ended"> } | null;
  status: "active" | "ended";
  lastSeq: number;
  /**
   * False when the journal holds no user message at the message's sequence: the database lost it
   * (a fail-over to a standby that never received it).
   */
  messageKept: boolean;
}

/**
 * Where a user message's turn stands, in one small query (never the session's model or tools
 * columns): its activation_ended if written, else whether the session is still active. Null when
 * the session is gone.
 */
export async function turnState(sql: Sql, sessionId: string, messageSeq: number): Promise<TurnState | null> {
  const brain = tables(sql);
  const [row] = await sql<
    {
      end_seq: number | null;
      end_payload: RecordPayload<"activation_ended">;
      status: "active" | "ended";
      last_seq: number;
      kept: boolean;
    }[]
  >`
    SELECT e.seq AS end_seq, e.payload AS end_payload, s.status, s.last_seq,
      EXISTS (SELECT 1 FROM ${brain.records} m WHERE m.session_id = s.id AND m.seq = ${messageSeq} AND m.kind = 'user_message') AS kept
    FROM ${brain.sessions} s
    LEFT JOIN LATERAL (
      SELECT seq, payload FROM ${brain.records}
      WHERE session_id = s.id AND seq > ${messageSeq} AND kind = 'activation_ended'
        AND payload->>'message' = ${String(messageSeq)}
      LIMIT 1
    ) e ON true
    WHERE s.id = ${sessionId}`;
  if (!row) return null;
  return {
    end: row.end_seq === null ? null : { seq: row.end_seq, payload: row.end_payload },
    status: row.status,
    lastSeq: row.last_seq,
    messageKept: row.kept,
  };
}

/** Whether a call exists, and its state, to explain a refused host report. */
export async function callState(sql: Sql, sessionId: string, seq: number, hostId: string): Promise<string | null> {
  const brain = tables(sql);
  const [row] = await sql<{ state: string }[]>`
    SELECT state FROM ${brain.calls} WHERE session_id = ${sessionId} AND seq = ${seq} AND host_id = ${hostId}`;
  return row?.state ?? null;
}

/** Whether the session has a call at this sequence (open or ended). */
export async function callExists(sql: Sql, sessionId: string, seq: number): Promise<boolean> {
  const brain = tables(sql);
  const [row] = await sql`SELECT 1 FROM ${brain.calls} WHERE session_id = ${sessionId} AND seq = ${seq}`;
  return row !== undefined;
}

/** Which of these calls have ended, and how: a host connection's in-flight calls to cancel. */
export async function endedAmong(sql: Sql, calls: CallKey[]): Promise<(CallKey & { status: string })[]> {
  const brain = tables(sql);
  if (calls.length === 0) return [];
  const rows = await sql<{ session_id: string; seq: number; status: string }[]>`
    SELECT c.session_id, c.seq, c.outcome->>'status' AS status
    FROM unnest(${sql.array(calls.map((c) => c.sessionId))}::uuid[], ${sql.array(calls.map((c) => c.seq))}::bigint[])
         AS k(session_id, seq)
    JOIN ${brain.calls} c ON c.session_id = k.session_id AND c.seq = k.seq
    WHERE c.state = 'ended'`;
  return rows.map((r) => ({ sessionId: r.session_id, seq: r.seq, status: r.status }));
}
