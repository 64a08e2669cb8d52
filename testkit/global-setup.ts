import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { connect, type Sql } from "@aexhq/brain-db/connect";
import { startCitusCluster, startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import { loadMigrations, migrate } from "@aexhq/brain-db/migrate";
import { startBoss } from "@aexhq/brain-db/queue";
import type { TestProject } from "vitest/node";
import { createdAt, dropDatabase, ident, retryWhileInUse, uniqueName, withAdmin, withDatabase } from "./database.js";
import { type PgBouncer, startPgBouncer } from "./pgbouncer.js";

declare module "vitest" {
  interface ProvidedContext {
    /** A URL to the test server's `postgres` database, for a role that may create databases. */
    brainAdminUrl: string;
    /** The migrated database that createTestDatabase() clones. */
    brainTemplate: string;
    /**
     * With BRAIN_TEST_POOLER=pgbouncer, the port of a PgBouncer in transaction mode in front of
     * that server: test databases' `url`s go through it (0: none).
     */
    brainPoolerPort: number;
    /**
     * Whether servers and workers behind that pooler are also given BRAIN_DIRECT_URL
     * (BRAIN_TEST_POOLER=pgbouncer), or must poll without it (pgbouncer-polling).
     */
    brainPoolerDirect: boolean;
    /**
     * With BRAIN_TEST_CITUS=1, the worker nodes of the Citus cluster whose coordinator is
     * brainAdminUrl: each test database is made a cluster of its own (empty: none).
     */
    brainCitusWorkers: string[];
  }
}

const ROOT = fileURLToPath(new URL("..", import.meta.url));
/** Databases a killed run left behind are dropped by a later run once this old. */
const STALE_MS = 6 * 60 * 60 * 1000;

interface Postgres {
  url: string;
  /** The Citus workers when `url` is a coordinator. */
  workers?: string[];
  description: string;
  stop(): Promise<void>;
}

/** Resolves one Postgres for the whole run and a migrated template on it; returns the teardown. */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const postgres = await resolvePostgres();
  let pooler: PgBouncer | undefined;
  try {
    const template = await ensureTemplate(postgres.url);
    const version = await withAdmin(postgres.url, async (admin) => {
      const [row] = await admin<{ v: string }[]>`SELECT current_setting('server_version') AS v`;
      return row?.v ?? "?";
    });
    pooler = await startPooler(postgres.url);
    project.provide("brainAdminUrl", postgres.url);
    project.provide("brainTemplate", template);
    project.provide("brainPoolerPort", pooler?.port ?? 0);
    project.provide("brainPoolerDirect", process.env.BRAIN_TEST_POOLER !== "pgbouncer-polling");
    project.provide("brainCitusWorkers", postgres.workers ?? []);
    console.log(
      `[testkit] Postgres ${version}: ${postgres.description}; template ${template}; ${pooler ? `through PgBouncer (transaction mode) on ${pooler.port}; ` : ""}ready in ${Date.now() - started} ms`,
    );
  } catch (error) {
    await pooler?.stop();
    await postgres.stop();
    throw error;
  }
  return async () => {
    await pooler?.stop();
    await postgres.stop();
  };
}

/**
 * BRAIN_TEST_POOLER=pgbouncer (or pgbouncer-polling, servers without a direct URL): a PgBouncer in
 * transaction mode in front of the test server.
 */
async function startPooler(adminUrl: string): Promise<PgBouncer | undefined> {
  const kind = process.env.BRAIN_TEST_POOLER;
  if (!kind) return undefined;
  if (kind !== "pgbouncer" && kind !== "pgbouncer-polling")
    throw new Error(`BRAIN_TEST_POOLER=${kind}: pgbouncer or pgbouncer-polling`);
  return startPgBouncer(adminUrl);
}

/**
 * BRAIN_TEST_CITUS=1: a Citus cluster of the run's own (a coordinator and two workers). Else
 * DATABASE_URL if set; else a container if a container runtime answers; else an embedded server.
 */
