import { getConstructionPlans } from "pg-boss";
import type { Sql } from "postgres";
import { loadMigrations, MIGRATIONS_DIR, type Migration } from "./migrate.js";
import { bossSchemaFor, quoteIdent } from "./schema-name.js";

/** Versions recorded in `<schema>.migrations`; none when the schema or table does not exist yet. */
export async function appliedVersions(sql: Sql, schema: string): Promise<number[]> {
  const [t] = await sql<{ t: string | null }[]>`SELECT to_regclass(${`${quoteIdent(schema)}.migrations`})::text AS t`;
  if (!t?.t) return [];
  const rows = await sql.unsafe<{ version: number }[]>(
    `SELECT version FROM ${quoteIdent(schema)}.migrations ORDER BY version`,
  );
  return rows.map((r) => Number(r.version));
}

/** Whether pg-boss's schema is installed (its version table exists). */
export async function bossInstalled(sql: Sql, schema: string): Promise<boolean> {
  const [t] = await sql<
    { t: string | null }[]
  >`SELECT to_regclass(${`${quoteIdent(bossSchemaFor(schema))}.version`})::text AS t`;
  return Boolean(t?.t);
}

/** Migrations not yet applied, in order. */
export function pendingMigrations(applied: readonly number[], dir = MIGRATIONS_DIR): Migration[] {
  const done = new Set(applied);
  return loadMigrations(dir).filter((m) => !done.has(m.version));
}

/**
 * The SQL `migrate` would run, as one script a DBA can apply (psql -v ON_ERROR_STOP=1 -f) where the application's
 * role may not run DDL: each migration with the row that records it (same checksum, so a later
 * `migrate` by the application finds it applied), and pg-boss's install SQL when asked for.
 */
export function migrationScript(schema: string, migrations: Migration[], withBoss: boolean): string {
  const s = quoteIdent(schema);
  const out = [
    `-- Brain schema ${schema}: ${migrations.length} migration(s)${withBoss ? ", and pg-boss's schema" : ""}.`,
    `CREATE SCHEMA IF NOT EXISTS ${s};`,
    `CREATE TABLE IF NOT EXISTS ${s}.migrations (
  version int PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now());`,
  ];
  for (const m of migrations) {
    out.push(`-- ${m.name}`, `SET search_path TO ${s};`, m.sql.trim());
    out.push(
      `INSERT INTO ${s}.migrations (version, name, checksum) VALUES (${m.version}, '${m.name}', '${m.checksum}');`,
    );
  }
  out.push("RESET search_path;");
  // pg-boss's plan is its own transaction (BEGIN … COMMIT).
  if (withBoss)
    out.push(`-- pg-boss (schema ${bossSchemaFor(schema)})`, getConstructionPlans(bossSchemaFor(schema)).trim());
  return `${out.join("\n")}\n`;
}
