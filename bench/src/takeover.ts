import { setTimeout as sleep } from "node:timers/promises";
import type { Sql } from "postgres";
import { type BrainUnderTest, closeKeepingWarnings, type Scenario } from "./context.js";
import type { IdleArgs, IdleResult } from "./host-protocol.js";
import { value } from "./stats.js";

/**
 * The hand-over cost at scale: a server stops with N sessions active (each created with a host
 * tool and given one text turn, as in session_memory), and a new server on the same database
 * resumes all of them. Measured from the new server's spawn until every session is owned by it,
 * against the same server's start on the same database before any session existed.
 */
export const takeover: Scenario = {
  name: "takeover",
  async run(ctx) {
    const count = ctx.quick ? 200 : 1000;
    const empty = performance.now();
    const a = await ctx.startBrain("takeover_a");
    const emptyStartMs = performance.now() - empty;
    let aOpen = true;
    let b: BrainUnderTest | undefined;
    try {
      await a.host.call<IdleResult>("idle", { count, concurrency: 16 } satisfies IdleArgs);
      aOpen = false;
      await closeKeepingWarnings(ctx.log, "takeover_a", a);
      const t0 = performance.now();
      b = await ctx.startBrain("takeover_b");
      const readyMs = performance.now() - t0;
      const timeoutMs = ctx.quick ? 60_000 : 120_000;
      while ((await ownedByLiveServer(ctx.sql)) < count) {
        if (performance.now() - t0 > timeoutMs) throw new Error(`${count} sessions not taken over in ${timeoutMs} ms`);
        await sleep(10);
      }
      const allMs = performance.now() - t0;
      const note = `${count} idle sessions of a stopped server; the server was ready after ${Math.round(readyMs)} ms`;
      return {
        figures: [
          value("takeover", "ms", count, allMs, { note }),
          value("takeover.empty_start", "ms", 1, emptyStartMs, { note: "the same server's start before any session" }),
          value("takeover.rate", "sessions/s", count, (count / allMs) * 1000),
        ],
      };
    } finally {
      if (aOpen) await closeKeepingWarnings(ctx.log, "takeover_a", a);
      if (b) await closeKeepingWarnings(ctx.log, "takeover_b", b);
    }
  },
};

async function ownedByLiveServer(sql: Sql): Promise<number> {
  const [row] = await sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM brain.sessions s
    JOIN brain.servers v ON v.id = s.owner_id AND v.stopped_at IS NULL
    WHERE s.status = 'active'`;
  return row?.n ?? 0;
}
