import type { Sql } from "postgres";

/**
 * Sends one live-text payload (under 8000 bytes) to every process listening on `channel`. Outside
 * any transaction, it is delivered at once; nothing is written.
 */
export async function notifyLive(sql: Sql, channel: string, payload: string): Promise<void> {
  await sql`SELECT pg_notify(${channel}, ${payload})`;
}
