import type { Sql } from "postgres";
import { DISTRIBUTED, REFERENCE } from "../citus.js";
import { quoteIdent } from "../schema-name.js";

/** Where Brain's tables are on a Citus cluster, as `brain doctor` reports it. */
export interface CitusPlacement {
  /** Hot tables (sessions and DISTRIBUTED) not distributed co-located with sessions. */
  notDistributed: string[];
  /** REFERENCE tables that are not reference tables. */
  notReference: string[];
  /** The session shards per worker, `host:port` → count. */
  shardsPerNode: { node: string; shards: number }[];
}

export async function citusPlacement(sql: Sql, schema: string): Promise<CitusPlacement> {
  const sessions = `${quoteIdent(schema)}.sessions`;
  const rows = await sql<{ name: string; method: string; colocated: boolean }[]>`
    SELECT c.relname AS name, p.partmethod::text AS method,
           p.colocationid = (SELECT colocationid FROM pg_dist_partition
                             WHERE logicalrelid = to_regclass(${sessions})) AS colocated
    FROM pg_dist_partition p JOIN pg_class c ON c.oid = p.logicalrelid
    WHERE c.relnamespace = to_regnamespace(${schema}) AND NOT c.relispartition`;
  const placed = new Map(rows.map((r) => [r.name, r]));
  const hot = ["sessions", ...DISTRIBUTED];
  const notDistributed = hot.filter((t) => placed.get(t)?.method !== "h" || placed.get(t)?.colocated !== true);
  const notReference = REFERENCE.filter((t) => placed.get(t)?.method !== "n");
  const shardsPerNode = notDistributed.includes("sessions")
    ? []
    : await sql<{ node: string; shards: number }[]>`
        SELECT nodename || ':' || nodeport AS node, count(*)::int AS shards FROM citus_shards
        WHERE table_name = to_regclass(${sessions}) GROUP BY 1 ORDER BY 1`;
  return { notDistributed, notReference, shardsPerNode };
}
