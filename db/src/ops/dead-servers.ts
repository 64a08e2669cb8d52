import type { Sql } from "postgres";
import { tables } from "../tables.js";
import { type Judgement, NO_JUDGEMENT, staleBefore } from "./ownership.js";

/**
 * Crash recovery's verdict: every other process (server or worker) whose heartbeat is older than
 * the stale window is marked stopped, once (the UPDATE is the claim: two servers sweeping together
 * never both declare the same one). A direct write, not through the journal writer: it writes no
 * journal record; the caller ends the dead one's calls through the writer afterwards. Stale as
 * `judge` sees it (`judgedAt`: the declaration may run long after it was sent).
 */
export async function declareDeadServers(
  sql: Sql,
  selfId: string,
  judge: Judgement = NO_JUDGEMENT,
): Promise<{ id: string; kind: string }[]> {
  const brain = tables(sql);
  return sql<{ id: string; kind: string }[]>`
    UPDATE ${brain.servers} SET stopped_at = now()
    WHERE stopped_at IS NULL AND id <> ${selfId}
      AND heartbeat_at < ${staleBefore(sql, judge)}
    RETURNING id, kind`;
}

/** Closes the host connections a dead server held (after its calls were ended). */
export async function closeServerConnections(sql: Sql, serverId: string): Promise<void> {
  const brain = tables(sql);
  await sql`UPDATE ${brain.host_connections} SET closed_at = now() WHERE server_id = ${serverId} AND closed_at IS NULL`;
}
