import type { Sql } from "postgres";

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
