import { randomBytes } from "node:crypto";
import type { Sql } from "postgres";
import { quoteIdent } from "../schema-name.js";

/** Operator queries (the `brain` CLI): read-only, over the documented views where one exists. */

export interface CallRow {
  session_id: string;
  seq: number;
  tool: string;
  status: string;
  /** The outcome's status once ended. */
  outcome: string | null;
  started_at: Date;
  deadline_at: Date | null;
}

/** Calls not yet ended, oldest first; or (open false) the most recent calls, ended or not. */
export async function listCalls(sql: Sql, options: { open: boolean; limit: number }): Promise<CallRow[]> {
  const rows = options.open
    ? await sql<CallRow[]>`
      SELECT session_id, seq, tool, status, outcome->>'status' AS outcome, started_at, deadline_at FROM tool_calls
      WHERE status <> 'ended' ORDER BY started_at LIMIT ${options.limit}`
    : await sql<CallRow[]>`
      SELECT session_id, seq, tool, status, outcome->>'status' AS outcome, started_at, deadline_at FROM tool_calls
      ORDER BY started_at DESC LIMIT ${options.limit}`;
  return rows.map((r) => ({ ...r, seq: Number(r.seq) }));
}

export interface ProcessRow {
  id: string;
  kind: "server" | "worker";
  url: string | null;
  started_at: Date;
  /** Seconds since its last heartbeat, by the database's clock. */
  heartbeat_age: number;
}

/** Servers and workers not stopped, the most recently heard from first. */
export async function liveProcesses(sql: Sql): Promise<ProcessRow[]> {
  const rows = await sql<ProcessRow[]>`
    SELECT id, kind, url, started_at, extract(epoch FROM now() - heartbeat_at)::float8 AS heartbeat_age
    FROM servers WHERE stopped_at IS NULL ORDER BY heartbeat_at DESC`;
  return [...rows];
}

/** The database's clock, in epoch ms, and the schema version recorded there (0: none). */
export async function databaseFacts(sql: Sql, schema: string): Promise<{ nowMs: number; version: number }> {
  const [t] = await sql<{ t: string | null }[]>`SELECT to_regclass(${`${quoteIdent(schema)}.migrations`})::text AS t`;
  const [row] = await sql<{ now: number }[]>`
    SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS now`;
  let version = 0;
  if (t?.t) {
    const [v] = await sql.unsafe<{ v: number | null }[]>(
      `SELECT max(version) AS v FROM ${quoteIdent(schema)}.migrations`,
    );
    version = Number(v?.v ?? 0);
  }
  return { nowMs: Number(row!.now), version };
}

/**
 * Whether a NOTIFY reaches a LISTEN on another connection within `timeoutMs`. Brain wakes every
 * process this way; through a transaction-mode pooler (PgBouncer) the LISTEN session is not kept
 * and nothing arrives, which is what this catches.
 */
export async function listenNotifyDelivered(sql: Sql, timeoutMs: number): Promise<boolean> {
  const channel = `brain_doctor_${randomBytes(6).toString("hex")}`;
  const token = randomBytes(8).toString("hex");
  let resolve!: (ok: boolean) => void;
  const got = new Promise<boolean>((r) => {
    resolve = r;
  });
  const sub = await sql.listen(channel, (payload) => {
    if (payload === token) resolve(true);
  });
  const timer = setTimeout(() => resolve(false), timeoutMs);
  try {
    await sql`SELECT pg_notify(${channel}, ${token})`;
    return await got;
  } finally {
    clearTimeout(timer);
    await sub.unlisten();
  }
}
