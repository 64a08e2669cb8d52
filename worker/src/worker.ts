import { periodic } from "@aexhq/brain-contracts";
import type { Egress } from "@aexhq/brain-core/egress";
import type { ToolModelCalls } from "@aexhq/brain-core/models";
import { type CommitFeed, type CommitHandler, listenForCommits } from "@aexhq/brain-db/commits";
import {
  bindDistributed,
  connectToRole,
  type DatabaseAvailability,
  lanesHoldSessions,
  type Sql,
} from "@aexhq/brain-db/connect";
import { distributedOnCitus, migrate, migrateRights } from "@aexhq/brain-db/migrate";
import { endCalls, releaseResumableCalls, stopServer } from "@aexhq/brain-db/ops";
import { startBoss, WORKER_QUEUE } from "@aexhq/brain-db/queue";
import type { JournalWriter } from "@aexhq/brain-db/writer";
import type { PgBoss } from "pg-boss";
import { z } from "zod";
import { buildWorker } from "./build-worker.js";
import type { WorkerConfig } from "./config.js";
import { consumeJobs } from "./consume.js";
import { startHealthServer } from "./health-server.js";
import { runWorkerJob } from "./invocation.js";
import { createLogger, type Logger } from "./log.js";
import type { WorkerMetrics } from "./metrics.js";
import { register } from "./registration.js";
import type { RunningCalls } from "./running-calls.js";
import type { SparePool } from "./spare-threads.js";
import { HEARTBEAT_MS, startWorkerLoops } from "./worker-loops.js";

export interface StartWorkerOptions extends WorkerConfig {
  /** Defaults to a pino logger at `logLevel` on stderr. */
  log?: Logger;
  /**
   * Where it hears of commits that end its calls elsewhere: a server's in the same process
   * (`brain start`), or, by default, a LISTEN of its own.
   */
  commits?: CommitFeed;
  /**
   * How often it looks, untold, for its calls ended elsewhere and for lost jobs (default every
   * heartbeat): the backstop of the commits it hears of.
   */
  backstopMs?: number;
}

export interface RunningWorker {
  /** Its id in `servers` (kind "worker"); it changes only if the worker had to re-register. */
  readonly id: string;
  /** Its probes' base URL, when `health` was configured. */
  readonly healthUrl: string | undefined;
  /** Stops taking jobs, lets running calls finish for a moment, then ends the rest `unknown`. */
  stop(): Promise<void>;
}

/**
 * On stop, how long running invocations get to finish by themselves. The whole stop stays well
 * under the 10 s a launcher gives a process to exit.
 */
const SHUTDOWN_GRACE_MS = 2000;

/** Without LISTEN (a pooler, no direct URL), how often the worker looks for its calls that ended. */
const POLL_ENDED_MS = 1_000;

const JobSchema = z.object({ sessionId: z.uuid(), seq: z.number().int().positive() });

/** The most one owner's calls may hold of a worker's slots: all but one, unless configured. */
function tokenSlotsOf(options: Pick<WorkerConfig, "concurrency" | "tokenSlots">): number {
  return Math.max(1, Math.min(options.tokenSlots ?? options.concurrency - 1, options.concurrency));
}

/**
 * Connects, migrates and registers; builds the worker's parts (build-worker.ts, no I/O); then
 * starts, in order: hearing of ended calls, the loops (worker-loops.ts), pg-boss and its
 * consumer, and the probes. stop() undoes it.
 */
export async function startWorker(options: StartWorkerOptions): Promise<RunningWorker> {
  const log = options.log ?? createLogger(options.logLevel);
  const sql = await connectToRole(options.databaseUrl, {
    schema: options.schema,
    max: 8,
    applicationName: "brain-worker",
    ...(options.databasePasswordFile ? { passwordFile: options.databasePasswordFile } : {}),
    ...(options.directUrl ? { directUrl: options.directUrl } : {}),
  });
  await migrate(sql, options.schema);
  const identity = { current: await register(sql) };
  const distributed = await distributedOnCitus(sql, options.schema);
  if (distributed) bindDistributed(sql);
  const w = buildWorker(options, sql, log, identity, { distributed });
  const stopHearing = await hearEndedCalls({ sql, log, ...w, commits: options.commits });
  let bossReady: PgBoss | undefined;
  const loops = startWorkerLoops({ sql, log, ...w, identity, boss: () => bossReady, backstopMs: options.backstopMs });
  const { may: mayMigrate } = await migrateRights(sql, options.schema);
  const boss = await startBoss(sql, options.schema, (err) => log.warn({ err }, "pg-boss error"), {
    // Without a session of its own to LISTEN on (a pooler, no direct URL), pg-boss polls for jobs.
    listen: lanesHoldSessions(sql),
    migrate: mayMigrate,
  });
  bossReady = boss;
  const tokenSlots = tokenSlotsOf(options);
  await consumeComponentJobs(boss, w.jobs, { concurrency: options.concurrency, tokenSlots }, w.metrics);
  log.info(
    { workerId: identity.current.workerId, concurrency: options.concurrency, tokenSlots },
    "worker consuming component jobs",
  );
  const health =
    options.health &&
    (await startHealthServer(
      options.health.host,
      options.health.port,
      3 * HEARTBEAT_MS,
      () => ({
        workerId: identity.current.workerId,
        database: w.availability.available,
        heartbeatAgeMs: Date.now() - loops.lastBeatAt(),
        boss: bossReady !== undefined,
      }),
      w.metrics?.registry,
    ));
  let stopping: Promise<void> | undefined;
  return {
    get id() {
      return identity.current.workerId;
    },
    healthUrl: health?.url,
    stop() {
      bossReady = undefined;
      stopping ??= stopWorker({ ...w, log, loops, boss, identity, stopHearing, sql, health });
      return stopping;
    },
  };
}

