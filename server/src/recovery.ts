import { endCalls, endOrphanedToolModelCalls, orphanedSessions } from "@aexhq/brain-db";
import type { Runtime } from "./runtime.js";

/**
 * Crash recovery, run every heartbeat by every server. A server whose heartbeat went stale is
 * declared dead: every call dispatched on its host connections ends `unknown` (nobody can know
 * whether the host ran it, and it is never sent again), and its sessions are resumed here.
 */
export async function sweep(rt: Runtime, mayDeclareDead: boolean): Promise<void> {
  const dead = !mayDeclareDead
    ? []
    : await rt.sql<{ id: string; kind: string }[]>`
    UPDATE servers SET stopped_at = now()
    WHERE stopped_at IS NULL AND id <> ${rt.serverId}
      AND heartbeat_at < now() - make_interval(secs => 3)
    RETURNING id, kind`;
  for (const { id, kind } of dead) {
    const cause = kind === "worker" ? "worker_lost" : "server_lost";
    await rt.writer.submit(endCalls({ serverId: id }, { status: "unknown", cause }));
    await rt.sql`UPDATE host_connections SET closed_at = now() WHERE server_id = ${id} AND closed_at IS NULL`;
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
