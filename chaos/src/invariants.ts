// The journal's invariants, in SQL: each check is one of the product's promises (docs/architecture.md,
// Tools: what Brain promises, Failure semantics) and selects the rows that break it. They run in one
// REPEATABLE READ transaction, so they all see the same snapshot, against Brain's documented views
// (brain.journal, brain.tool_calls, brain.model_calls) plus sessions.last_seq, and the run's own records in the
// schema `chaos`: what the hosts saw invoked and acknowledged, what the clients were acknowledged,
// and the requests the HTTP Environment's target received.
import { citusInstalled } from "@aexhq/brain-db/migrate";
import type { Sql } from "postgres";

export interface Check {
  name: string;
  promise: string;
  sql: string;
}

/** Seconds a call may stay open past its deadline: the pg-boss backstop runs every second, and a
 * dead server's calls wait for it to be declared dead (3 s). */
export const DEADLINE_SLACK_SECONDS = 10;
/** An activation or model call older than this at check time (after the quiet period) is stuck:
 * the scripted model answers at once and every tool has a deadline under 10 s. */
export const STUCK_SECONDS = 30;

export const CHECKS: Check[] = [
  {
    name: "dense sequences",
    promise: "each session's seq runs 1..last_seq with no gap or duplicate, and sessions.last_seq is the last",
    sql: `
      SELECT s.id AS session, s.last_seq, count(j.seq) AS records, count(DISTINCT j.seq) AS distinct_seqs,
             min(j.seq) AS first_seq, max(j.seq) AS max_seq
      FROM brain.sessions s LEFT JOIN brain.journal j ON j.session_id = s.id
      GROUP BY s.id, s.last_seq
      HAVING count(j.seq) <> s.last_seq OR count(DISTINCT j.seq) <> count(j.seq)
          OR coalesce(min(j.seq), 1) <> 1 OR coalesce(max(j.seq), 0) <> s.last_seq`,
  },
  {
    name: "one call per tool_call_started",
    promise: "every tool_call_started record names exactly one call and every call has its record",
    sql: `
      SELECT coalesce(j.session_id, c.session_id) AS session, coalesce(j.seq, c.seq) AS seq,
             j.kind AS record_kind, c.status AS call_status
      FROM (SELECT session_id, seq, kind FROM brain.journal WHERE kind = 'tool_call_started') j
      FULL JOIN brain.tool_calls c ON c.session_id = j.session_id AND c.seq = j.seq
      WHERE j.seq IS NULL OR c.seq IS NULL`,
  },
  {
    name: "exactly one terminal record per ended call",
    promise: "an ended call has one tool_call_ended (first terminal cause wins); an open call has none",
    sql: `
      WITH ends AS (
        SELECT session_id, (payload->>'call')::bigint AS call, count(*) AS n
        FROM brain.journal WHERE kind = 'tool_call_ended' GROUP BY 1, 2
      )
      SELECT coalesce(c.session_id, e.session_id) AS session, coalesce(c.seq, e.call) AS call,
             c.status, coalesce(e.n, 0) AS terminal_records
      FROM brain.tool_calls c FULL JOIN ends e ON e.session_id = c.session_id AND e.call = c.seq
      WHERE c.seq IS NULL
         OR (c.status = 'ended' AND coalesce(e.n, 0) <> 1)
         OR (c.status <> 'ended' AND coalesce(e.n, 0) <> 0)`,
  },
  {
    name: "no call open past its deadline",
    promise: `a call ends by its deadline (the durable backstop included), within ${DEADLINE_SLACK_SECONDS} s`,
    sql: `
      SELECT session_id AS session, seq AS call, tool, status, deadline_at, now() - deadline_at AS overdue
      FROM brain.tool_calls
      WHERE status <> 'ended' AND deadline_at < now() - interval '${DEADLINE_SLACK_SECONDS} seconds'`,
  },
  {
    name: "every activation ends once",
    promise: "an activation ends exactly once; one cut off by a crash is ended (failed) by whoever resumes the session",
    sql: `
      WITH ends AS (
        SELECT session_id, (payload->>'activation')::bigint AS activation, count(*) AS n
        FROM brain.journal WHERE kind = 'activation_ended' GROUP BY 1, 2
      )
      SELECT coalesce(a.session_id, e.session_id) AS session, coalesce(a.seq, e.activation) AS activation,
             a.created_at AS started_at, coalesce(e.n, 0) AS ends
      FROM (SELECT session_id, seq, created_at FROM brain.journal WHERE kind = 'activation_started') a
      FULL JOIN ends e ON e.session_id = a.session_id AND e.activation = a.seq
      WHERE a.seq IS NULL OR coalesce(e.n, 0) > 1
         OR (e.n IS NULL AND a.created_at < now() - interval '${STUCK_SECONDS} seconds')`,
  },
  {
    name: "every model call ends once",
    promise: "a model call ends exactly once; one cut off by a crash is recorded unknown, never left open",
    sql: `
      SELECT m.session_id AS session, m.seq AS call, m.origin, m.started_at, count(e.seq) AS ends
      FROM brain.model_calls m
      LEFT JOIN brain.journal e
        ON e.session_id = m.session_id AND e.kind = 'model_call_ended' AND (e.payload->>'call')::bigint = m.seq
      GROUP BY m.session_id, m.seq, m.origin, m.started_at
      HAVING count(e.seq) > 1 OR (count(e.seq) = 0 AND m.started_at < now() - interval '${STUCK_SECONDS} seconds')`,
  },
  {
    name: "host handlers ran at most once",
    promise: "an invocation is sent at most once: no call's handler ran twice",
    sql: `
      SELECT session, call, count(*) AS invocations, array_agg(pid) AS pids
      FROM chaos.invocations GROUP BY session, call HAVING count(*) > 1`,
  },
  {
    name: "host handlers ran only for journaled calls",
    promise: "intent before effect: a handler runs only for a committed tool_call_started of its tool",
    sql: `
      SELECT i.session, i.call, i.tool, c.tool AS journaled_tool
      FROM chaos.invocations i LEFT JOIN brain.tool_calls c ON c.session_id = i.session AND c.seq = i.call
      WHERE c.seq IS NULL OR c.tool <> i.tool`,
  },
  {
    name: "HTTP Environment calls ran at most once",
    promise: "a worker call runs at most once (claimed once, never retried): one request per call",
    sql: `SELECT n, requests FROM chaos.http_requests WHERE requests > 1`,
  },
  {
    name: "HTTP Environment calls ran only for journaled calls",
    promise: "intent before effect, for worker calls: each request matches a committed fetch call",
    sql: `
      SELECT r.n FROM chaos.http_requests r
      WHERE NOT EXISTS (
        SELECT 1 FROM brain.journal j
        WHERE j.kind = 'tool_call_started' AND j.payload->>'tool' = 'fetch' AND (j.payload->'input'->>'n')::bigint = r.n)`,
  },
  {
    name: "every acknowledged write is in the journal",
    promise: "an ack (emit's seq, a result's seq, a message's or turn's sequence) means that record committed",
    // A host's ack names its call too: a seq that holds another call's record of the same kind is
    // an acknowledged write that was lost (and its seq given to another write).
    sql: `
      SELECT a.source, a.session, a.seq, a.kind AS acked_kind, j.kind AS journal_kind
      FROM chaos.acks a LEFT JOIN brain.journal j ON j.session_id = a.session AND j.seq = a.seq
      WHERE j.kind IS DISTINCT FROM a.kind
         OR (a.call IS NOT NULL AND (j.payload->>'call')::bigint IS DISTINCT FROM a.call)`,
  },
  {
    name: "every acknowledged finish ended its call ok",
    promise: "a finish that resolved committed the call's completion: it ended, with status ok",
    sql: `
      SELECT f.session, f.call, c.status, c.outcome->>'status' AS outcome
      FROM chaos.finished f LEFT JOIN brain.tool_calls c ON c.session_id = f.session AND c.seq = f.call
      WHERE c.status IS DISTINCT FROM 'ended' OR c.outcome->>'status' IS DISTINCT FROM 'ok'`,
  },
  {
    name: "waiting clients are answered",
    promise: "a message posted with wait: true is answered once its turn ends (the client waits 30 s)",
    sql: `
      SELECT w.session, w.seq AS message, e.seq AS activation_ended, e.created_at AS turn_ended_at,
             w.gave_up_at AS client_gave_up_at, w.server_url AS waited_on
      FROM chaos.late_waits w
      JOIN brain.journal e ON e.session_id = w.session AND e.kind = 'activation_ended'
        AND (e.payload->>'message')::bigint = w.seq
      WHERE e.created_at < w.gave_up_at - interval '5 seconds'`,
  },
];

