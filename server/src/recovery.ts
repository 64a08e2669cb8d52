import {
  closeServerConnections,
  declareDeadServers,
  endCalls,
  endOrphanedToolModelCalls,
  type Judgement,
  orphanedSessions,
  releaseResumableCalls,
} from "@aexhq/brain-db/ops";
import type { Services } from "./services.js";

export type RecoveryDeps = Pick<Services, "sql" | "serverId" | "writer" | "log" | "actors" | "boss" | "liveness">;

/** Orphans read per page. */
const PAGE = 500;
/** Orphans resumed at once: each claim is a few round trips, so a page goes at the pool's pace, not one RTT chain. */
const RESUME_CONCURRENCY = 8;
/**
 * How long one sweep goes on taking pages of orphans before it returns; the next tick goes on
 * where it stopped. A server taking over thousands of sessions takes them in one go rather than
 * a page a tick, and still judges dead servers at least this often.
 */
const RESUME_BUDGET_MS = 2_000;

/**
 * Crash recovery, run every heartbeat by every server. A server whose heartbeat went stale is
 * declared dead: every call dispatched on its host connections ends `unknown` (nobody can know
 * whether the host ran it, and it is never sent again), and its sessions are resumed here.
 */
export async function sweep(rt: RecoveryDeps): Promise<void> {
  // One verdict for the whole sweep: its claims take only what its declarations allowed.
  const { mayDeclareDead, judgement } = rt.liveness.verdicts();
  const dead = mayDeclareDead ? await declareDeadServers(rt.sql, rt.serverId, judgement) : [];
  for (const { id, kind } of dead) {
    const cause = kind === "worker" ? "worker_lost" : "server_lost";
    if (kind === "worker") {
      // Calls a dead worker left resumable (MCP tasks it started) go to the next worker instead.
      const released = await rt.writer.submit(releaseResumableCalls(rt.boss, { serverId: id }));
      if (released.length > 0)
        rt.log.warn({ serverId: id, released }, "a dead worker's MCP task calls go to another worker");
    }
    await rt.writer.submit(endCalls({ serverId: id }, { status: "unknown", cause }));
    await closeServerConnections(rt.sql, id);
    rt.log.warn({ serverId: id }, "declared a server dead; its dispatched calls ended unknown");
  }
  // Tools' model requests whose process is gone: interrupted, so `unknown`, never replayed.
  const interrupted = await rt.writer.submit(endOrphanedToolModelCalls());
  if (interrupted > 0) rt.log.warn({ interrupted }, "recorded tool model calls of lost processes as unknown");
  // Also servers that stopped cleanly may leave calls on connections that closed with them.
  await resumeOrphans(rt, judgement);
}

/**
 * Resumes active sessions without a live owner, a page at a time until none is left, the budget is
 * spent, or a page took nothing (this server is stopping, or the rest are being claimed elsewhere).
 */
async function resumeOrphans(rt: RecoveryDeps, judgement: Judgement): Promise<void> {
  const until = performance.now() + RESUME_BUDGET_MS;
  for (;;) {
    const page = await orphanedSessions(rt.sql, PAGE, judgement);
    // A stopped server's idle sessions (marked parked on its way out) in one statement; the rest
    // (a killed server's, or moved on since) one claim and catch-up each.
    const parked = await rt.actors.resumeParked(page, judgement);
    const ids = parked.size === 0 ? page : page.filter((id) => !parked.has(id));
    let next = 0;
    let resumed = parked.size;
    const lane = async () => {
      while (next < ids.length) {
        // Nothing woke these sessions here: once caught up with nothing to do, they park at once.
        if ((await rt.actors.resume(ids[next++]!, { parkWhenIdle: true })) !== null) resumed++;
      }
    };
    await Promise.all(Array.from({ length: Math.min(RESUME_CONCURRENCY, ids.length) }, lane));
    if (page.length < PAGE || resumed === 0 || performance.now() > until) return;
  }
}
