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

/** A role name as Postgres takes it unquoted or quoted: letters, digits, _ and $, at most 63. */
const ROLE_NAME = /^[A-Za-z_][A-Za-z0-9_$]{0,62}$/;

/** Why `role` cannot be given grants by name, or null. */
export function roleNameProblem(role: string): string | null {
  return ROLE_NAME.test(role) ? null : "a role name: letters, digits, _ and $ (at most 63)";
}

/**
 * What a runtime role needs on Brain's two schemas, and nothing else: USAGE, DML on the tables,
 * the sequences, and EXECUTE on pg-boss's functions. No CREATE, no ownership, nothing in public.
 * Run again after each `brain migrate`: tables a migration adds need their grants.
 */
export function grantScript(schema: string, role: string): string {
  const problem = roleNameProblem(role);
  if (problem) throw new Error(`--grant-to: ${problem}`);
  const r = `"${role}"`;
  const schemas = `${quoteIdent(schema)}, ${quoteIdent(bossSchemaFor(schema))}`;
  return `${[
    `-- Grants for the runtime role ${role} on ${schema} and ${bossSchemaFor(schema)}.`,
    `GRANT USAGE ON SCHEMA ${schemas} TO ${r};`,
    `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${schemas} TO ${r};`,
    `GRANT USAGE, SELECT, UPDATE ON ALL SEQUENCES IN SCHEMA ${schemas} TO ${r};`,
    `GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${schemas} TO ${r};`,
  ].join("\n")}\n`;
}
