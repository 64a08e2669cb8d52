import type { Sql } from "postgres";
import { openLane, throughPooler } from "../connect.js";
import { tables } from "../tables.js";

/** A journal record as the trace exporter reads it: times in microseconds since the epoch. */
export interface TraceRecord {
  seq: number;
  kind: string;
  /** Typed by its kind: payloadOf / brainRecord (contracts' records.ts). */
  payload: unknown;
  /** created_at in µs: spans of fast calls last less than a millisecond. */
  atMicros: number;
}

/** A session with journal records the exporter has not read yet. */
export interface TraceBacklog {
  sessionId: string;
  /** The cursor: every record up to here has been read and its spans exported. */
  exportedSeq: number;
  lastSeq: number;
}

/**
 * The exporter lease: an advisory lock held on a connection of its own, for as long as that
 * connection lives. When its server dies (SIGKILL included), Postgres releases the lock with the
 * backend and another server's next try takes it.
 */
export class TraceLease {
  private lane: Sql | null = null;
  private held = false;

  constructor(
    private readonly pool: Sql,
    private readonly schema: string,
    /** Names the connection (application_name), so `pg_stat_activity` shows who exports. */
    private readonly name: string,
  ) {}

  get holding(): boolean {
    return this.held;
  }

  /** True once found that the lease cannot be held here: DATABASE_URL is pooled and no direct URL is set. */
  unheldable = false;

  /** Takes the lease if nobody holds it; true while this process holds it. */
  async take(): Promise<boolean> {
    if (this.held) return true;
    this.lane ??= openLane(this.pool, this.name, {
      // The lock went with the connection: another server may be exporting already.
      onClose: () => {
        this.held = false;
      },
    });
    // Through a pooler the lock would stay on whichever backend took it, held by nobody's session.
    if (throughPooler(this.lane)) {
      this.unheldable = true;
      return false;
    }
    const [row] = await this.lane<{ ok: boolean }[]>`
      SELECT pg_try_advisory_lock(hashtextextended(${`brain.traces:${this.schema}`}, 0)) AS ok`;
    this.held = row?.ok === true;
    return this.held;
  }

  async release(): Promise<void> {
    this.held = false;
    const lane = this.lane;
    this.lane = null;
    await lane?.end({ timeout: 1 }).catch(() => {});
  }
}

/**
 * Sessions whose journal goes past their cursor, `only` these when given (sessions a commit
 * touched), else every one (on taking the lease, and now and then as a backstop).
 */
export async function traceBacklog(sql: Sql, limit: number, only?: string[]): Promise<TraceBacklog[]> {
  const brain = tables(sql);
  const rows = await sql<{ id: string; exported_seq: number; last_seq: number }[]>`
    SELECT s.id, COALESCE(c.exported_seq, 0) AS exported_seq, s.last_seq
    FROM ${brain.sessions} s LEFT JOIN ${brain.trace_cursors} c ON c.session_id = s.id
    WHERE s.last_seq > COALESCE(c.exported_seq, 0)
      ${only ? sql`AND s.id = ANY(${sql.array(only)}::uuid[])` : sql``}
    ORDER BY s.id
    LIMIT ${limit}`;
  return rows.map((r) => ({ sessionId: r.id, exportedSeq: r.exported_seq, lastSeq: r.last_seq }));
}

const COLUMNS = "seq, kind, payload, (extract(epoch FROM created_at) * 1000000)::bigint AS at_micros";
type Row = { seq: number; kind: string; payload: Record<string, unknown>; at_micros: number };
const toRecord = (r: Row): TraceRecord => ({ seq: r.seq, kind: r.kind, payload: r.payload, atMicros: r.at_micros });

