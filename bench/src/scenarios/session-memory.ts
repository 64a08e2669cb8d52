import { setTimeout as sleep } from "node:timers/promises";
import { perSession, reading } from "../measure/memory-reading.js";
import { rate, value } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { IdleArgs, IdleResult } from "./host-protocol.js";

/**
 * Server memory per idle session: sessions each created with a host tool and given one text turn
 * (so its Agentloop actor is resident), then left idle, in three batches of N on one server. RSS
 * is read from /proc/<pid>/status (VmRSS) after each batch; the V8 heap after a forced GC comes
 * from server-probe.ts, preloaded into the server for this scenario only.
 *
 * `session_memory.rss` and `.heap` are what each session beyond the first N costs: the growth from
 * N to 3N sessions ÷ 2N, the slope an operator plans capacity with. The first batch also grows what
 * a fresh server grows once, whatever the number of sessions (V8's old space and code, the
 * allocator's arenas after the first burst of load): it is reported apart, as `.first_rss` and
 * `.first_heap`.
 *
 * Every RSS figure leaves out what V8's young generation added meanwhile: the server's
 * semi-spaces (64 MiB each, see server/src/main.ts) fill up with the creation burst's allocation
 * and stay resident, a fixed cost of the process. What is subtracted is the growth of the young
 * generation's resident pages (V8's physical_space_size), not of its committed size: before the
 * burst only part of the committed space had been written to (23 of 64 MiB in one run).
 */
export const sessionMemory: Scenario = {
  name: "session_memory",
  run: (ctx) =>
    // Resident actors are what this measures (parked ones are parked_memory's): none may park
    // however long the batches take on a slow machine.
    withBrain(ctx, "session_memory", { probe: true, env: { BRAIN_SESSION_IDLE_MS: "0" } }, async (brain) => {
      const count = ctx.quick ? 200 : 1000;
      // Warm the server's code paths first, so the delta is sessions, not JIT and pools.
      await brain.host.call<IdleResult>("idle", { count: 20, concurrency: 4 } satisfies IdleArgs);
      await sleep(500);
      const batch = async () => {
        const r = await brain.host.call<IdleResult>("idle", { count, concurrency: 16 } satisfies IdleArgs);
        await sleep(1_000);
        return r;
      };
      // RSS is read after the probe's GC, so every reading is post-GC.
      const start = await reading(brain.server);
      brain.cpu.start();
      const first = await batch();
      brain.cpu.stop();
      const afterFirst = await reading(brain.server);
      const more = (await batch()).created + (await batch()).created;
      const end = await reading(brain.server);
      const once = perSession(start, afterFirst, first.created);
      const beyond = perSession(afterFirst, end, more);
      return [
        value("session_memory.rss", "KiB/session", more, beyond.rss, {
          note: `${first.created} → ${first.created + more} idle sessions (each: created + one turn): ${beyond.note}`,
        }),
        value("session_memory.heap", "KiB/session", more, beyond.heap, {
          note: `V8 heapUsed after GC, ${first.created} → ${first.created + more} idle sessions`,
        }),
        value("session_memory.first_rss", "KiB/session", first.created, once.rss, {
          note: `a fresh server's first ${first.created} idle sessions, with what it grows once: ${once.note}`,
          cpu: brain.cpu.last,
        }),
        value("session_memory.first_heap", "KiB/session", first.created, once.heap, {
          note: `V8 heapUsed after GC, a fresh server's first ${first.created} idle sessions`,
        }),
        rate("session_memory.create", "sessions/s", first.created, first.seconds, {
          note: "create + one text turn each, 16 at a time, the first batch (context for the memory figures)",
        }),
      ];
    }),
};