/** The run's own records, loaded next to Brain's schema so the checks can join them. */
export interface RunRecords {
  invocations: { session: string; call: number; tool: string; n: number; pid: number }[];
  acks: { source: string; session: string; seq: number; kind: string; call: number | null }[];
  finished: { session: string; call: number }[];
  httpRequests: { n: number; requests: number }[];
  lateWaits: { session: string; seq: number; gaveUpAt: Date; url: string }[];
}

export async function loadRunRecords(sql: Sql, records: RunRecords): Promise<void> {
  await sql.unsafe(`
    DROP SCHEMA IF EXISTS chaos CASCADE;
    CREATE SCHEMA chaos;
    CREATE TABLE chaos.invocations (session uuid, call bigint, tool text, n bigint, pid int);
    CREATE TABLE chaos.acks (source text, session uuid, seq bigint, kind text, call bigint);
    CREATE TABLE chaos.finished (session uuid, call bigint);
    CREATE TABLE chaos.http_requests (n bigint, requests int);
    CREATE TABLE chaos.late_waits (session uuid, seq bigint, gave_up_at timestamptz, server_url text);`);

  const insert = async (table: string, rows: object[]) => {
    for (let i = 0; i < rows.length; i += 1_000) {
      // biome-ignore lint/suspicious/noExplicitAny: postgres.js's row helper takes any record shape.
      await sql`INSERT INTO ${sql(table)} ${sql(rows.slice(i, i + 1_000) as any)}`;
    }
  };
  await insert("chaos.invocations", records.invocations);
  await insert("chaos.acks", records.acks);
  await insert("chaos.finished", records.finished);
  await insert("chaos.http_requests", records.httpRequests);
  await insert(
    "chaos.late_waits",
    records.lateWaits.map((w) => ({ session: w.session, seq: w.seq, gave_up_at: w.gaveUpAt, server_url: w.url })),
  );
}

