import {
  closeServerConnections,
  declareDeadServers,
  endCalls,
  endOrphanedToolModelCalls,
  orphanedSessions,
  releaseResumableCalls,
} from "@aexhq/brain-db";
import type { Services } from "./services.js";

export type RecoveryDeps = Pick<Services, "sql" | "serverId" | "writer" | "log" | "actors" | "boss">;

/**
 * Crash recovery, run every heartbeat by every server. A server whose heartbeat went stale is
 * declared dead: every call dispatched on its host connections ends `unknown` (nobody can know
 * whether the host ran it, and it is never sent again), and its sessions are resumed here.
 */
export async function sweep(rt: RecoveryDeps, mayDeclareDead: boolean): Promise<void> {
  const dead = mayDeclareDead ? await declareDeadServers(rt.sql, rt.serverId) : [];
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
  for (const id of await orphanedSessions(rt.sql)) {
    await rt.actors.resume(id);
  }
}
