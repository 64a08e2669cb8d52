import { randomBytes } from "node:crypto";
import type { Sql } from "postgres";
import { openLane } from "../connect.js";
import { quoteIdent } from "../schema-name.js";
import { tables } from "../tables.js";

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
  const brain = tables(sql);
  const rows = options.open
    ? await sql<CallRow[]>`
      SELECT session_id, seq, tool, status, outcome->>'status' AS outcome, started_at, deadline_at FROM ${brain.tool_calls}
      WHERE status <> 'ended' ORDER BY started_at LIMIT ${options.limit}`
    : await sql<CallRow[]>`
      SELECT session_id, seq, tool, status, outcome->>'status' AS outcome, started_at, deadline_at FROM ${brain.tool_calls}
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
  const brain = tables(sql);
  const rows = await sql<ProcessRow[]>`
    SELECT id, kind, url, started_at, extract(epoch FROM now() - heartbeat_at)::float8 AS heartbeat_age
    FROM ${brain.servers} WHERE stopped_at IS NULL ORDER BY heartbeat_at DESC`;
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
 * Whether a NOTIFY sent on `sql` reaches a LISTEN on a connection of its own within `timeoutMs`
 * (that connection is the direct URL's, when `sql` has one). Brain wakes every process this way;
 * through a transaction-mode pooler (PgBouncer) the LISTEN session is not kept and nothing
 * arrives, which is what this catches.
 */
export async function listenNotifyDelivered(sql: Sql, timeoutMs: number): Promise<boolean> {
  const channel = `brain_probe_${randomBytes(6).toString("hex")}`;
  let heard = () => {};
  let timer: NodeJS.Timeout | undefined;
  const arrived = new Promise<boolean>((resolve) => {
    heard = () => resolve(true);
    timer = setTimeout(() => resolve(false), timeoutMs);
  });
  const lane = openLane(sql, "brain-probe", { onClose: () => {}, onNotify: (c) => c === channel && heard() });
  try {
    await lane.unsafe(`LISTEN ${channel}`);
    await sql`SELECT pg_notify(${channel}, '')`;
    return await arrived;
  } finally {
    clearTimeout(timer);
    // Through a pooler the LISTEN stays on a backend others get: taken back, where it lands.
    await lane.unsafe(`UNLISTEN ${channel}`).catch(() => {});
    await lane.end({ timeout: 1 }).catch(() => {});
  }
}
