import { latency, rate } from "../measure/stats.js";
import { type Scenario, sustainedWarmupMs, withBrain } from "../runner/context.js";
import type { ThroughputArgs, ThroughputResult } from "./host-protocol.js";

/**
 * 64 concurrent sessions on one host connection; each turn calls 4 tools in 2 rounds of 2.
 * Tool calls per second counts finishes acknowledged (committed) inside the measured window,
 * after a warm-up with the same load.
 */
export const toolThroughput: Scenario = {
  name: "tool_throughput",
  run: (ctx) =>
    withBrain(ctx, "tool_throughput", {}, async (brain) => {
      const args: ThroughputArgs = {
        sessions: 64,
        warmupMs: sustainedWarmupMs(ctx),
        durationMs: ctx.quick ? 3_000 : 10_000,
        maxTurns: ctx.quick ? 150 : 400,
      };
      await brain.resetStatements();
      const r = await brain.host.call<ThroughputResult>("throughput", args);
      const problems = [...r.anomalies];
      if (r.exhausted > 0) problems.unshift(`${r.exhausted} session(s) ran out of script`);
      const note = problems.length > 0 ? `ANOMALIES: ${problems.slice(0, 5).join("; ")}` : undefined;
      const sustained = `${args.sessions} sessions, 4 tools/turn in 2 rounds, ${args.durationMs / 1000} s window after ${args.warmupMs / 1000} s warm-up`;
      return [
        rate("tool_throughput", "calls/s", r.calls, r.windowSeconds, { note: note ?? sustained, cpu: brain.cpu.last }),
        rate("tool_throughput.turns", "turns/s", r.turns, r.windowSeconds),
        latency("tool_throughput.turn", r.turnMs, { note: "turn latency under that load" }),
      ];
    }),
};
