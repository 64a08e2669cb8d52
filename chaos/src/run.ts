// `npm run chaos`: Brain under load while processes and Postgres fail at random points, then the
// journal's invariants checked in SQL. Exits non-zero on any violation. See docs/testing.md, Chaos.
import { mkdtempSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import postgres from "postgres";
import { parseOptions } from "./args.js";
import { startCitusChaosCluster } from "./citus-cluster.js";
import { startCluster } from "./cluster.js";
import { Faults } from "./faults.js";
import { DEADLINE_SLACK_SECONDS, loadRunRecords, runChecks } from "./invariants.js";
import { Load } from "./load.js";
import { startPgBouncer } from "./pgbouncer.js";
import type { UnexpectedExit } from "./processes.js";
import { gatherRecords } from "./records.js";
import { startReplicatedCluster } from "./replicated-cluster.js";
import { type Liveness, printReport, runStats } from "./report.js";
import { firstTurnAfter } from "./resumption.js";
import { Rng } from "./rng.js";
import { sessionScript } from "./script.js";
import { startStack } from "./stack.js";
import { Supervisor } from "./supervisor.js";
import { startTarget } from "./target.js";

const options = parseOptions(process.argv.slice(2));
// Ctrl-C or a CI timeout: exit through the exit hooks, which kill the children and stop Postgres.
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));
// Bounded whatever happens: a run that wedges (a server that never answers) ends here.
const WATCHDOG_S = options.seconds + 300;
setTimeout(() => {
  console.error(`chaos: still running after ${WATCHDOG_S} s; giving up (seed ${options.seed})`);
  process.exit(2);
}, WATCHDOG_S * 1_000).unref();
const started = Date.now();
const elapsed = () => Math.round((Date.now() - started) / 100) / 10;
const say = (line: string) => console.log(`[chaos ${elapsed().toFixed(1).padStart(6)} s] ${line}`);
say(
  `seed ${options.seed}; ${options.seconds} s of faults (${options.faults.join(", ") || "none"}${options.failover ? ", one pg_failover" : ""})`,
);

const rng = new Rng(options.seed);
const runDir = mkdtempSync(join(tmpdir(), "brain-chaos-"));
const replicated = options.failover ? await startReplicatedCluster(runDir) : null;
const cluster = replicated ?? (options.citus ? await startCitusChaosCluster(runDir) : await startCluster(runDir));
// PgBouncer stays up while the cluster restarts under it, as a managed pooler does.
const pooler = options.pooler ? await startPgBouncer(cluster.url) : null;
const target = await startTarget();
const exits: UnexpectedExit[] = [];
const scripts = [0, 1].map((h) =>
  Array.from({ length: options.sessionsPerHost }, (_, s) => sessionScript(rng, h * 100 + s + 1, 600)),
);
const stack = await startStack({
  runDir,
  databaseUrl: pooler ? pooler.through(cluster.url) : cluster.url,
  ...(options.pooler === "direct" ? { directUrl: cluster.url } : {}),
  targetUrl: target.url,
  scripts,
  onUnexpectedExit: (exit) => {
    exits.push({ ...exit, at: elapsed() });
    say(`UNEXPECTED EXIT ${exit.name} (pid ${exit.pid}): ${exit.code ?? exit.signal}`);
  },
});
say(`2 servers, 1 worker, 2 hosts, ${stack.sessions.length} sessions; run directory ${runDir}`);
if (pooler) say(`through PgBouncer (transaction mode) on ${pooler.port}, ${options.pooler}`);
if (options.citus) say("on a Citus cluster: a coordinator and two workers; pg_restart faults restart a worker");
say(`servers: ${stack.serverUrls.map((url, i) => `${stack.servers[i]!.name} ${url}`).join(", ")}`);

