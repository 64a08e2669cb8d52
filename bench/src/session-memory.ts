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
}

/**
 * Server memory per idle session: N sessions, each created with a host tool and given one text
 * turn (so its Agentloop actor is resident), then left idle; then N more. RSS is read from
 * /proc/<pid>/status (VmRSS); the V8 heap after a forced GC comes from server-probe.ts, preloaded
 * into the server for this scenario only.
 *
 * The per-session figures are the second N's: what one more idle session costs. The first N's
 * delta (`.rss_first`, `.heap_first`) also holds what creating sessions 16 at a time grows once
 * (V8's young generation and old-space pages, malloc arenas), which RSS keeps after a GC and the
 * second N reuses: from 1,000 to 2,000 sessions RSS grew 6–8 KiB a session where the first 1,000
 * had grown it 18–34 KiB a session.
 */
export const sessionMemory: Scenario = {
  name: "session_memory",
  run: (ctx) =>
    withBrain(ctx, "session_memory", { probe: true }, async (brain) => {
      const count = ctx.quick ? 200 : 1000;
      // Warm the server's code paths first, so the delta is sessions, not JIT and pools.
      await brain.host.call<IdleResult>("idle", { count: 20, concurrency: 4 } satisfies IdleArgs);
      await sleep(500);
      // RSS is read after the probe's GC, so every reading is post-GC.
      const before = await reading(brain.server);
      brain.cpu.start();
      const first = await brain.host.call<IdleResult>("idle", { count, concurrency: 16 } satisfies IdleArgs);
      brain.cpu.stop();
      await sleep(1_000);
      const middle = await reading(brain.server);
      const second = await brain.host.call<IdleResult>("idle", { count, concurrency: 16 } satisfies IdleArgs);
      await sleep(1_000);
      const after = await reading(brain.server);
      const [n1, n2] = [first.created, second.created];
      const total = n1 + n2;
      return [
        value("session_memory.rss", "KiB/session", n2, (after.rss - middle.rss) / n2, {
          note: `VmRSS ${mib(middle.rss * 1024)} → ${mib(after.rss * 1024)} MiB from ${n1} to ${total} idle sessions (each: created + one turn)`,
          cpu: brain.cpu.last,
        }),
        value("session_memory.heap", "KiB/session", n2, (after.heap.heapUsed - middle.heap.heapUsed) / 1024 / n2, {
          note:
            `V8 heapUsed after GC ${mib(middle.heap.heapUsed)} → ${mib(after.heap.heapUsed)} MiB from ${n1} to ${total} sessions ` +
            `(heapTotal ${mib(middle.heap.heapTotal)} → ${mib(after.heap.heapTotal)}, external ${mib(middle.heap.external)} → ${mib(after.heap.external)})`,
        }),
        value("session_memory.rss_first", "KiB/session", n1, (middle.rss - before.rss) / n1, {
          note: `VmRSS ${mib(before.rss * 1024)} → ${mib(middle.rss * 1024)} MiB for the first ${n1} sessions: also what creating them grew once`,
        }),
        value(
          "session_memory.heap_first",
          "KiB/session",
          n1,
          (middle.heap.heapUsed - before.heap.heapUsed) / 1024 / n1,
          {
            note: `V8 heapUsed after GC ${mib(before.heap.heapUsed)} → ${mib(middle.heap.heapUsed)} MiB for the first ${n1} sessions`,
          },
        ),
        rate("session_memory.create", "sessions/s", n1, first.seconds, {
          note: "create + one text turn each, 16 at a time (context for the memory figures)",
        }),
      ];
    }),
};

/** A post-GC heap reading and the RSS (KiB) right after it. */
async function reading(server: ServerProcess): Promise<{ heap: HeapReading; rss: number }> {
  const h = await heap(server);
  return { heap: h, rss: memoryOf(server.pid).rssKiB };
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
