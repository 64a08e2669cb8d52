// Post-GC memory readings of a Brain server started with `probe: true` (server-probe.ts preloaded),
// and what sessions added or released between two of them, per session.
import { setTimeout as sleep } from "node:timers/promises";
import { memoryOf, type ServerProcess } from "../runner/proc.js";

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
export interface Reading {
  heap: HeapReading;
  rssKiB: number;
}

/** Sessions added between two readings, as KiB per session: VmRSS less the young generation's growth, and heapUsed. */
export function perSession(from: Reading, to: Reading, sessions: number): { rss: number; heap: number; note: string } {
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

/** The server's VmRSS, read after the probe's GC, and the probe's V8 figures: every reading is post-GC. */
export async function reading(server: ServerProcess): Promise<Reading> {
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
