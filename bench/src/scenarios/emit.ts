import { problemsNote } from "../measure/segments.js";
import { latency } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { MeasureResult, PrepareArgs } from "./host-protocol.js";

/** `await ctx.emit(kind, data)` round trips, sequential inside one tool call: frame → commit → ack. */
export const emit: Scenario = {
  name: "emit",
  run: (ctx) =>
    withBrain(ctx, "emit", { hops: true }, async (brain) => {
      const emits = 10;
      const prepare: PrepareArgs = { kind: "emit", turns: ctx.quick ? 20 : 100, warmup: ctx.quick ? 5 : 20, emits };
      await brain.host.call("prepare", prepare);
      await brain.resetStatements();
      const r = await brain.host.call<MeasureResult>("measure");
      const note = problemsNote([], r.anomalies) ?? `${emits} sequential awaited emits per tool call`;
      return [latency("emit", r.emitMs, { note, cpu: brain.cpu.last })];
    }),
};
