import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { type Figure, latency } from "../measure/stats.js";

/**
 * `--trace-hops`: where a sequential path's time goes between the processes. The server and the
 * host preload hop-probe.ts, which records the hops Brain publishes (contracts/src/hop-trace.ts);
 * here the two records are merged in time, and each pair of consecutive hops inside the measured
 * window is a step (`server:writer.batch-sent → server:writer.batch-committed` is a commit's round
 * trip, `server:server.invoke-sent → host:sdk.frame-received` the socket between them). A step
 * that most turns take becomes a latency figure; on a path with one call at a time they add up to
 * the path, which is why only the sequential scenarios ask for them.
 */

/** One process's hops as hop-probe.ts wrote them: [hop, wall-clock ms]. */
export type HopRecord = [string, number][];

export interface HopStep {
  step: string;
  ms: number[];
}

/**
 * A step must appear at least this share as often as the most frequent one to be reported: a
 * turn with one tool call commits five batches but sends one invoke, while a heartbeat's write
 * comes a few times in a window of a thousand turns.
 */
const COMMON = 0.1;

/**
 * The steps of a sequential path: consecutive hops of all `processes` (merged by time) inside
 * `window`, grouped by their two hops, in the order the path first takes them. Steps rarer than
 * a tenth of the most frequent one (a heartbeat's write) are left out.
 */
export function lineUp(processes: Record<string, HopRecord>, window: { start: number; end: number }): HopStep[] {
  const events: { label: string; at: number }[] = [];
  for (const [name, hops] of Object.entries(processes)) {
    for (const [hop, at] of hops)
      if (at >= window.start && at <= window.end) events.push({ label: `${name}:${hop}`, at });
  }
  events.sort((a, b) => a.at - b.at);
  const steps = new Map<string, number[]>();
  for (let i = 1; i < events.length; i++) {
    const step = `${events[i - 1]!.label} → ${events[i]!.label}`;
    const list = steps.get(step) ?? [];
    list.push(events[i]!.at - events[i - 1]!.at);
    steps.set(step, list);
  }
  const most = Math.max(0, ...[...steps.values()].map((ms) => ms.length));
  return [...steps.entries()].filter(([, ms]) => ms.length >= most * COMMON).map(([step, ms]) => ({ step, ms }));
}

export function hopFigures(scenario: string, steps: HopStep[]): Figure[] {
  return steps.map((s) =>
    latency(`${scenario} hop · ${s.step}`, s.ms, {
      note: "--trace-hops: consecutive hops of the measured turns, server and host on one wall clock",
    }),
  );
}

/**
 * What a process of the run needs to record its hops into `dir` (with `--trace-hops`), else
 * nothing (`dir` null).
 */
export function hopProbe(dir: string | null, name: string): { args: string[]; env: NodeJS.ProcessEnv; file?: string } {
  if (dir === null) return { args: [], env: {} };
  const file = join(dir, `${name}.hops.json`);
  rmSync(file, { force: true });
  return { args: ["--import", new URL("./hop-probe.js", import.meta.url).href], env: { BENCH_HOP_FILE: file }, file };
}

/**
 * The clock hops are stamped with, in epoch milliseconds. Node reads timeOrigin off the realtime
 * clock in microseconds as the process starts, so this agrees across processes to a few
 * microseconds. clock.ts's anchoring, which spins for Date.now()'s millisecond edges, came out
 * 0.2 ms low in a server busy starting up, enough to put one process's hop before the other's
 * that caused it.
 */
export function hopClock(): number {
  return performance.timeOrigin + performance.now();
}

/** The measured window, from the host's marks, on the hops' clock. */
export class HopWindow {
  start = Number.NaN;
  end = Number.NaN;

  onMark = (mark: string): void => {
    if (mark === "start") this.start = hopClock();
    if (mark === "end") this.end = hopClock();
  };
}

/** Reads the processes' hop files (once they have exited) and lines them up in `window`. */
export function readHops(files: Record<string, string>, window: HopWindow): HopStep[] {
  const processes: Record<string, HopRecord> = {};
  for (const [name, file] of Object.entries(files)) {
    processes[name] = existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as HopRecord) : [];
  }
  return lineUp(processes, window);
}
