import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { socketOf } from "@aexhq/brain-db/connect";
import { startEmbeddedPostgres } from "@aexhq/brain-db/embedded";
import postgres, { type Sql } from "postgres";

/** The Postgres a run uses: DATABASE_URL if set, else the embedded one under .brain-bench/pg. */
export interface Cluster {
  adminUrl: string;
  description: string;
  stop(): Promise<void>;
}

export async function resolveCluster(root: string): Promise<Cluster> {
  const url = process.env.DATABASE_URL;
  if (url) return { adminUrl: url, description: `DATABASE_URL (${redact(url)})`, stop: async () => {} };
  const dir = join(root, ".brain-bench");
  mkdirSync(dir, { recursive: true });
  // Keeps the data directory out of git without touching the repository's .gitignore.
  writeFileSync(join(dir, ".gitignore"), "*\n");
  const embedded = await startEmbeddedPostgres({ dataDir: join(dir, "pg") });
  return { adminUrl: embedded.url, description: `embedded (${join(dir, "pg")})`, stop: embedded.stop };
}

/** A URL for another database on the same server. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

export function adminSql(url: string): Sql {
  return plainSql(url, 1);
}

/**
 * A bare postgres.js pool for the bench's own work (baselines, setup), reaching Postgres the way
 * Brain does: a URL's libpq-style `?host=/socket/dir` means the Unix socket, for both.
 */
export function plainSql(url: string, max: number): Sql {
  const socket = socketOf(url);
  return postgres(socket.url, { max, onnotice: () => {}, ...(socket.path ? { path: socket.path } : {}) });
}

/** A run killed before it could drop its database leaves it behind; a later run drops it after this. */
const STALE_MS = 6 * 60 * 60 * 1000;

/** Creates a fresh database for this run; the name carries the time so leftovers are recognisable. */
export async function createRunDatabase(adminUrl: string): Promise<string> {
  const name = `brain_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 6)}`;
  const admin = adminSql(adminUrl);
  try {
    const rows = await admin<{ datname: string }[]>`
      SELECT datname FROM pg_database WHERE datname LIKE 'brain\_bench\_%'`;
    for (const { datname } of rows) {
      const born = Number.parseInt(datname.split("_")[2] ?? "", 36);
      if (Number.isFinite(born) && Date.now() - born > STALE_MS) {
        await admin.unsafe(`DROP DATABASE IF EXISTS "${datname}" WITH (FORCE)`);
      }
    }
    await admin.unsafe(`CREATE DATABASE "${name}" TEMPLATE template0`);
  } finally {
    await admin.end();
  }
  return name;
}

export async function dropRunDatabase(adminUrl: string, name: string): Promise<void> {
  const admin = adminSql(adminUrl);
  try {
    await admin.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  } finally {
    await admin.end();
  }
}

export interface PostgresInfo {
  version: string;
  fsync: string;
  synchronousCommit: string;
  walSyncMethod: string;
  sharedBuffers: string;
  /** Whether the server preloads pg_stat_statements (each scenario's database then creates the extension). */
  pgStatStatements: boolean;
}

export async function postgresInfo(sql: Sql): Promise<PostgresInfo> {
  const [row] = await sql<{ version: string; fsync: string; sc: string; wsm: string; sb: string }[]>`
    SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync,
           current_setting('synchronous_commit') AS sc, current_setting('wal_sync_method') AS wsm,
           current_setting('shared_buffers') AS sb`;
  return {
    version: row!.version,
    fsync: row!.fsync,
    synchronousCommit: row!.sc,
    walSyncMethod: row!.wsm,
    sharedBuffers: row!.sb,
    pgStatStatements: await preloadsPgStatStatements(sql),
  };
}

async function preloadsPgStatStatements(sql: Sql): Promise<boolean> {
  const [row] = await sql<{ on: boolean }[]>`
    SELECT 'pg_stat_statements' = ANY (string_to_array(current_setting('shared_preload_libraries'), ', ')) AS on`;
  return row?.on ?? false;
}

/** pg_stat_statements in a database, when the server preloads it: then a scenario records its top statements. */
export async function enablePgStatStatements(sql: Sql): Promise<boolean> {
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`;
    return true;
  } catch {
    return false;
  }
}

export interface StatementStat {
  query: string;
  calls: number;
  totalMs: number;
  meanMs: number;
  rows: number;
  /** Times it was planned, and the planning time, when pg_stat_statements.track_planning is on (else 0). */
  plans: number;
  planMs: number;
}

export async function resetStatements(sql: Sql): Promise<void> {
  await sql`SELECT pg_stat_statements_reset()`;
}

/**
 * The statements that took the most execution time in this database since the last reset. Enough
 * of them that cheap, numerous ones (a foreign key's check costs microseconds) are counted too.
 */
export async function topStatements(sql: Sql, limit = 80): Promise<StatementStat[]> {
  const rows = await sql<
    { query: string; calls: number; total: number; mean: number; rows: number; plans: number; plan: number }[]
  >`
    SELECT s.query, s.calls::float8 AS calls, s.total_exec_time AS total, s.mean_exec_time AS mean,
           s.rows::float8 AS rows, s.plans::float8 AS plans, s.total_plan_time AS plan
    FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid
    WHERE d.datname = current_database()
    ORDER BY s.total_exec_time DESC LIMIT ${limit}`;
  return rows.map((r) => ({
    query: r.query.replace(/\s+/g, " ").slice(0, 300),
    calls: r.calls,
    totalMs: Math.round(r.total * 10) / 10,
    meanMs: Math.round(r.mean * 1000) / 1000,
    rows: r.rows,
    plans: r.plans,
    planMs: Math.round(r.plan * 10) / 10,
  }));
}

function redact(url: string): string {
  const { host, pathname } = new URL(url);
  return `${host}${pathname}`;
}
