import type { Sql } from "postgres";

export async function insertHost(sql: Sql, id: string, name: string | null, tokenHash: Buffer): Promise<void> {
  await sql`INSERT INTO hosts (id, name, token_hash) VALUES (${id}, ${name}, ${tokenHash})`;
}

export async function hostTokenHash(sql: Sql, id: string): Promise<Buffer | null> {
  const [row] = await sql<{ token_hash: Buffer }[]>`SELECT token_hash FROM hosts WHERE id = ${id}`;
  return row?.token_hash ?? null;
}

export async function hostExists(sql: Sql, id: string): Promise<boolean> {
  const [row] = await sql`SELECT 1 FROM hosts WHERE id = ${id}`;
  return row !== undefined;
}

/** A host's WebSocket, or (hostId null) a worker's own connection that its claimed calls run on. */
export async function openConnection(sql: Sql, id: string, hostId: string | null, serverId: string): Promise<void> {
  await sql`
    WITH h AS (UPDATE hosts SET last_connected_at = now() WHERE id = ${hostId})
    INSERT INTO host_connections (id, host_id, server_id) VALUES (${id}, ${hostId}, ${serverId})`;
}

export async function closeConnection(sql: Sql, id: string): Promise<void> {
  await sql`UPDATE host_connections SET closed_at = now() WHERE id = ${id} AND closed_at IS NULL`;
}
