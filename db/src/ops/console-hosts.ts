import type { ConsoleHost } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import { tables } from "../tables.js";
import { openCallCounts } from "./console-open-calls.js";

interface Row {
  id: string;
  name: string | null;
  named: boolean;
  application: string | null;
  created_at: Date;
  last_connected_at: Date | null;
  connections: number;
  replicas: number;
}

/**
 * The console's hosts, the most recently connected first, with what they hold now: open sockets,
 * registered replicas (named hosts), calls waiting for them and calls running on their sockets.
 * Each count is read through a partial index of open rows; the calls' apart (console-open-calls.ts).
 */
export async function consoleHosts(sql: Sql, limit: number): Promise<ConsoleHost[]> {
  const brain = tables(sql);
  const rows = await sql<Row[]>`
    SELECT h.id, h.name, h.named, t.name AS application, h.created_at, h.last_connected_at,
           (SELECT count(*)::int FROM ${brain.host_connections} hc WHERE hc.host_id = h.id AND hc.closed_at IS NULL)
             AS connections,
           (SELECT count(*)::int FROM ${brain.host_replicas} r WHERE r.host_id = h.id) AS replicas
    FROM ${brain.hosts} h LEFT JOIN ${brain.app_tokens} t ON t.id = h.token_id
    ORDER BY h.last_connected_at DESC NULLS LAST, h.created_at DESC, h.id
    LIMIT ${limit}`;
  const ids = rows.map((r) => r.id);
  const [pending, running] = await Promise.all([
    openCallCounts(sql, ids, "pending", "host_id"),
    openCallCounts(sql, ids, "running", "host_id"),
  ]);
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    named: r.named,
    application: r.application,
    createdAt: r.created_at.toISOString(),
    lastConnectedAt: r.last_connected_at?.toISOString() ?? null,
    connections: r.connections,
    replicas: r.replicas,
    pendingCalls: pending.get(r.id) ?? 0,
    runningCalls: running.get(r.id) ?? 0,
  }));
}