/** A session's records after the cursor, in order. */
export async function traceRecordsAfter(
  sql: Sql,
  sessionId: string,
  after: number,
  limit: number,
): Promise<TraceRecord[]> {
  const brain = tables(sql);
  const rows = await sql<Row[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM ${brain.records}
    WHERE session_id = ${sessionId} AND seq > ${after}
    ORDER BY seq LIMIT ${limit}`;
  return rows.map(toRecord);
}

/**
 * What spans ending in a page need from before it: records by sequence (their starts, the
 * session's first record) and what was recorded for the tool calls `calls` (their results and
 * extension events, which become span events), up to `upTo`.
 */
export async function traceContext(
  sql: Sql,
  sessionId: string,
  seqs: number[],
  calls: number[],
  upTo: number,
): Promise<TraceRecord[]> {
  const brain = tables(sql);
  const from = calls.length > 0 ? Math.min(...calls) : upTo + 1;
  const rows = await sql<Row[]>`
    SELECT ${sql.unsafe(COLUMNS)} FROM ${brain.records}
    WHERE session_id = ${sessionId}
      AND (seq = ANY(${sql.array(seqs)}::bigint[])
        OR (seq > ${from} AND seq <= ${upTo}
            AND kind NOT IN ('model_call_started', 'model_call_ended', 'tool_call_ended')
            AND payload ? 'call'
            AND (payload->>'call') = ANY(${sql.array(calls.map(String))}::text[])))
    ORDER BY seq`;
  return rows.map(toRecord);
}

/**
 * The tool calls behind observations (tool_result, tool_call_ended records that woke an
 * activation): each call's sequence and its own activation, for links between traces.
 */
export async function observedCalls(
  sql: Sql,
  sessionId: string,
  observations: number[],
): Promise<{ seq: number; call: number; activation: number }[]> {
  const brain = tables(sql);
  if (observations.length === 0) return [];
  return sql<{ seq: number; call: number; activation: number }[]>`
    SELECT o.seq, t.seq AS call, (t.payload->>'activation')::bigint AS activation
    FROM ${brain.records} o
    JOIN ${brain.records} t ON t.session_id = o.session_id AND t.seq = (o.payload->>'call')::bigint
      AND t.kind = 'tool_call_started'
    WHERE o.session_id = ${sessionId} AND o.seq = ANY(${sql.array(observations)}::bigint[])`;
}

/**
 * Spans a session's end leaves open: starts (activations, model calls, tool calls) with no end
 * record. Ending a session writes no activation_ended, so without these an activation's span,
 * and the parent its children name, would never be exported.
 */
export async function openStarts(sql: Sql, sessionId: string, upTo: number): Promise<TraceRecord[]> {
  const brain = tables(sql);
  const rows = await sql<Row[]>`
    SELECT s.seq, s.kind, s.payload, (extract(epoch FROM s.created_at) * 1000000)::bigint AS at_micros
    FROM ${brain.records} s
    LEFT JOIN ${brain.records} e
      ON e.session_id = s.session_id AND e.seq > s.seq
     AND e.kind = CASE s.kind WHEN 'activation_started' THEN 'activation_ended'
                              WHEN 'model_call_started' THEN 'model_call_ended' ELSE 'tool_call_ended' END
     AND e.payload->>(CASE s.kind WHEN 'activation_started' THEN 'activation' ELSE 'call' END) = s.seq::text
    WHERE s.session_id = ${sessionId} AND s.seq <= ${upTo}
      AND s.kind IN ('activation_started', 'model_call_started', 'tool_call_started')
      AND e.seq IS NULL
    ORDER BY s.seq`;
  return rows.map(toRecord);
}

/**
 * Moves cursors forward (never back: a slow former exporter cannot rewind one). The time comes in
 * the inserted row: a Citus cluster refuses a function call in DO UPDATE SET.
 */
export async function advanceTraceCursors(sql: Sql, cursors: { sessionId: string; seq: number }[]): Promise<void> {
  const brain = tables(sql);
  if (cursors.length === 0) return;
  await sql`
    INSERT INTO ${brain.trace_cursors} (session_id, exported_seq, exported_at)
    SELECT k.session_id, k.seq, now()
    FROM unnest(${sql.array(cursors.map((c) => c.sessionId))}::uuid[], ${sql.array(cursors.map((c) => c.seq))}::bigint[])
         AS k(session_id, seq)
    JOIN ${brain.sessions} s ON s.id = k.session_id
    ON CONFLICT (session_id) DO UPDATE
      SET exported_seq = GREATEST(trace_cursors.exported_seq, EXCLUDED.exported_seq), exported_at = EXCLUDED.exported_at`;
}