async function resolvePostgres(): Promise<Postgres> {
  if (process.env.BRAIN_TEST_CITUS === "1") {
    // Each test makes few rows: four shards a table keep distribution quick.
    const cluster = await startCitusCluster({ shardCount: 4 });
    const description = `Citus coordinator (${redact(cluster.url)}) and ${cluster.workerUrls.length} workers`;
    return { url: cluster.url, workers: cluster.workerUrls, description, stop: cluster.destroy };
  }
  const url = process.env.DATABASE_URL;
  if (url) return { url, description: `DATABASE_URL (${redact(url)})`, stop: async () => {} };
  const container = await startContainer();
  if (container) return container;
  const dataDir = join(ROOT, ".brain-test", "pg");
  const embedded = await startEmbeddedPostgres({ dataDir });
  return { url: embedded.url, description: `embedded (${redact(embedded.url)}, ${dataDir})`, stop: embedded.stop };
}

async function startContainer(): Promise<Postgres | undefined> {
  const { GenericContainer, Wait, getContainerRuntimeClient } = await import("testcontainers");
  // An unreachable DOCKER_HOST can make the probe slow; no answer within 5 s counts as no runtime.
  const probe = getContainerRuntimeClient().then(
    () => true,
    () => false,
  );
  if (!(await Promise.race([probe, new Promise<false>((done) => setTimeout(done, 5_000, false).unref())]))) {
    return undefined;
  }
  const container = await new GenericContainer("postgres:16-alpine")
    .withEnvironment({ POSTGRES_PASSWORD: "postgres" })
    .withExposedPorts(5432)
    // The image's entrypoint starts Postgres twice (init, then for real); wait for the second.
    .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
    .start();
  const url = `postgres://postgres:postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
  return {
    url,
    description: `testcontainers postgres:16-alpine (${redact(url)})`,
    stop: async () => {
      await container.stop();
    },
  };
}

/**
 * The template is named after a hash of the migrations, so a changed migration gets a new one.
 * It is built under a temporary name and renamed when fully migrated: a database with the
 * template's name is always complete, and a run killed mid-build leaves only a stray to sweep.
 */
async function ensureTemplate(adminUrl: string): Promise<string> {
  const hash = createHash("sha256");
  for (const m of loadMigrations()) hash.update(`${m.name}\0${m.checksum}\0`);
  hash.update(`pg-boss ${bossVersion()}`);
  const template = `brain_tpl_${hash.digest("hex").slice(0, 8)}`;
  return withAdmin(adminUrl, async (admin) => {
    await sweepStale(adminUrl, admin);
    const [found] = await admin`SELECT 1 FROM pg_database WHERE datname = ${template}`;
    if (found) return template;
    const building = uniqueName("brain_tplbuild");
    await admin.unsafe(`CREATE DATABASE ${ident(building)} TEMPLATE template0`);
    try {
      const sql = connect(withDatabase(adminUrl, building), { schema: "brain", searchPath: true, max: 1 });
      try {
        await migrate(sql, "brain");
        // pg-boss installs its own schema on first start; doing it once here keeps each test's
        // server start fast.
        const boss = await startBoss(sql, "brain", () => {});
        await boss.stop({ graceful: false });
      } finally {
        await sql.end();
      }
      // Nobody may connect to the template, so cloning it never meets "being accessed by other users".
      await admin.unsafe(`ALTER DATABASE ${ident(building)} WITH ALLOW_CONNECTIONS false`);
      await retryWhileInUse(async () => {
        await admin.unsafe(`ALTER DATABASE ${ident(building)} RENAME TO ${ident(template)}`);
      });
      return template;
    } catch (error) {
      await dropDatabase(adminUrl, building);
      // 42P04 duplicate_database: a concurrent run built the same template first.
      if ((error as { code?: string }).code === "42P04") return template;
      throw error;
    }
  });
}

async function sweepStale(adminUrl: string, admin: Sql): Promise<void> {
  const rows = await admin<{ datname: string }[]>`SELECT datname FROM pg_database WHERE datname LIKE 'brain%'`;
  for (const { datname } of rows) {
    const at = createdAt(datname, "brain_t") ?? createdAt(datname, "brain_tplbuild");
    if (at !== undefined && Date.now() - at > STALE_MS) await dropDatabase(adminUrl, datname);
  }
}

/** host:port/database, without credentials, for the log. */
function redact(url: string): string {
  const { host, pathname } = new URL(url);
  return `${host}${pathname}`;
}

function bossVersion(): string {
  const require = createRequire(import.meta.url);
  return (require("pg-boss/package.json") as { version: string }).version;
}
