import type { Sql } from "postgres";

export interface RecordRow {
  seq: number;
  kind: string;
  payload: unknown;
  created_at: Date;
}

/** Records after a sequence, in order. Dense per-session sequences mean `after` never skips a gap. */
export async function readRecords(sql: Sql, sessionId: string, after: number, limit = 1000): Promise<RecordRow[]> {
  return sql<RecordRow[]>`
    SELECT seq, kind, payload, created_at FROM records
    WHERE session_id = ${sessionId} AND seq > ${after}
    ORDER BY seq LIMIT ${limit}`;
}

/** The activation_ended record that answers a user message, if it has been written. */
export async function findActivationEnd(sql: Sql, sessionId: string, messageSeq: number): Promise<RecordRow | null> {
  const [row] = await sql<RecordRow[]>`
    SELECT seq, kind, payload, created_at FROM records
    WHERE session_id = ${sessionId} AND seq > ${messageSeq} AND kind = 'activation_ended'
      AND payload->>'message' = ${String(messageSeq)}
    LIMIT 1`;
  return row ?? null;
}

/** Whether a call exists, and its state, to explain a refused host report. */
export async function callState(sql: Sql, sessionId: string, seq: number, hostId: string): Promise<string | null> {
  const [row] = await sql<{ state: string }[]>`
    SELECT state FROM calls WHERE session_id = ${sessionId} AND seq = ${seq} AND host_id = ${hostId}`;
  return row?.state ?? null;
}
