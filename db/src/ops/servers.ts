import type { Sql } from "postgres";
import { SERVER_STALE_SECONDS } from "./ownership.js";

export async function registerServer(sql: Sql, id: string, kind: "server" | "worker" = "server"): Promise<void> {
  await sql`INSERT INTO servers (id, kind) VALUES (${id}, ${kind})`;
}

export async function heartbeat(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE servers SET heartbeat_at = now() WHERE id = ${id}`;
}

export async function stopServer(sql: Sql, id: string): Promise<void> {
  await sql`
    WITH c AS (UPDATE host_connections SET closed_at = now() WHERE server_id = ${id} AND closed_at IS NULL)
    UPDATE servers SET stopped_at = now() WHERE id = ${id}`;
}

/** Where a server can be reached (BRAIN_PUBLIC_URL or its listen address), once it listens. */
export async function setServerUrl(sql: Sql, id: string, url: string): Promise<void> {
  await sql`UPDATE servers SET url = ${url} WHERE id = ${id}`;
}

/**
 * The URL of a live server (not stopped, heartbeat fresh), the most recently heard from first: where
 * a tool served over HTTP sends its callbacks. Any server will do: the callback token is checked
 * with the shared key and every transition is conditional on the call, so none holds state for it.
 */
export async function liveServerUrl(sql: Sql): Promise<string | null> {
  const [row] = await sql<{ url: string }[]>`
    SELECT url FROM servers
    WHERE kind = 'server' AND stopped_at IS NULL AND url IS NOT NULL
      AND heartbeat_at > now() - make_interval(secs => ${SERVER_STALE_SECONDS})
    ORDER BY heartbeat_at DESC LIMIT 1`;
  return row?.url ?? null;
}
