/**
 * A component worker: consumes component jobs from pg-boss and runs each claimed call in a
 * terminable thread. It needs only the database: it migrates it (idempotent, safe beside servers),
 * registers itself, heartbeats, and listens for commits that end its calls elsewhere.
 */
import { randomUUID } from "node:crypto";
import { periodic } from "@aexhq/brain-contracts";
import { Egress } from "@aexhq/brain-core/egress";
import { ToolModelCalls } from "@aexhq/brain-core/models";
import {
  type CommitFeed,
  type CommitHandler,
  channelFor,
  connectToRole,
  DatabaseAvailability,
  endCalls,
  InvocationSigner,
  JournalWriter,
  lanesHoldSessions,
  listenForCommits,
  migrate,
  migrateRights,
  PendingRepairs,
  releaseResumableCalls,
  SecretBox,
  type Sql,
  startBoss,
  stopServer,
  WORKER_QUEUE,
} from "@aexhq/brain-db";
import type { PgBoss } from "pg-boss";
import { z } from "zod";
import { ComponentCache } from "./component-cache.js";
import type { WorkerConfig } from "./config.js";
import { consumeJobs } from "./consume.js";
import { startHealthServer } from "./health-server.js";
import { runWorkerJob } from "./invocation.js";
import { createLogger, type Logger } from "./log.js";
import { WorkerMetrics } from "./metrics.js";
import { register } from "./registration.js";
import { RunningCalls } from "./running-calls.js";
import { DEFAULT_COMPONENT_LIMITS, memoryPages } from "./sandbox/limits.js";
import { SparePool } from "./spare-threads.js";
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
  // Notifications carry their origin so a process skips its own; this one outlives re-registration.
  const origin = randomUUID();
  const channel = channelFor(options.schema);
  // While the database is away, writes fail at once; when it answers again, calls that ended
  // meanwhile are looked for (their notifications were lost).
  const availability = new DatabaseAvailability(sql, {
    onChange: (available) =>
      available ? void checkEnded() : log.warn("database unavailable: journal writes fail until it answers"),
  });
  const running = new RunningCalls();
  // Counted only where they can be read: on the health port.
  const metrics = options.metrics !== false && options.health ? new WorkerMetrics(() => running.size) : null;
  const writer = new JournalWriter(sql, {
    channel,
    origin,
    availability,
    ...(metrics ? { observer: (flush) => metrics.flushed(flush) } : {}),
  });
  const repairs = new PendingRepairs((err, key) => log.error({ err, key }, "a deferred journal write failed"));
  const limits = options.componentLimits ?? DEFAULT_COMPONENT_LIMITS;
  const cache = new ComponentCache(sql, options.cacheDir, memoryPages(limits));
  const spares = new SparePool();
  const secrets = new SecretBox(options.secretKeys);
  const egress = new Egress({ allow: options.egress.allow, proxy: options.egress.proxy });
  const models = new ToolModelCalls({
    sql,
    writer,
    secrets,
    runnerId: () => identity.current.workerId,
    maxModelCalls: options.maxModelCalls,
    transport: { fetch: egress.fetch, maxAnswerBytes: options.maxUpstreamBytes },
  });
  // A list, not a commit's keys iterator: both checks read it, and an iterator reaches the second spent.
  const checkEnded = (sessions?: readonly string[]) =>
    Promise.all([running.stopEnded(sql, sessions), models.stopEnded(sessions)]).catch((err) =>
      log.warn({ err }, "checking for ended calls failed"),
    );

  const stopHearing = await hearEndedCalls({ sql, log, channel, origin, commits: options.commits, checkEnded });

  let bossReady: PgBoss | undefined;
  const loops = startWorkerLoops({
    sql,
    log,
    availability,
    repairs,
    running,
    identity,
    checkEnded,
    boss: () => bossReady,
    backstopMs: options.backstopMs,
  });

  const { may: mayMigrate } = await migrateRights(sql, options.schema);
  const boss = await startBoss(sql, options.schema, (err) => log.warn({ err }, "pg-boss error"), {
    // Without a session of its own to LISTEN on (a pooler, no direct URL), pg-boss polls for jobs.
    listen: lanesHoldSessions(sql),
    migrate: mayMigrate,
  });
  bossReady = boss;
  const deps = {
    sql,
    writer,
    cache,
    running,
    spares,
    connectionId: () => identity.current.connectionId,
    maxEmittedBytes: options.maxEmittedBytes,
    maxModelCalls: options.maxModelCalls,
    afterEndGraceMs: options.afterEndGraceMs ?? 1000,
    secrets,
    models,
    workerId: () => identity.current.workerId,
    log,
    repairs,
    egress,
    maxUpstreamBytes: options.maxUpstreamBytes,
    limits,
    signer: new InvocationSigner(secrets),
    ...(metrics ? { emitted: (report: string, bytes: number) => metrics.emitted(report, bytes) } : {}),
  };
  const tokenSlots = tokenSlotsOf(options);
  await consumeComponentJobs(boss, deps, { concurrency: options.concurrency, tokenSlots }, metrics);
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
        database: availability.available,
        heartbeatAgeMs: Date.now() - loops.lastBeatAt(),
        boss: bossReady !== undefined,
      }),
      metrics?.registry,
    ));

  let stopping: Promise<void> | undefined;
  const stop = () => {
    bossReady = undefined;
    return stopWorker({
      log,
      loops,
      boss,
      running,
      models,
      spares,
      egress,
      writer,
      identity,
      stopHearing,
      sql,
      availability,
      health,
    });
  };
  return {
    get id() {
      return identity.current.workerId;
    },
    healthUrl: health?.url,
    stop() {
      stopping ??= stop();
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
