import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { connect, type Sql } from "@aexhq/brain-db";

/** A database of its own for one test file, on the Postgres that global-setup.ts resolved. */
export interface TestDatabase {
  url: string;
  name: string;
  /** The schema Brain's tables are in (empty for createEmptyDatabase()). */
  schema: "brain";
  /** A pool with `brain` on its search_path. */
  sql: Sql;
  /** Closes the pool and drops the database, whoever is still connected. Idempotent. */
  drop(): Promise<void>;
}

export interface TestDatabaseOptions {
  /** Pool size of `sql`; default 5. */
  max?: number;
}

/** A fresh database cloned from the migrated template: Brain's schema is in place. */
export async function createTestDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const { inject } = await import("vitest");
  return create(inject("brainAdminUrl"), inject("brainTemplate"), options);
}

/** A fresh database with no migrations applied, for testing the migrator itself. */
export async function createEmptyDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const { inject } = await import("vitest");
  // template0 accepts no connections, so nobody can be "accessing" it while we copy it.
  return create(inject("brainAdminUrl"), "template0", options);
}

async function create(adminUrl: string, template: string, options: TestDatabaseOptions): Promise<TestDatabase> {
  if (!adminUrl || !template) throw new Error("testkit/global-setup.ts did not run: use the root vitest.config.ts");
  const name = uniqueName("brain_t");
  await createDatabase(adminUrl, name, template);
  const url = withDatabase(adminUrl, name);
  const sql = connect(url, { schema: "brain", max: options.max ?? 5, applicationName: "brain-test" });
  let dropped: Promise<void> | undefined;
  const drop = () => {
    dropped ??= sql.end({ timeout: 1 }).then(() => dropDatabase(adminUrl, name));
    return dropped;
  };
  return { url, name, schema: "brain", sql, drop };
}

/** `<prefix>_<time>_<random>`: the time lets a later run sweep what a killed run left behind. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(4).toString("hex")}`;
}

/** When uniqueName() made `name`, in ms since the epoch; undefined for other names. */
export function createdAt(name: string, prefix: string): number | undefined {
  const match = new RegExp(`^${prefix}_([0-9a-z]+)_[0-9a-f]{8}$`).exec(name);
  return match?.[1] ? Number.parseInt(match[1], 36) : undefined;
}

/** The same server and credentials, another database. */
export function withDatabase(url: string, database: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(database)}`;
  return parsed.toString();
}

export async function createDatabase(adminUrl: string, name: string, template: string): Promise<void> {
  await withAdmin(adminUrl, (admin) =>
    retryWhileInUse(async () => {
      await admin.unsafe(`CREATE DATABASE ${ident(name)} TEMPLATE ${ident(template)}`);
    }),
  );
}

export async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, async (admin) => {
    await admin.unsafe(`DROP DATABASE IF EXISTS ${ident(name)} WITH (FORCE)`);
  });
}

/** Runs `work` on a one-connection pool to the admin database, closed afterwards. */
export async function withAdmin<T>(adminUrl: string, work: (admin: Sql) => Promise<T>): Promise<T> {
  const admin = connect(adminUrl, { schema: "public", max: 1, applicationName: "brain-test-admin" });
  try {
    return await work(admin);
  } finally {
    await admin.end({ timeout: 1 });
  }
}

/**
 * Retries on SQLSTATE 55006 ("source database is being accessed by other users"): a pool that
 * was just closed leaves its server backends exiting for a few milliseconds more.
 */
export async function retryWhileInUse<T>(work: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await work();
    } catch (error) {
      if ((error as { code?: string }).code !== "55006" || Date.now() > deadline) throw error;
      await sleep(50);
    }
  }
}

/** Database names here are generated or constants; quoting keeps them exact. */
export function ident(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
