import type { Sql } from "postgres";
import { tables } from "../tables.js";

/**
 * How many calls each of `ids` holds open, keyed by id: `pending` ones waiting for a host, or
 * `running` ones (running or returned) on a socket still open, grouped by that socket's host or
 * server. Read apart from the list they count for: on a Citus cluster the calls are distributed
 * and the hosts and servers are reference tables, which Citus cannot join by a correlated
 * subquery; a grouped count over a list of ids it runs on every worker and adds up.
 */
export async function openCallCounts(
  sql: Sql,
  ids: string[],
  what: "pending" | "running",
  by: "host_id" | "server_id",
): Promise<Map<string, number>> {
  if (ids.length === 0) return new Map();
  const brain = tables(sql);
  const rows =
    what === "pending"
      ? await sql<{ id: string; n: number }[]>`
          SELECT c.host_id AS id, count(*)::int AS n FROM ${brain.calls} c
          WHERE c.host_id = ANY(${ids}::uuid[]) AND c.state = 'pending'
          GROUP BY c.host_id`
      : await sql<{ id: string; n: number }[]>`
          SELECT hc.${sql(by)} AS id, count(*)::int AS n
          FROM ${brain.host_connections} hc JOIN ${brain.calls} c ON c.connection_id = hc.id
          WHERE hc.${sql(by)} = ANY(${ids}::uuid[]) AND hc.closed_at IS NULL AND c.state IN ('running', 'returned')
          GROUP BY hc.${sql(by)}`;
  return new Map(rows.map((r) => [r.id, r.n]));
}
