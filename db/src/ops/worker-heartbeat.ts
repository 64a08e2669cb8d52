import type { Sql } from "postgres";
import { tables } from "../tables.js";

/**
 * A worker's heartbeat that also says whether it is still alive in the others' eyes: false when
 * its row was stopped (declared dead by a recovery sweep, its calls already ended) or is gone.
 */
export async function heartbeatAlive(sql: Sql, id: string): Promise<boolean> {
  const brain = tables(sql);
  const rows =
    await sql`UPDATE ${brain.servers} SET heartbeat_at = now() WHERE id = ${id} AND stopped_at IS NULL RETURNING 1`;
  return rows.length > 0;
}
