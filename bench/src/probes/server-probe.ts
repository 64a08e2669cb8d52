// Preloaded into the Brain server process (`node --expose-gc --import …/server-probe.js`) by the
// session_memory scenario only; it changes nothing else. On SIGUSR2 it collects garbage and prints
// the V8 heap figures, which cannot be read from outside the process, on one stderr line.
import { getHeapSpaceStatistics } from "node:v8";

const gc = (globalThis as { gc?: () => void }).gc;

process.on("SIGUSR2", () => {
  gc?.();
  gc?.();
  const m = process.memoryUsage();
  // The young generation grows with the allocation rate (up to twice --max-semi-space-size),
  // whatever the number of sessions. `young` is what of it is resident: V8 counts the pages
  // written to (physical_space_size), which is what it adds to VmRSS; `youngCommitted` is its
  // committed size, resident or not.
  const newSpace = getHeapSpaceStatistics().find((s) => s.space_name === "new_space");
  const young = newSpace?.physical_space_size ?? 0;
  const youngCommitted = newSpace?.space_size ?? 0;
  process.stderr.write(
    `BENCH_MEMORY ${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, arrayBuffers: m.arrayBuffers, young, youngCommitted, gc: gc !== undefined })}\n`,
  );
});
