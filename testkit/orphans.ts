import type { Sql } from "@aexhq/brain-db/connect";

/**
 * Every table of Brain's schema with a session_id column: a partitioned one as itself, and its
 * partitions too with `partitions` (plans name the partitions they read). The hot ones have no
 * foreign key to sessions (migration 0014), so tests of deletion check them all, found by their
 * column.
 */
export async function sessionTables(
  sql: Sql,
  schema = "brain",
  options: { partitions?: boolean } = {},
): Promise<string[]> {
  const rows = await sql<{ table_name: string }[]>`
    SELECT c.relname AS table_name FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'session_id' AND NOT a.attisdropped
    WHERE n.nspname = ${schema} AND c.relkind IN ('r', 'p') AND (${options.partitions ?? false} OR NOT c.relispartition)
    ORDER BY c.relname`;
  // None found means the wrong schema, and every check below would pass without looking.
  if (!rows.some((r) => r.table_name === "records")) throw new Error(`no journal in schema ${schema}`);
  return rows.map((r) => r.table_name);
}

/** Rows whose session_id names no session, per table (only tables that have any: `{}` is clean). */
export async function orphanRows(sql: Sql, schema = "brain"): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const table of await sessionTables(sql, schema)) {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ${sql(schema)}.${sql(table)} x
      WHERE NOT EXISTS (SELECT 1 FROM ${sql(schema)}.sessions s WHERE s.id = x.session_id)`;
    if (row!.n > 0) found[table] = row!.n;
  }
  return found;
}

/** Rows naming one session, per table with a session_id column. */
export async function sessionRows(sql: Sql, sessionId: string, schema = "brain"): Promise<Record<string, number>> {
  const found: Record<string, number> = {};
  for (const table of await sessionTables(sql, schema)) {
    const [row] = await sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM ${sql(schema)}.${sql(table)} WHERE session_id = ${sessionId}`;
    found[table] = row!.n;
  }
  return found;
}