const supervisor = new Supervisor(stack.all());
supervisor.start();
const load = new Load({
  token: stack.token,
  liveUrls: () => stack.serverUrls.filter((_, i) => stack.servers[i]!.alive),
});
load.start(stack.sessions);
const faults = new Faults(rng, options.faults, { cluster, ...stack, supervisor }, elapsed, say);
// With --failover, the primary is killed and its standby promoted 40 % of the way through.
// Work must resume on the new primary within RESUME_MS of its promotion: a turn ends there.
const RESUME_MS = 30_000;
let resumed: Promise<number | null> | undefined;
const failover = replicated
  ? {
      at: Date.now() + options.seconds * 400,
      async run() {
        const detail = await replicated.failover();
        // From the promotion: a turn that ended before it committed on the old primary.
        resumed = firstTurnAfter(cluster.url, new Date(), RESUME_MS);
        return detail;
      },
    }
  : undefined;
await faults.run(Date.now() + options.seconds * 1_000, options.faultGapMs, failover);
say(`faults stopped after ${faults.log.length}; quiet period`);
await load.stop();
say("load stopped; one more turn per session");

// Quiet period: everything is started again, every session must answer one more turn, the open
// calls' deadlines pass, and every server must still answer a request that reads the database.
await supervisor.reviveAll();
const liveness: Liveness = { recovered: 0, notRecovered: [], unresponsive: [] };
await Promise.all(
  stack.sessions.map(async (id) => {
    if (await load.send(id, `${id}-final`, "final message", 6)) liveness.recovered++;
    else liveness.notRecovered.push(id);
  }),
);
say(`${liveness.recovered} of ${stack.sessions.length} sessions completed it; waiting for open calls' deadlines`);
const sql = postgres(cluster.url, { max: 2, onnotice: () => {} });
for (let waited = 0; waited < 40_000; waited += 1_000) {
  const [row] = await sql<{ open: number; remaining: number | null }[]>`
    SELECT count(*)::int AS open, extract(epoch FROM max(deadline_at) - now())::float8 AS remaining
    FROM brain.tool_calls WHERE status <> 'ended'`;
  if (!row || row.open === 0 || (row.remaining ?? 0) < -DEADLINE_SLACK_SECONDS / 2) break;
  await sleep(1_000);
}
// Ready (/readyz: the database and the LISTEN connection are back) and serving a request that
// reads the database.
const answers = (url: string, path: string) =>
  fetch(`${url}${path}`, {
    headers: { authorization: `Bearer ${stack.token}` },
    signal: AbortSignal.timeout(10_000),
  }).then(
    (r) => r.ok,
    () => false,
  );
for (const [i, url] of stack.serverUrls.entries()) {
  for (const path of ["/readyz", "/v1/sessions?limit=1"]) {
    if (!(await answers(url, path))) liveness.unresponsive.push(`${stack.servers[i]!.name} (${path})`);
  }
}
await supervisor.stop();
for (const p of stack.all()) if (!p.alive) liveness.unresponsive.push(`${p.name} (not running)`);

say("checking invariants");
await loadRunRecords(sql, gatherRecords(stack.hostRecordFiles, load.acks, load.lateWaits, target.received));
const results = await runChecks(sql);
const stats = await runStats(sql);
await sql.end({ timeout: 1 });

for (const p of [...stack.hosts, ...stack.workers, ...stack.servers]) await p.stop();
await target.close();
await pooler?.stop();
await cluster.stop();

const resumedMs = resumed ? await resumed : undefined;
const ok = printReport({
  options,
  seconds: elapsed(),
  faults: faults.log,
  load: load.stats,
  stats,
  exits,
  liveness,
  startFailures: supervisor.startFailures,
  results,
  ...(resumedMs === undefined ? {} : { resumedMs }),
});
if (ok && !options.keep) rmSync(runDir, { recursive: true, force: true });
else {
  // The logs stay; the cluster's data files (tens of MB) go, unless asked to keep everything.
  renameSync(cluster.logFile, join(runDir, "postgres.log"));
  if (!options.keep) {
    rmSync(join(runDir, "pg"), { recursive: true, force: true });
    rmSync(join(runDir, "pg-standby"), { recursive: true, force: true });
  }
  console.log(`run directory (server, worker, host and Postgres logs): ${runDir}`);
}
process.exit(ok ? 0 : 1);
