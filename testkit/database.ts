import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { dropCitusDatabase, joinCitusDatabase } from "@aexhq/brain-db/embedded";
import { placeOnCitus } from "@aexhq/brain-db/migrate";

/** A database of its own for one test file, on the Postgres that global-setup.ts resolved. */
export interface TestDatabase {
  /** What a server or worker is given as DATABASE_URL: through PgBouncer in the pooler leg. */
  url: string;
  /** The database itself, never through a pooler (what BRAIN_DIRECT_URL would name). */
  directUrl: string;
  /** BRAIN_DIRECT_URL for a server or worker given `url`: set in the pooler leg, else undefined. */
  serverDirectUrl: string | undefined;
  name: string;
  /** The schema Brain's tables are in (empty for createEmptyDatabase()). */
  schema: "brain";
  /** A pool with `brain` on its search_path, on the direct URL. */
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
  const pooler = { port: inject("brainPoolerPort"), direct: inject("brainPoolerDirect") };
  return create(inject("brainAdminUrl"), inject("brainTemplate"), options, pooler, inject("brainCitusWorkers"));
}

/** A fresh database with no migrations applied, for testing the migrator itself. */
export async function createEmptyDatabase(options: TestDatabaseOptions = {}): Promise<TestDatabase> {
  const { inject } = await import("vitest");
  // template0 accepts no connections, so nobody can be "accessing" it while we copy it.
  return create(inject("brainAdminUrl"), "template0", options, undefined, inject("brainCitusWorkers"));
}

async function create(
  adminUrl: string,
  template: string,
  options: TestDatabaseOptions,
  pooler = { port: 0, direct: false },
  citusWorkers: readonly string[] = [],
): Promise<TestDatabase> {
  if (!adminUrl || !template) throw new Error("testkit/global-setup.ts did not run: use the root vitest.config.ts");
  const name = uniqueName("brain_t");
  await createDatabase(adminUrl, name, template);
  const directUrl = withDatabase(adminUrl, name);
  // On a Citus cluster (BRAIN_TEST_CITUS=1): a cluster of its own, Brain's tables distributed
  // (placeOnCitus, as `brain migrate --citus` does; createEmptyDatabase's have none yet).
  if (citusWorkers.length > 0) await onCitus(adminUrl, citusWorkers, name, template !== "template0");
  const url = pooler.port ? throughPort(directUrl, pooler.port) : directUrl;
  const serverDirectUrl = pooler.port && pooler.direct ? directUrl : undefined;
  const sql = connect(directUrl, {
    schema: "brain",
    searchPath: true,
    max: options.max ?? 5,
    applicationName: "brain-test",
  });
  let dropped: Promise<void> | undefined;
  const drop = () => {
    dropped ??= sql
      .end({ timeout: 1 })
      .then(() => dropDatabase(adminUrl, name))
      .then(() => dropCitusDatabase(citusWorkers, name));
    return dropped;
  };
  return { url, directUrl, serverDirectUrl, name, schema: "brain", sql, drop };
}

async function onCitus(adminUrl: string, workers: readonly string[], name: string, migrated: boolean) {
  await joinCitusDatabase(adminUrl, workers, name);
  if (!migrated) return;
  const sql = connect(withDatabase(adminUrl, name), { schema: "brain", max: 1, applicationName: "brain-test-admin" });
  try {
    await placeOnCitus(sql, "brain");
  } finally {
    await sql.end({ timeout: 1 });
  }
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

/**
 * In the pooler leg, what a server or worker given `url` also needs: BRAIN_DIRECT_URL, the same
 * database without the pooler (LISTEN, the journal writer); nothing for a URL not through it, nor
 * in the polling leg.
 */
export async function directEnvFor(url: string): Promise<{ BRAIN_DIRECT_URL?: string }> {
  if (!URL.canParse(url)) return {};
  const { inject } = await import("vitest");
  const port = inject("brainPoolerPort");
  const parsed = new URL(url);
  if (!port || !inject("brainPoolerDirect") || parsed.port !== String(port)) return {};
  const admin = new URL(inject("brainAdminUrl"));
  parsed.hostname = admin.hostname;
  parsed.port = admin.port;
  return { BRAIN_DIRECT_URL: parsed.toString() };
}

/** The same credentials and database, through a pooler listening on loopback `port`. */
function throughPort(url: string, port: number): string {
  const parsed = new URL(url);
  parsed.hostname = "127.0.0.1";
  parsed.port = String(port);
  return parsed.toString();
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
