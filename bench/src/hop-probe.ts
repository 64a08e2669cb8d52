// Preloaded (`--import …/hop-probe.js`) into the Brain server and the bench's host by
// `--trace-hops`; it changes nothing else. It subscribes to the hops Brain publishes along a tool
// call's path (contracts/src/hop-trace.ts) and stamps each with the realtime clock, then writes
// them to BENCH_HOP_FILE as the process exits: hops.ts lines the two processes' hops up into the
// steps of a sequential path.
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { HOP_CHANNEL, HOPS } from "@aexhq/brain-contracts";

const file = process.env.BENCH_HOP_FILE;
/** Enough for every hop of a full run's sequential scenario; a busier one keeps its first hops. */
const MAX_HOPS = 1 << 20;
const index = new Map<string, number>(HOPS.map((name, i) => [name, i]));
const at = new Float64Array(MAX_HOPS);
const which = new Uint8Array(MAX_HOPS);
let count = 0;

if (file) {
  subscribe(HOP_CHANNEL, (message) => {
    if (count === MAX_HOPS) return;
    // Node reads timeOrigin off the realtime clock in microseconds as the process starts, so this
    // agrees across processes to a few microseconds. clock.ts's anchoring, which spins for
    // Date.now()'s millisecond edges, came out 0.2 ms low in a server busy starting up, enough
    // to put one process's hop before the other's that caused it.
    at[count] = performance.timeOrigin + performance.now();
    which[count] = index.get(message as string) ?? 255;
    count++;
  });
  process.on("exit", () => {
    const hops: [string, number][] = [];
    for (let i = 0; i < count; i++) hops.push([HOPS[which[i]!] ?? "?", at[i]!]);
    writeFileSync(file, JSON.stringify(hops));
  });
}
