import { setTimeout as sleep } from "node:timers/promises";
import { type Scenario, withBrain } from "./context.js";
import type { IdleArgs, IdleResult } from "./host-protocol.js";
import { memoryOf, type ServerProcess } from "./proc.js";
import { rate, value } from "./stats.js";

interface HeapReading {
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  /** V8's young generation, resident: the pages of it written to (bytes). */
  young: number;
  /** V8's young generation, committed (bytes). */
  youngCommitted: number;
}

/** A post-GC reading of the server: VmRSS and the probe's V8 figures. */
interface Reading {
  heap: HeapReading;
  rssKiB: number;
}

/** Sessions added between two readings, as KiB per session: VmRSS less the young generation's growth, and heapUsed. */
function perSession(from: Reading, to: Reading, sessions: number): { rss: number; heap: number; note: string } {
  const youngKiB = (to.heap.young - from.heap.young) / 1024;
  return {
    rss: (to.rssKiB - from.rssKiB - youngKiB) / sessions,
    heap: (to.heap.heapUsed - from.heap.heapUsed) / 1024 / sessions,
    note:
      `VmRSS ${Math.round(from.rssKiB / 1024)} → ${Math.round(to.rssKiB / 1024)} MiB, ` +
      `less the young generation's resident growth (${mib(from.heap.young)} → ${mib(to.heap.young)} MiB; ` +
      `committed ${mib(from.heap.youngCommitted)} → ${mib(to.heap.youngCommitted)} MiB); ` +
      `V8 heapUsed after GC ${mib(from.heap.heapUsed)} → ${mib(to.heap.heapUsed)} MiB ` +
      `(heapTotal ${mib(from.heap.heapTotal)} → ${mib(to.heap.heapTotal)}, external ${mib(from.heap.external)} → ${mib(to.heap.external)})`,
  };
}

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
 * `.first_heap` (see BENCHMARKS.md, "Hot path, ninth pass").
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
    withBrain(ctx, "session_memory", { probe: true }, async (brain) => {
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

async function reading(server: ServerProcess): Promise<Reading> {
  const h = await heap(server);
  return { heap: h, rssKiB: memoryOf(server.pid).rssKiB };
}

function mib(bytes: number): number {
  return Math.round((bytes / 1024 / 1024) * 10) / 10;
}

/** Asks the server probe for a post-GC heap reading and waits for its line. */
async function heap(server: ServerProcess): Promise<HeapReading> {
  const before = server.output().split("BENCH_MEMORY ").length;
  process.kill(server.pid, "SIGUSR2");
  for (let waited = 0; waited < 10_000; waited += 20) {
    const parts = server.output().split("BENCH_MEMORY ");
    const last = parts[parts.length - 1]!;
    if (parts.length > before && last.includes("\n")) return JSON.parse(last.split("\n")[0]!) as HeapReading;
    await sleep(20);
  }
  throw new Error("the server probe did not answer SIGUSR2");
}
