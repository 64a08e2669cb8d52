import type { ConsoleProcess } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import { tables } from "../tables.js";
import { openCallCounts } from "./console-open-calls.js";
import { SERVER_STALE_SECONDS } from "./ownership.js";

interface Row {
  id: string;
  kind: ConsoleProcess["kind"];
  url: string | null;
  state: ConsoleProcess["state"];
  started_at: Date;
  heartbeat_at: Date;
  heartbeat_age_ms: number;
  stopped_at: Date | null;
  connections: number;
}

/**
 * The console's Brain processes, servers and workers: those not stopped first, the most recently
 * heard from first. "silent" is what the other servers' recovery sweep is about to declare dead
 * (the same staleness as claimSession's).
 */
export async function consoleProcesses(sql: Sql, limit: number): Promise<ConsoleProcess[]> {
  const brain = tables(sql);
  const rows = await sql<Row[]>`
    SELECT v.id, v.kind, v.url,
           CASE WHEN v.stopped_at IS NOT NULL THEN 'stopped'
                WHEN v.heartbeat_at > now() - make_interval(secs => ${SERVER_STALE_SECONDS}) THEN 'live'
                ELSE 'silent' END AS state,
           v.started_at, v.heartbeat_at,
           GREATEST(0, extract(epoch FROM now() - v.heartbeat_at) * 1000)::float8 AS heartbeat_age_ms,
           v.stopped_at,
           (SELECT count(*)::int FROM ${brain.host_connections} hc WHERE hc.server_id = v.id AND hc.closed_at IS NULL)
             AS connections
    FROM ${brain.servers} v
    ORDER BY v.stopped_at IS NULL DESC, v.heartbeat_at DESC, v.id
    LIMIT ${limit}`;
  const running = await openCallCounts(
    sql,
    rows.map((r) => r.id),
    "running",
    "server_id",
  );
  return rows.map((r) => ({
    id: r.id,
    kind: r.kind,
    url: r.url,
    state: r.state,
    startedAt: r.started_at.toISOString(),
    heartbeatAt: r.heartbeat_at.toISOString(),
    heartbeatAgeMs: Math.round(r.heartbeat_age_ms),
    stoppedAt: r.stopped_at?.toISOString() ?? null,
    connections: r.connections,
    runningCalls: running.get(r.id) ?? 0,
  }));
}
