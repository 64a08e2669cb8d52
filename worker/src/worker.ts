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
  requeueLostWorkerJobs,
  SecretBox,
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
import { beat, type Identity, register } from "./registration.js";
import { RunningCalls } from "./running-calls.js";
import { DEFAULT_COMPONENT_LIMITS, memoryPages } from "./sandbox/limits.js";
import { SparePool } from "./spare-threads.js";

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

const HEARTBEAT_MS = 1000;
/** Looks for component calls whose job was lost every few heartbeats. */
const REQUEUE_EVERY_TICKS = 5;
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
  let identity: Identity = await register(sql);
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
    runnerId: () => identity.workerId,
    maxModelCalls: options.maxModelCalls,
    transport: { fetch: egress.fetch, maxAnswerBytes: options.maxUpstreamBytes },
  });
  // A list, not a commit's keys iterator: both checks read it, and an iterator reaches the second spent.
  const checkEnded = (sessions?: readonly string[]) =>
    Promise.all([running.stopEnded(sql, sessions), models.stopEnded(sessions)]).catch((err) =>
      log.warn({ err }, "checking for ended calls failed"),
    );

  const onKeys: CommitHandler = (keys, from) => {
    // Our own commits never end a call elsewhere.
    if (from !== origin) void checkEnded([...keys.sessions.keys()]);
  };
  const onConnect = () => void checkEnded();
  let stopHearing: () => Promise<void>;
  if (options.commits) {
    const off = options.commits.subscribe(onKeys, onConnect);
    stopHearing = async () => void off();
  } else if (lanesHoldSessions(sql)) {
    const listener = await listenForCommits(sql, channel, origin, onKeys, onConnect);
    stopHearing = () => listener.unlisten();
  } else {
    // A transaction-mode pooler and no direct URL: no LISTEN; its calls are looked at every second.
    log.warn(
      { pollMs: POLL_ENDED_MS },
      "LISTEN/NOTIFY does not deliver here (DATABASE_URL goes through a transaction-mode pooler; BRAIN_DIRECT_URL is not set): ended calls are looked for every second",
    );
    const poller = periodic(async () => void (await checkEnded()), POLL_ENDED_MS, { onError: () => {} });
    stopHearing = () => poller.stop();
  }

  // The heartbeat beats on its own, never behind the rest of the tick: a repair or a requeue
  // waiting on a lock would otherwise silence it, and a server would declare this live worker
  // dead and end its running calls `unknown`.
  let lastBeatAt = Date.now();
  const beats = periodic(
    async () => {
      if (!(await beat(sql, identity.workerId))) {
        log.warn({ workerId: identity.workerId }, "declared dead by a server while alive: re-registering");
        running.stopAll("lost");
        identity = await register(sql);
      }
      lastBeatAt = Date.now();
      availability.markAvailable();
    },
    HEARTBEAT_MS,
    {
      onError: (err) => {
        if (!availability.observe(err)) log.warn({ err }, "heartbeat failed");
      },
      keepsAlive: true,
    },
  );
  let ticks = 0;
  let bossReady: PgBoss | undefined;
  const backstop = periodic(
    async () => {
      if (!availability.available) return;
      await repairs.run();
      await checkEnded();
      if (bossReady && ++ticks % REQUEUE_EVERY_TICKS === 0) {
        const requeued = await requeueLostWorkerJobs(sql, bossReady);
        if (requeued > 0) log.warn({ requeued }, "enqueued again the jobs of component calls left pending");
      }
    },
    options.backstopMs ?? HEARTBEAT_MS,
    {
      onError: (err) => {
        if (!availability.observe(err)) log.warn({ err }, "the worker's periodic work failed");
      },
      keepsAlive: true,
    },
  );

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
    connectionId: () => identity.connectionId,
    maxEmittedBytes: options.maxEmittedBytes,
    maxModelCalls: options.maxModelCalls,
    afterEndGraceMs: options.afterEndGraceMs ?? 1000,
    secrets,
    models,
    workerId: () => identity.workerId,
    log,
    repairs,
    egress,
    maxUpstreamBytes: options.maxUpstreamBytes,
    limits,
    signer: new InvocationSigner(secrets),
    ...(metrics ? { emitted: (report: string, bytes: number) => metrics.emitted(report, bytes) } : {}),
  };
  const tokenSlots = tokenSlotsOf(options);
  await consumeJobs(boss, { concurrency: options.concurrency, tokenSlots }, async (job) => {
    const started = performance.now();
    const data = JobSchema.safeParse(job.data);
    if (!data.success) {
      log.error({ jobId: job.id }, "malformed component job ignored");
      metrics?.job({ outcome: "malformed", env: null }, performance.now() - started);
      return;
    }
    const result = await runWorkerJob(deps, data.data).catch((err) => {
      log.error({ err, ...data.data }, "component job failed");
      return { outcome: "failed" as const, env: null };
    });
    metrics?.job(result, performance.now() - started);
  });
  log.info(
    { workerId: identity.workerId, concurrency: options.concurrency, tokenSlots },
    "worker consuming component jobs",
  );
  const health =
    options.health &&
    (await startHealthServer(
      options.health.host,
      options.health.port,
      3 * HEARTBEAT_MS,
      () => ({
        workerId: identity.workerId,
        database: availability.available,
        heartbeatAgeMs: Date.now() - lastBeatAt,
        boss: bossReady !== undefined,
      }),
      metrics?.registry,
    ));

  let stopping: Promise<void> | undefined;
  const stop = async () => {
    const started = Date.now();
    const phase = (name: string) => log.debug({ ms: Date.now() - started }, `stopping: ${name}`);
    void beats.stop();
    void backstop.stop();
    bossReady = undefined;
    await boss.offWork(WORKER_QUEUE, { wait: false }).catch(() => {});
    phase("no more jobs");
    const until = Date.now() + SHUTDOWN_GRACE_MS;
    while (running.size > 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
    phase(`grace over, ${running.size} still running`);
    running.stopAll("shutdown");
    // Model requests of the stopped calls are interrupted: journaled `unknown`, never replayed.
    await models.stopAll();
    spares.close();
    await egress.close();
    // Calls that can be resumed (MCP tasks) go to another worker; the rest were interrupted:
    // nobody can say how far they got.
    await writer
      .submit(releaseResumableCalls(boss, { connectionId: identity.connectionId }))
      .catch((err) => log.warn({ err }, "could not release resumable calls on shutdown"));
    await writer
      .submit(endCalls({ connectionId: identity.connectionId }, { status: "unknown", cause: "worker_lost" }))
      .catch((err) => log.warn({ err }, "could not end calls on shutdown"));
    // Drains, then gives back the writer's own connection.
    await writer.close();
    phase("calls ended");
    await boss.stop({ graceful: false, timeout: 2000 }).catch(() => {});
    phase("pg-boss stopped");
    await stopHearing().catch(() => {});
    phase("unlistened");
    await stopServer(sql, identity.workerId).catch(() => {});
    phase("unregistered");
    // Every write has drained: whatever is still open need not be waited for long.
    availability.close();
    await sql.end({ timeout: 1 });
    await health?.close();
    phase("stopped");
  };
  return {
    get id() {
      return identity.workerId;
    },
    healthUrl: health?.url,
    stop() {
      stopping ??= stop();
      return stopping;
    },
  };
}
