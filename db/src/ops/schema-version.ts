import type { Sql } from "postgres";
import { loadMigrations } from "../migrate.js";
import { tables } from "../tables.js";

let expected: number | undefined;

/** The schema version this release's code expects: its last migration's. */
export function expectedSchemaVersion(): number {
  expected ??= loadMigrations().at(-1)?.version ?? 0;
  return expected;
}

/** The schema version applied to the database (the connection's schema); 0 before any migration. */
export async function appliedSchemaVersion(sql: Sql): Promise<number> {
  const brain = tables(sql);
  const [row] = await sql<
    { version: number }[]
  >`SELECT coalesce(max(version), 0)::int AS version FROM ${brain.migrations}`;
  return row?.version ?? 0;
}

export interface SchemaVersions {
  expected: number;
  /** null when the database did not answer within the timeout. */
  applied: number | null;
}

/** Both versions, for a readiness probe: the query is given `timeoutMs` and never throws. */
export async function schemaVersions(sql: Sql, timeoutMs = 2_000): Promise<SchemaVersions> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs);
  });
  const applied = await Promise.race([appliedSchemaVersion(sql).catch(() => null), timeout]);
  clearTimeout(timer);
  return { expected: expectedSchemaVersion(), applied };
}
