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

/**
 * Server memory per idle session: N sessions, each created with a host tool and given one text
 * turn (so its Agentloop actor is resident), then left idle. RSS is read from /proc/<pid>/status
 * (VmRSS) before and after; the V8 heap after a forced GC comes from server-probe.ts, preloaded
 * into the server for this scenario only. The RSS figure leaves out what V8's young generation
 * added to it meanwhile: the server's semi-spaces (64 MiB each, see server/src/main.ts) fill up
 * with the creation burst's allocation and stay resident, a fixed cost of the process whatever
 * the number of sessions. What is subtracted is the growth of the young generation's resident
 * pages (V8's physical_space_size), not of its committed size: before the burst only part of the
 * committed space had been written to (23 of 64 MiB in one run), and counting the committed size
 * left the rest (15–20 KiB a session over 1,000) on the sessions.
 */
export const sessionMemory: Scenario = {
  name: "session_memory",
  run: (ctx) =>
    withBrain(ctx, "session_memory", { probe: true }, async (brain) => {
      const count = ctx.quick ? 200 : 1000;
      // Warm the server's code paths first, so the delta is sessions, not JIT and pools.
      await brain.host.call<IdleResult>("idle", { count: 20, concurrency: 4 } satisfies IdleArgs);
      await sleep(500);
      // RSS is read after the probe's GC, before and after, so both readings are post-GC.
      const heap0 = await heap(brain.server);
      const rss0 = memoryOf(brain.server.pid).rssKiB;
      brain.cpu.start();
      const r = await brain.host.call<IdleResult>("idle", { count, concurrency: 16 } satisfies IdleArgs);
      brain.cpu.stop();
      await sleep(1_000);
      const heap1 = await heap(brain.server);
      const rss1 = memoryOf(brain.server.pid).rssKiB;
      const n = r.created;
      const youngKiB = (heap1.young - heap0.young) / 1024;
      return [
        value("session_memory.rss", "KiB/session", n, (rss1 - rss0 - youngKiB) / n, {
          note:
            `VmRSS ${Math.round(rss0 / 1024)} → ${Math.round(rss1 / 1024)} MiB for ${n} idle sessions (each: created + one turn), ` +
            `less the young generation's resident growth (${mib(heap0.young)} → ${mib(heap1.young)} MiB; ` +
            `committed ${mib(heap0.youngCommitted)} → ${mib(heap1.youngCommitted)} MiB)`,
          cpu: brain.cpu.last,
        }),
        value("session_memory.heap", "KiB/session", n, (heap1.heapUsed - heap0.heapUsed) / 1024 / n, {
          note:
            `V8 heapUsed after GC ${mib(heap0.heapUsed)} → ${mib(heap1.heapUsed)} MiB ` +
            `(heapTotal ${mib(heap0.heapTotal)} → ${mib(heap1.heapTotal)}, external ${mib(heap0.external)} → ${mib(heap1.external)})`,
        }),
        rate("session_memory.create", "sessions/s", n, r.seconds, {
          note: "create + one text turn each, 16 at a time (context for the memory figures)",
        }),
      ];
    }),
};

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
