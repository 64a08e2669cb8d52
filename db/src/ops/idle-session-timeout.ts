import type { Sql } from "postgres";

/**
 * The `idle_session_timeout` in force for this connection's role and database (a DBA's setting,
 * Postgres 14+), in milliseconds; 0 when there is none. Postgres ends a session idle that long.
 */
export async function idleSessionTimeoutMs(sql: Sql): Promise<number> {
  // No row before Postgres 14.
  const [row] = await sql<{ ms: number | null }[]>`
    SELECT setting::float8 AS ms FROM pg_settings WHERE name = 'idle_session_timeout'`;
  return Math.max(row?.ms ?? 0, 0);
}
