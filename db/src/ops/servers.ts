import type { Sql } from "postgres";
import { tables } from "../tables.js";
import { SERVER_STALE_SECONDS } from "./ownership.js";

export async function registerServer(sql: Sql, id: string, kind: "server" | "worker" = "server"): Promise<void> {
  const brain = tables(sql);
  await sql`INSERT INTO ${brain.servers} (id, kind) VALUES (${id}, ${kind})`;
}

/**
 * Heartbeats, answering the beat's time (the database's clock) and a verdict: "revived" when
 * another process had declared this one dead meanwhile (it was cut off from the database, or
 * frozen, for longer than the stale window). The row is live again either way: the caller must
 * drop what the declaration took from it (its host connections were closed and their calls ended
 * `unknown`).
 *
 * The verdict is the first UPDATE's own condition, not a read of the row beside it: an UPDATE that
 * waited for a declaration's row lock re-checks its WHERE against the declared row, where a read
 * (a CTE, a join) would still see the row as its snapshot had it, and a server declared dead while
 * its beat waited would be told it was alive and never drop what the declaration took.
 */
export async function heartbeat(sql: Sql, id: string): Promise<{ verdict: "alive" | "revived"; at: Date }> {
  const brain = tables(sql);
  const [alive] = await sql<{ at: Date }[]>`
    UPDATE ${brain.servers} SET heartbeat_at = now() WHERE id = ${id} AND stopped_at IS NULL RETURNING heartbeat_at AS at`;
  if (alive) return { verdict: "alive", at: alive.at };
  // Declared dead meanwhile; or silent so long that retention removed its row (stopped and silent
  // for the whole retention window): it registers again, else it would beat into nothing and look
  // dead to every other server for good. A row registered again has no URL until the next start.
  // The time in the inserted row: a Citus cluster refuses a function call in DO UPDATE SET.
  const [revived] = await sql<{ at: Date }[]>`
    INSERT INTO ${brain.servers} (id, kind, heartbeat_at) VALUES (${id}, 'server', now())
    ON CONFLICT (id) DO UPDATE SET heartbeat_at = EXCLUDED.heartbeat_at, stopped_at = NULL
    RETURNING heartbeat_at AS at`;
  return { verdict: "revived", at: revived!.at };
}

export async function stopServer(sql: Sql, id: string): Promise<void> {
  const brain = tables(sql);
  await sql`
    WITH c AS (UPDATE ${brain.host_connections} SET closed_at = now() WHERE server_id = ${id} AND closed_at IS NULL)
    UPDATE ${brain.servers} SET stopped_at = now() WHERE id = ${id}`;
}

/** Where a server can be reached (BRAIN_PUBLIC_URL or its listen address), once it listens. */
export async function setServerUrl(sql: Sql, id: string, url: string): Promise<void> {
  const brain = tables(sql);
  await sql`UPDATE ${brain.servers} SET url = ${url} WHERE id = ${id}`;
}

/**
 * The URL of a live server (not stopped, heartbeat fresh), the most recently heard from first: where
 * a tool served over HTTP sends its callbacks. Any server will do: the callback token is checked
 * with the shared key and every transition is conditional on the call, so none holds state for it.
 */
export async function liveServerUrl(sql: Sql): Promise<string | null> {
  const brain = tables(sql);
  const [row] = await sql<{ url: string }[]>`
    SELECT url FROM ${brain.servers}
    WHERE kind = 'server' AND stopped_at IS NULL AND url IS NOT NULL
      AND heartbeat_at > now() - make_interval(secs => ${SERVER_STALE_SECONDS})
    ORDER BY heartbeat_at DESC LIMIT 1`;
  return row?.url ?? null;
}
