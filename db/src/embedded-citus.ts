import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect } from "./connect.js";
import { type EmbeddedPostgres, startEmbeddedPostgres } from "./embedded.js";

/**
 * A Citus cluster on loopback, for the tests and the benchmark: a coordinator and `workers` worker
 * nodes, each a Postgres of its own data directory, run from the Postgres that Citus is installed
 * into (vendor/citus/build.sh; the test matrix's `citus` leg builds it when missing). Every node's
 * `postgres` database has the extension; the coordinator knows the workers.
 */
export interface CitusCluster {
  /** The coordinator's `postgres` database: what Brain is given as DATABASE_URL. */
  url: string;
  workerUrls: string[];
  /** Each node's data directory, the coordinator's first (its postmaster.pid names its process). */
  dataDirs: string[];
  /** Stops a worker (fast or immediate) and starts it again on its port. */
  restartWorker(index: number, mode: "fast" | "immediate", downMs?: number): Promise<void>;
  destroy(): Promise<void>;
}

/** Where Citus is installed: Debian's Postgres 15 unless BRAIN_CITUS_PG_BIN names another bin dir. */
export function citusBinDir(): string {
  return process.env.BRAIN_CITUS_PG_BIN ?? "/usr/lib/postgresql/15/bin";
}

/** True when the Postgres of citusBinDir() has Citus built into it (citusInstalled in migrate asks a database). */
export function citusBuilt(): boolean {
  return existsSync(join(citusBinDir(), "..", "lib", "citus.so"));
}

export interface CitusClusterOptions {
  /** Worker nodes; default 2. */
  workers?: number;
  /** Shards a distributed table gets (`citus.shard_count`); default Citus's 32. */
  shardCount?: number;
}

export async function startCitusCluster(options: CitusClusterOptions = {}): Promise<CitusCluster> {
  const workers = options.workers ?? 2;
  const settings = {
    shared_preload_libraries: "citus",
    max_prepared_transactions: "100",
    // Loopback only; and libpq in a server run as root's child would look for root's client certificate.
    "citus.node_conninfo": "sslmode=disable",
    "citus.shard_count": String(options.shardCount ?? 32),
  };
  if (!citusBuilt()) throw new Error(`Citus is not installed for ${citusBinDir()}: run vendor/citus/build.sh`);
  const dir = mkdtempSync(join(tmpdir(), "brain-citus-"));
  const packageRoot = fakePackage(dir);
  const nodes: EmbeddedPostgres[] = [];
  const start = (name: string, port?: number) =>
    startEmbeddedPostgres({
      dataDir: join(dir, name),
      packageRoot,
      settings,
      port,
    });
  try {
    for (const name of ["coordinator", ...Array.from({ length: workers }, (_, i) => `worker${i}`)]) {
      nodes.push(await start(name));
    }
    for (const node of nodes) await prepareNode(node.url);
    await joinWorkers(
      nodes[0]?.url ?? "",
      nodes.slice(1).map((node) => node.url),
    );
  } catch (error) {
    await Promise.all(nodes.map((node) => node.stop("immediate")));
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const coordinator = nodes[0] as EmbeddedPostgres;
  return {
    url: coordinator.url,
    workerUrls: nodes.slice(1).map((node) => node.url),
    dataDirs: ["coordinator", ...Array.from({ length: workers }, (_, i) => `worker${i}`)].map((name) =>
      join(dir, name),
    ),
    async restartWorker(index, mode, downMs = 0) {
      const node = nodes[index + 1];
      if (!node) throw new Error(`no worker ${index}`);
      await node.stop(mode);
      if (downMs > 0) await new Promise((resolve) => setTimeout(resolve, downMs));
      nodes[index + 1] = await start(`worker${index}`, node.port);
    },
    async destroy() {
      await Promise.all(nodes.map((node) => node.stop("fast")));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The layout startEmbeddedPostgres runs (`native/bin/{initdb,postgres}`), linked to citusBinDir(). */
function fakePackage(dir: string): string {
  const root = join(dir, "pg");
  mkdirSync(join(root, "native", "bin"), { recursive: true });
  for (const bin of ["initdb", "postgres"]) symlinkSync(join(citusBinDir(), bin), join(root, "native", "bin", bin));
  return root;
}

/** The extension, and the password other nodes use to reach this one (nodeid 0: every node). */
async function prepareNode(url: string): Promise<void> {
  const sql = connect(url, { schema: "public", max: 1, applicationName: "brain-citus-setup" });
  try {
    await sql`CREATE EXTENSION IF NOT EXISTS citus`;
    const password = new URL(url).password;
    await sql`INSERT INTO pg_dist_authinfo (nodeid, rolename, authinfo)
      VALUES (0, 'postgres', ${`password=${password}`}) ON CONFLICT DO NOTHING`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/** Tells the coordinator database at `url` where it is and which workers it has. */
async function joinWorkers(url: string, workerUrls: readonly string[]): Promise<void> {
  const sql = connect(url, { schema: "public", max: 1, applicationName: "brain-citus-setup" });
  try {
    await sql`SELECT citus_set_coordinator_host('127.0.0.1', ${Number(new URL(url).port)})`;
    for (const worker of workerUrls) await sql`SELECT citus_add_node('127.0.0.1', ${Number(new URL(worker).port)})`;
  } finally {
    await sql.end({ timeout: 1 });
  }
}

/**
 * Makes database `name`, already created on the coordinator, a cluster of its own: Citus keeps
 * its nodes per database, so each worker gets an empty database of that name, and every node the
 * extension. What a test database needs before Brain migrates (and distributes) in it.
 */
export async function joinCitusDatabase(coordinatorUrl: string, workerUrls: readonly string[], name: string) {
  for (const worker of workerUrls) {
    await withNode(worker, async (sql) => {
      const [found] = await sql`SELECT FROM pg_database WHERE datname = ${name}`;
      if (!found) await sql.unsafe(`CREATE DATABASE "${name}" TEMPLATE template0`);
    });
    await prepareNode(withDatabaseName(worker, name));
  }
  const url = withDatabaseName(coordinatorUrl, name);
  await prepareNode(url);
  await joinWorkers(url, workerUrls);
}

/** Drops database `name` on every worker (the coordinator's is the caller's). */
export async function dropCitusDatabase(workerUrls: readonly string[], name: string): Promise<void> {
  for (const worker of workerUrls) {
    await withNode(worker, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`));
  }
}

async function withNode<T>(url: string, work: (sql: ReturnType<typeof connect>) => Promise<T>): Promise<T> {
  const sql = connect(url, { schema: "public", max: 1, applicationName: "brain-citus-setup" });
  try {
    return await work(sql);
  } finally {
    await sql.end({ timeout: 1 });
  }
}

function withDatabaseName(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${encodeURIComponent(name)}`;
  return parsed.toString();
}
