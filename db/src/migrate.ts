import { createHash } from "node:crypto";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Sql } from "postgres";
import { migrateLockKey } from "./migrate-lock.js";
import { quoteIdent } from "./schema-name.js";

/** db/migrations, next to this package's dist/ and src/. */
export const MIGRATIONS_DIR = join(dirname(fileURLToPath(import.meta.url)), "..", "migrations");

export interface Migration {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

export function loadMigrations(dir = MIGRATIONS_DIR): Migration[] {
  const files = readdirSync(dir)
    .filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f))
    .sort();
  return files.map((file, index) => {
    const version = Number(file.slice(0, 4));
    if (version !== index + 1) throw new Error(`migration ${file} is out of sequence (expected ${index + 1})`);
    const sql = readFileSync(join(dir, file), "utf8");
    return { version, name: file, sql, checksum: createHash("sha256").update(sql).digest("hex") };
  });
}

/**
 * Applies pending migrations in order, each in its own transaction under a transaction-scoped
 * advisory lock. Concurrent migrators serialise on the lock; the loser finds the version recorded
 * and skips it, so both succeed. A checksum mismatch on an applied migration is refused: the SQL
 * that ran is not the SQL in this release.
 */
export async function migrate(sql: Sql, schema: string, dir = MIGRATIONS_DIR): Promise<number[]> {
  const migrations = loadMigrations(dir);
  const s = quoteIdent(schema);
  // Up to date: nothing to lock or create. A role that may not run DDL (the schema was installed
  // from `brain migrate --print-sql`) can then start, since even CREATE SCHEMA IF NOT EXISTS
  // needs the CREATE privilege.
  if (await upToDate(sql, schema, migrations)) return [];
  const rights = await migrateRights(sql, schema);
  if (!rights.may) {
    const applied = rights.version === 0 ? "is not installed" : `is at version ${rights.version}`;
    throw new Error(
      `schema ${schema} ${applied} and this release needs ${migrations.length}, which role ${rights.role} may not apply: run \`brain migrate\` as the schema's owner (or apply \`brain migrate --print-sql\`), then start again`,
    );
  }
  const applied: number[] = [];
  for (const m of migrations) {
    const ran = await sql.begin(async (tx) => {
      await tx`SELECT pg_advisory_xact_lock(hashtextextended(${migrateLockKey(schema)}, 0))`;
      await tx.unsafe(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await tx.unsafe(
        `CREATE TABLE IF NOT EXISTS ${s}.migrations (
           version int PRIMARY KEY, name text NOT NULL, checksum text NOT NULL,
           applied_at timestamptz NOT NULL DEFAULT now())`,
      );
      const [row] = await tx.unsafe<{ checksum: string }[]>(`SELECT checksum FROM ${s}.migrations WHERE version = $1`, [
        m.version,
      ]);
      if (row) {
        if (row.checksum !== m.checksum) {
          throw new Error(`migration ${m.name} was applied with different contents (checksum ${row.checksum})`);
        }
        return false;
      }
      await tx.unsafe(`SET LOCAL search_path TO ${s}`);
      await tx.unsafe(m.sql);
      await tx.unsafe(`INSERT INTO ${s}.migrations (version, name, checksum) VALUES ($1, $2, $3)`, [
        m.version,
        m.name,
        m.checksum,
      ]);
      return true;
    });
    if (ran) applied.push(m.version);
  }
  return applied;
}

/**
 * Whether this role may migrate `schema`: own it (or be a member of its owner), or, before it
 * exists, create schemas in this database. A runtime role with only DML never tries, and says why.
 */
export async function migrateRights(
  sql: Sql,
  schema: string,
): Promise<{ may: boolean; role: string; version: number }> {
  const [row] = await sql<{ may: boolean; role: string }[]>`
    SELECT coalesce(
             (SELECT pg_has_role(current_user, n.nspowner, 'USAGE') FROM pg_namespace n WHERE n.nspname = ${schema}),
             has_database_privilege(current_database(), 'CREATE')) AS may,
           current_user AS role`;
  const [t] = await sql<{ t: string | null }[]>`SELECT to_regclass(${`${quoteIdent(schema)}.migrations`})::text AS t`;
  const version = t?.t
    ? Number(
        (await sql.unsafe<{ v: number | null }[]>(`SELECT max(version) AS v FROM ${quoteIdent(schema)}.migrations`))[0]
          ?.v ?? 0,
      )
    : 0;
  return { may: row?.may === true, role: row?.role ?? "?", version };
}

/** Every migration recorded, with this release's checksum (a mismatch is left to the locked path). */
async function upToDate(sql: Sql, schema: string, migrations: Migration[]): Promise<boolean> {
  const [t] = await sql<{ t: string | null }[]>`SELECT to_regclass(${`${quoteIdent(schema)}.migrations`})::text AS t`;
  if (!t?.t) return false;
  const rows = await sql.unsafe<{ version: number; checksum: string }[]>(
    `SELECT version, checksum FROM ${quoteIdent(schema)}.migrations`,
  );
  const recorded = new Map(rows.map((r) => [Number(r.version), r.checksum]));
  return migrations.every((m) => recorded.get(m.version) === m.checksum);
}
