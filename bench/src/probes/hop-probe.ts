// Preloaded (`--import …/hop-probe.js`) into the Brain server and the bench's host by
// `--trace-hops`; it changes nothing else. It subscribes to the hops Brain publishes along a tool
// call's path (contracts/src/hop-trace.ts) and stamps each (hops.ts's hopClock), then writes
// them to BENCH_HOP_FILE as the process exits: hops.ts lines the two processes' hops up into the
// steps of a sequential path.
import { subscribe } from "node:diagnostics_channel";
import { writeFileSync } from "node:fs";
import { HOP_CHANNEL, HOPS } from "@aexhq/brain-contracts";
import { hopClock } from "./hops.js";

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
    at[count] = hopClock();
    which[count] = index.get(message as string) ?? 255;
    count++;
  });
  process.on("exit", () => {
    const hops: [string, number][] = [];
    for (let i = 0; i < count; i++) hops.push([HOPS[which[i]!] ?? "?", at[i]!]);
    writeFileSync(file, JSON.stringify(hops));
  });
}
