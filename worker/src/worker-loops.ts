import { periodic } from "@aexhq/brain-contracts";
import type { DatabaseAvailability, Sql } from "@aexhq/brain-db/connect";
import { requeueLostWorkerJobs } from "@aexhq/brain-db/queue";
import type { PendingRepairs } from "@aexhq/brain-db/writer";
import type { PgBoss } from "pg-boss";
import type { Logger } from "./log.js";
import { beat, type Identity, register } from "./registration.js";
import type { RunningCalls } from "./running-calls.js";

export const HEARTBEAT_MS = 1000;
/** Looks for component calls whose job was lost every few heartbeats. */
const REQUEUE_EVERY_TICKS = 5;

/** What a worker's periodic work uses; `identity` is replaced when the worker re-registers. */
export interface WorkerLoopDeps {
  sql: Sql;
  log: Logger;
  availability: DatabaseAvailability;
  repairs: PendingRepairs;
  running: RunningCalls;
  identity: { current: Identity };
  /** Looks for calls that ended elsewhere (the backstop of the commits the worker hears of). */
  checkEnded(): Promise<unknown>;
  /** pg-boss once it is started and until the worker stops: lost jobs are enqueued through it. */
  boss(): PgBoss | undefined;
  backstopMs?: number | undefined;
}

export interface WorkerLoops {
  /** When the last heartbeat committed (epoch ms). */
  lastBeatAt(): number;
  stop(): void;
}

/**
 * The heartbeat and the backstop. The heartbeat beats on its own, never behind the backstop: a
 * repair or a requeue waiting on a lock would otherwise silence it, and a server would declare
 * this live worker dead and end its running calls `unknown`.
 */
export function startWorkerLoops(deps: WorkerLoopDeps): WorkerLoops {
  const { sql, log, availability } = deps;
  const warn = (message: string) => (err: unknown) =>
    availability.warnUnlessAway(err, () => log.warn({ err }, message));
  let lastBeatAt = Date.now();
  const beats = periodic(
    async () => {
      if (!(await beat(sql, deps.identity.current.workerId))) {
        log.warn({ workerId: deps.identity.current.workerId }, "declared dead by a server while alive: re-registering");
        deps.running.stopAll("lost");
        deps.identity.current = await register(sql);
      }
      lastBeatAt = Date.now();
      availability.markAvailable();
    },
    HEARTBEAT_MS,
    { onError: warn("heartbeat failed"), keepsAlive: true },
  );
  let ticks = 0;
  const backstop = periodic(
    async () => {
      if (!availability.available) return;
      await deps.repairs.run();
      await deps.checkEnded();
      const boss = deps.boss();
      if (boss && ++ticks % REQUEUE_EVERY_TICKS === 0) {
        const requeued = await requeueLostWorkerJobs(sql, boss);
        if (requeued > 0) log.warn({ requeued }, "enqueued again the jobs of component calls left pending");
      }
    },
    deps.backstopMs ?? HEARTBEAT_MS,
    { onError: warn("the worker's periodic work failed"), keepsAlive: true },
  );
  return {
    lastBeatAt: () => lastBeatAt,
    stop() {
      void beats.stop();
      void backstop.stop();
    },
  };
}