/** Takes component jobs from pg-boss, each run as one call (invocation.ts), within the slots. */
async function consumeComponentJobs(
  boss: PgBoss,
  deps: Parameters<typeof runWorkerJob>[0],
  slots: Parameters<typeof consumeJobs>[1],
  metrics: WorkerMetrics | null,
): Promise<void> {
  await consumeJobs(boss, slots, async (job) => {
    const started = performance.now();
    const data = JobSchema.safeParse(job.data);
    if (!data.success) {
      deps.log.error({ jobId: job.id }, "malformed component job ignored");
      metrics?.job({ outcome: "malformed", env: null }, performance.now() - started);
      return;
    }
    const result = await runWorkerJob(deps, data.data).catch((err) => {
      deps.log.error({ err, ...data.data }, "component job failed");
      return { outcome: "failed" as const, env: null };
    });
    metrics?.job(result, performance.now() - started);
  });
}

/**
 * How the worker hears that calls it runs ended elsewhere: the commit feed of a server in the same
 * process, its own LISTEN, or (a transaction-mode pooler, no direct URL) a look every second.
 * Returns the stop.
 */
async function hearEndedCalls(deps: {
  sql: Sql;
  log: Logger;
  channel: string;
  origin: string;
  commits: CommitFeed | undefined;
  checkEnded: (sessions?: readonly string[]) => Promise<unknown>;
}): Promise<() => Promise<void>> {
  const { sql, log, checkEnded } = deps;
  const onKeys: CommitHandler = (keys, from) => {
    // Our own commits never end a call elsewhere.
    if (from !== deps.origin) void checkEnded([...keys.sessions.keys()]);
  };
  const onConnect = () => void checkEnded();
  if (deps.commits) {
    const off = deps.commits.subscribe(onKeys, onConnect);
    return async () => void off();
  }
  if (lanesHoldSessions(sql)) {
    const listener = await listenForCommits(sql, deps.channel, deps.origin, onKeys, onConnect);
    return () => listener.unlisten();
  }
  log.warn(
    { pollMs: POLL_ENDED_MS },
    "LISTEN/NOTIFY does not deliver here (DATABASE_URL goes through a transaction-mode pooler; BRAIN_DIRECT_URL is not set): ended calls are looked for every second",
  );
  const poller = periodic(async () => void (await checkEnded()), POLL_ENDED_MS, { onError: () => {} });
  return () => poller.stop();
}

/** The parts of a running worker its stop takes down. */
interface WorkerParts {
  log: Logger;
  loops: { stop(): void };
  boss: PgBoss;
  running: RunningCalls;
  models: ToolModelCalls;
  spares: SparePool;
  egress: Egress;
  writer: JournalWriter;
  identity: { current: { workerId: string; connectionId: string } };
  stopHearing: () => Promise<void>;
  sql: Sql;
  availability: DatabaseAvailability;
  health: { close(): Promise<void> } | false | undefined;
}

/**
 * Stops taking jobs, lets running calls finish for a moment, then ends the rest `unknown` (those
 * that can resume go to another worker), and gives back every connection.
 */
async function stopWorker(p: WorkerParts): Promise<void> {
  const started = Date.now();
  const phase = (name: string) => p.log.debug({ ms: Date.now() - started }, `stopping: ${name}`);
  const { connectionId, workerId } = p.identity.current;
  p.loops.stop();
  await p.boss.offWork(WORKER_QUEUE, { wait: false }).catch(() => {});
  phase("no more jobs");
  const until = Date.now() + SHUTDOWN_GRACE_MS;
  while (p.running.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
  phase(`grace over, ${p.running.size} still running`);
  p.running.stopAll("shutdown");
  // Model requests of the stopped calls are interrupted: journaled `unknown`, never replayed.
  await p.models.stopAll();
  p.spares.close();
  await p.egress.close();
  // Calls that can be resumed (MCP tasks) go to another worker; the rest were interrupted:
  // nobody can say how far they got.
  await p.writer
    .submit(releaseResumableCalls(p.boss, { connectionId }))
    .catch((err) => p.log.warn({ err }, "could not release resumable calls on shutdown"));
  await p.writer
    .submit(endCalls({ connectionId }, { status: "unknown", cause: "worker_lost" }))
    .catch((err) => p.log.warn({ err }, "could not end calls on shutdown"));
  // Drains, then gives back the writer's own connection.
  await p.writer.close();
  phase("calls ended");
  await p.boss.stop({ graceful: false, timeout: 2000 }).catch(() => {});
  phase("pg-boss stopped");
  await p.stopHearing().catch(() => {});
  phase("unlistened");
  await stopServer(p.sql, workerId).catch(() => {});
  phase("unregistered");
  // Every write has drained: whatever is still open need not be waited for long.
  p.availability.close();
  await p.sql.end({ timeout: 1 });
  if (p.health) await p.health.close();
  phase("stopped");
}
