import type { ConsoleHost } from "@aexhq/brain-contracts";
import type { Sql } from "postgres";
import { tables } from "../tables.js";

interface Row {
  id: string;
  name: string | null;
  named: boolean;
  application: string | null;
  created_at: Date;
  last_connected_at: Date | null;
  connections: number;
  replicas: number;
  pending_calls: number;
  running_calls: number;
}

/**
 * The console's hosts, the most recently connected first, with what they hold now: open sockets,
 * registered replicas (named hosts), calls waiting for them and calls running on their sockets.
 * Each count is read through a partial index of open rows.
 */
export async function consoleHosts(sql: Sql, limit: number): Promise<ConsoleHost[]> {
  const brain = tables(sql);
  const rows = await sql<Row[]>`
    SELECT h.id, h.name, h.named, t.name AS application, h.created_at, h.last_connected_at,
           (SELECT count(*)::int FROM ${brain.host_connections} hc WHERE hc.host_id = h.id AND hc.closed_at IS NULL)
             AS connections,
           (SELECT count(*)::int FROM ${brain.host_replicas} r WHERE r.host_id = h.id) AS replicas,
           (SELECT count(*)::int FROM ${brain.calls} c WHERE c.host_id = h.id AND c.state = 'pending') AS pending_calls,
           (SELECT count(*)::int FROM ${brain.host_connections} hc JOIN ${brain.calls} c ON c.connection_id = hc.id
             WHERE hc.host_id = h.id AND hc.closed_at IS NULL AND c.state IN ('running', 'returned')) AS running_calls
    FROM ${brain.hosts} h LEFT JOIN ${brain.app_tokens} t ON t.id = h.token_id
    ORDER BY h.last_connected_at DESC NULLS LAST, h.created_at DESC, h.id
    LIMIT ${limit}`;
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    named: r.named,
    application: r.application,
    createdAt: r.created_at.toISOString(),
    lastConnectedAt: r.last_connected_at?.toISOString() ?? null,
    connections: r.connections,
    replicas: r.replicas,
    pendingCalls: r.pending_calls,
    runningCalls: r.running_calls,
  }));
}
