import type { Sql } from "postgres";
import { type ConnectOptions, connect } from "./connect.js";
import { idleSessionTimeoutMs } from "./ops/idle-session-timeout.js";
import { listenNotifyDelivered } from "./ops/operator.js";

/** How long a NOTIFY has to come back at start before DATABASE_URL is taken for a pooler. */
const POOLER_PROBE_MS = 1_500;

/**
 * connect(), fitted at start to what is on the other end of the URL:
 * - under a role's `idle_session_timeout`, Postgres ends a connection idle that long, and a query
 *   the pool sends on it at that moment fails: the pool closes its own idle connections at half
 *   that period, before Postgres would;
 * - through a pooler in transaction mode (told by a direct URL beside it, or found because a
 *   NOTIFY does not come back to a LISTEN on the URL), statements go unprepared and nothing relies
 *   on a session: see ConnectOptions.pooled.
 */
export async function connectToRole(url: string, options: ConnectOptions): Promise<Sql> {
  const sql = connect(url, options);
  try {
    const ms = await idleSessionTimeoutMs(sql);
    const pooled = options.directUrl !== undefined || !(await listenNotifyDelivered(sql, POOLER_PROBE_MS));
    if (ms === 0 && !pooled) return sql;
    await sql.end({ timeout: 1 });
    return connect(url, { ...options, ...(ms > 0 ? { idleTimeoutSeconds: ms / 2000 } : {}), pooled });
  } catch (error) {
    await sql.end({ timeout: 1 });
    throw error;
  }
}