export interface CheckResult {
  check: Check;
  violations: number;
  sample: Record<string, unknown>[];
}

export async function runChecks(sql: Sql): Promise<CheckResult[]> {
  const from = (await citusInstalled(sql)) ? await snapshot(sql) : "brain";
  return sql.begin("ISOLATION LEVEL REPEATABLE READ READ ONLY", async (tx) => {
    const results: CheckResult[] = [];
    for (const check of CHECKS) {
      const rows = await tx.unsafe(check.sql.replaceAll("brain.", `${from}.`));
      results.push({ check, violations: rows.length, sample: rows.slice(0, 5) as Record<string, unknown>[] });
    }
    return results;
  }) as Promise<CheckResult[]>;
}

/** The views and tables the checks read. */
const CHECKED = ["journal", "tool_calls", "model_calls", "sessions"];

/**
 * On a Citus cluster (--citus), what the checks read, copied from one snapshot into local tables
 * of the coordinator: Citus plans neither their joins with the run's own (local) records nor some
 * of their correlated subqueries over distributed tables. Returns the copy's schema.
 */
async function snapshot(sql: Sql): Promise<string> {
  await sql.begin("ISOLATION LEVEL REPEATABLE READ", async (tx) => {
    await tx.unsafe("DROP SCHEMA IF EXISTS chaos_snapshot CASCADE");
    await tx.unsafe("CREATE SCHEMA chaos_snapshot");
    for (const name of CHECKED) {
      await tx.unsafe(`CREATE TABLE chaos_snapshot.${name} AS SELECT * FROM brain.${name}`);
    }
  });
  return "chaos_snapshot";
}
