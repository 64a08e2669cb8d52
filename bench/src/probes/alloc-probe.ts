// Preloaded (`--import …/alloc-probe.js`) into the Brain server and the bench's host by
// `--alloc-prof`; it changes nothing else. The first SIGUSR2 starts V8's sampling heap profiler,
// counting objects that die young too (what a scavenge costs, and most of a busy server's
// allocations), the second stops it and writes the profile to BENCH_ALLOC_PROFILE. What a
// process allocates per tool call cannot be read from outside it.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";

const file = process.env.BENCH_ALLOC_PROFILE;
const session = new Session();
session.connect();
let sampling = false;

process.on("SIGUSR2", () => {
  if (!file) return;
  if (!sampling) {
    sampling = true;
    // Node's typings predate the two include flags; V8 (Node 20) takes them.
    const params = {
      samplingInterval: 8192,
      includeObjectsCollectedByMajorGC: true,
      includeObjectsCollectedByMinorGC: true,
    };
    session.post("HeapProfiler.startSampling", params as { samplingInterval: number });
    return;
  }
  sampling = false;
  session.post("HeapProfiler.stopSampling", (error, result) => {
    if (!error) writeFileSync(file, JSON.stringify(result.profile));
  });
});
