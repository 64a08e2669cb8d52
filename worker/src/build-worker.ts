import { randomUUID } from "node:crypto";
import { Egress } from "@aexhq/brain-core/egress";
import { ToolModelCalls } from "@aexhq/brain-core/models";
import { channelFor } from "@aexhq/brain-db/commits";
import { DatabaseAvailability, type Sql } from "@aexhq/brain-db/connect";
import { InvocationSigner, SecretBox } from "@aexhq/brain-db/secrets";
import { JournalWriter, PendingRepairs } from "@aexhq/brain-db/writer";
import { ComponentCache } from "./component-cache.js";
import type { WorkerConfig } from "./config.js";
import type { runWorkerJob } from "./invocation.js";
import type { Logger } from "./log.js";
import { WorkerMetrics } from "./metrics.js";
import type { Identity } from "./registration.js";
import { RunningCalls } from "./running-calls.js";
import { DEFAULT_COMPONENT_LIMITS, memoryPages } from "./sandbox/limits.js";
import { SparePool } from "./spare-threads.js";

/** A worker's parts, built and wired: nothing runs until startWorker starts it (worker.ts). */
export interface BuiltWorker {
  /** Notifications carry their origin so a process skips its own; it outlives re-registration. */
  origin: string;
  channel: string;
  availability: DatabaseAvailability;
  running: RunningCalls;
  /** Counted only where they can be read: on the health port. */
  metrics: WorkerMetrics | null;
  writer: JournalWriter;
  repairs: PendingRepairs;
  spares: SparePool;
  egress: Egress;
  models: ToolModelCalls;
  /** Stops what runs here of calls that ended elsewhere (of `sessions`, or of any). */
  checkEnded(sessions?: readonly string[]): Promise<unknown>;
  /** What each job's run needs (invocation.ts). */
  jobs: Parameters<typeof runWorkerJob>[0];
}

/**
 * Builds a worker's parts over its pool and identity; no I/O (pools connect on first use).
 * While the database is away, writes fail at once; when it answers again, calls that ended
 * meanwhile are looked for (their notifications were lost).
 */
export function buildWorker(
  options: WorkerConfig,
  sql: Sql,
  log: Logger,
  identity: { current: Identity },
  db: { distributed: boolean } = { distributed: false },
): BuiltWorker {
  const origin = randomUUID();
  const availability = new DatabaseAvailability(sql, {
    onChange: (available) =>
      available ? void checkEnded() : log.warn("database unavailable: journal writes fail until it answers"),
  });
  const running = new RunningCalls();
  const metrics = options.metrics !== false && options.health ? new WorkerMetrics(() => running.size) : null;
  const channel = channelFor(options.schema);
  const writer = new JournalWriter(sql, {
    channel,
    origin,
    availability,
    // Distributed on Citus: a statement per write, each on one session's shard.
    citus: db.distributed,
    ...(metrics ? { observer: (flush) => metrics.flushed(flush) } : {}),
  });
  const repairs = new PendingRepairs((err, key) => log.error({ err, key }, "a deferred journal write failed"));
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
  const spares = new SparePool();
  const base = { origin, channel, availability, running, metrics, writer, repairs, spares, egress, models, checkEnded };
  return { ...base, jobs: jobDeps(options, sql, log, identity, { ...base, secrets }) };
}

function jobDeps(
  options: WorkerConfig,
  sql: Sql,
  log: Logger,
  identity: { current: Identity },
  parts: Omit<BuiltWorker, "jobs" | "checkEnded"> & { secrets: SecretBox },
): BuiltWorker["jobs"] {
  const { writer, running, spares, secrets, models, repairs, egress, metrics } = parts;
  const limits = options.componentLimits ?? DEFAULT_COMPONENT_LIMITS;
  return {
    sql,
    writer,
    cache: new ComponentCache(sql, options.cacheDir, memoryPages(limits)),
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
}
