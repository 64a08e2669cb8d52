import type { Egress } from "@aexhq/brain-core/egress";
import { bindDistributed, type Sql } from "@aexhq/brain-db/connect";
import { distributedOnCitus, migrateRights } from "@aexhq/brain-db/migrate";
import { endCalls, registerServer, stopServer } from "@aexhq/brain-db/ops";
import type { FastifyBaseLogger } from "fastify";
import { buildRuntime, type Runtime } from "./build-runtime.js";
import type { Config } from "./config.js";
import { type ServerLoops, startServerLoops } from "./server-loops.js";
import { startWakeups, type Wakeups } from "./wakeups.js";

export { COMMIT_STALL_MS, type Runtime } from "./build-runtime.js";

export interface RunningRuntime extends Runtime {
  /** Lets long-lived requests and sockets go, so the HTTP server can close. */
  beginShutdown(): void;
  stop(): Promise<void>;
}

/**
 * Builds a server's runtime (build-runtime.ts, no I/O), then starts what runs, in order: pg-boss
 * and the deadline backstop, the server's row, LISTEN (or polling), and the loops (server-loops.ts:
 * the heartbeat and the recovery sweep run once before this returns). stop() undoes it.
 */
export async function startRuntime(config: Config, sql: Sql, log: FastifyBaseLogger): Promise<RunningRuntime> {
  const { may } = await migrateRights(sql, config.schema);
  const distributed = await distributedOnCitus(sql, config.schema);
  if (distributed) bindDistributed(sql);
  const { rt, started, boss, lag, liveness, egress, commits, closing } = buildRuntime(config, sql, log, {
    mayMigrate: may,
    distributed,
  });
  await boss.start();
  await rt.deadlineJobs.startWorker((err) => {
    rt.availability.observe(err);
    log.warn({ err }, "deadline backstop failed");
  });
  await registerServer(sql, rt.serverId);
  started.wakeups = await startWakeups({ ...rt, commits });
  started.loops = await startServerLoops(rt, { liveness, lag });
  return Object.assign(rt, {
    beginShutdown() {
      if (closing.signal.aborted) return;
      closing.abort();
      rt.streams.end();
      for (const conn of rt.hosts.all()) conn.close();
    },
    stop: () => stopRuntime(rt, { ...started, egress }),
  });
}

/** Waits for `work` at most `ms`; a failure or a timeout is ignored (used on shutdown only). */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    work.catch(() => {}),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
    }),
  ]);
  clearTimeout(timer);
}

/** A server's shutdown, each step bounded: its loops, its Agentloops and calls, then its connections. */
async function stopRuntime(
  rt: Runtime,
  parts: { loops?: ServerLoops | undefined; wakeups?: Wakeups | undefined; egress: Egress },
): Promise<void> {
  const { loops, wakeups, egress } = parts;
  await bounded(loops?.stop() ?? Promise.resolve(), 3000);
  await bounded(rt.actors.markIdleOnShutdown(), 2000);
  rt.actors.stopAll();
  // Requests in flight are interrupted: journaled `unknown`, never replayed.
  await rt.toolModels.stopAll();
  for (const conn of rt.hosts.all()) conn.close();
  // Calls dispatched on our connections can no longer report: they end unknown now, rather
  // than when another server notices we are gone.
  await rt.writer
    .submit(endCalls({ serverId: rt.serverId }, { status: "unknown", cause: "connection_lost" }))
    .catch((err) => rt.log.warn({ err }, "could not end calls on shutdown"));
  await rt.writer.close();
  // A shutdown must end: each remaining step gets a bounded wait.
  await bounded(rt.boss.stop({ graceful: false, timeout: 2000 }), 3000);
  await bounded(wakeups?.stop() ?? Promise.resolve(), 2000);
  rt.availability.close();
  await bounded(stopServer(rt.sql, rt.serverId), 2000);
  if (rt.readSql !== rt.sql) await bounded(rt.readSql.end({ timeout: 1 }), 2000);
  await egress.close();
}
