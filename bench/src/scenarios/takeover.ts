import { setTimeout as sleep } from "node:timers/promises";
import type { Sql } from "postgres";
import { value } from "../measure/stats.js";
import { type BrainUnderTest, closeKeepingWarnings, type Scenario } from "../runner/context.js";
import type { IdleArgs, IdleResult } from "./host-protocol.js";

/**
 * The hand-over cost at scale, two ways, against the same server's start on the same database
 * before any session existed. N sessions (each created with a host tool and given one text turn,
 * as in session_memory) are left idle on server A:
 *
 * - `takeover.killed`: A is killed (SIGKILL), so nothing marks its sessions, and once its heartbeat
 *   is stale a new server B resumes every one: a claim (answering the session's routing), the
 *   model's secret where the provider has one, and the journal's replay each.
 * - `takeover`: B then stops as a server does (SIGTERM), marking every idle session it runs as
 *   parked (`sessions.parked_seq`), and a new server C owns them all parked, a statement a page.
 *
 * Each is measured from the new server's spawn until a live server owns every session.
 */
export const takeover: Scenario = {
  name: "takeover",
  // Three servers, one creation burst and a stale heartbeat's wait.
  timeoutMs: (quick) => (quick ? 120_000 : 300_000),
  async run(ctx) {
    const count = ctx.quick ? 200 : 1000;
    const timeoutMs = ctx.quick ? 60_000 : 120_000;
    const empty = performance.now();
    const a = await ctx.startBrain("takeover_a");
    const emptyStartMs = performance.now() - empty;
    const open = new Map<string, BrainUnderTest>([["takeover_a", a]]);
    /** Spawns a server and waits until a live server owns every session; ms since the spawn. */
    const takeOver = async (name: string) => {
      const t0 = performance.now();
      const next = await ctx.startBrain(name);
      open.set(name, next);
      const readyMs = performance.now() - t0;
      while ((await ownedByLiveServer(ctx.sql)) < count) {
        if (performance.now() - t0 > timeoutMs) throw new Error(`${count} sessions not taken over in ${timeoutMs} ms`);
        await sleep(10);
      }
      return { ms: performance.now() - t0, readyMs };
    };
    try {
      await a.host.call<IdleResult>("idle", { count, concurrency: 16 } satisfies IdleArgs);
      const died = new Promise((resolve) => a.server.child.once("exit", resolve));
      a.server.child.kill("SIGKILL");
      await died;
      open.delete("takeover_a");
      await closeKeepingWarnings(ctx.log, "takeover_a", a);
      // Its sessions are orphans once its heartbeat is stale (3 s): only then may B take them.
      const t0 = performance.now();
      while ((await ownedByLiveServer(ctx.sql)) > 0) {
        if (performance.now() - t0 > timeoutMs) throw new Error("the killed server's sessions never became orphans");
        await sleep(50);
      }
      const killed = await takeOver("takeover_b");
      const b = open.get("takeover_b")!;
      open.delete("takeover_b");
      await closeKeepingWarnings(ctx.log, "takeover_b", b);
      const stopped = await takeOver("takeover_c");
      const note = (how: string, readyMs: number) =>
        `${count} idle sessions of a ${how} server; the new server was ready after ${Math.round(readyMs)} ms`;
      return {
        figures: [
          value("takeover", "ms", count, stopped.ms, {
            note: `${note("stopped", stopped.readyMs)}: each marked parked on the way out, and owned parked`,
          }),
          value("takeover.killed", "ms", count, killed.ms, {
            note: `${note("killed (SIGKILL)", killed.readyMs)}: each resumed with a claim and its journal`,
          }),
          value("takeover.empty_start", "ms", 1, emptyStartMs, { note: "the same server's start before any session" }),
          value("takeover.rate", "sessions/s", count, (count / stopped.ms) * 1000),
          value("takeover.killed.rate", "sessions/s", count, (count / killed.ms) * 1000),
        ],
      };
    } finally {
      for (const [name, brain] of open) await closeKeepingWarnings(ctx.log, name, brain);
    }
  },
};

/** Active sessions whose owner is live: not stopped, and beating (a killed server's heartbeat goes stale in 3 s). */
async function ownedByLiveServer(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM brain.sessions s
    JOIN brain.servers v ON v.id = s.owner_id AND v.stopped_at IS NULL
      AND v.heartbeat_at > now() - interval '3 seconds'
    WHERE s.status = 'active'`;
  return row?.n ?? 0;
}
