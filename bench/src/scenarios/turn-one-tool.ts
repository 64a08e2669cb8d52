import { readJournal, segment } from "../measure/journal.js";
import { problemsNote, segmentFigures } from "../measure/segments.js";
import { latency } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { MeasureResult, PrepareArgs } from "./host-protocol.js";

/**
 * Sequential turns that each call one host tool once. The observation that the tool finished opens
 * the 5 ms wake window; its width comes from model_call_started.payload.wake (firedAt - openedAt,
 * Date.now() in the server: whole milliseconds) and is reported apart from the rest of the turn.
 */
export const turnOneTool: Scenario = {
  name: "turn_one_tool",
  run: (ctx) =>
    withBrain(ctx, "turn_one_tool", { hops: true }, async (brain) => {
      const prepare: PrepareArgs = { kind: "tool", turns: ctx.quick ? 100 : 1000, warmup: ctx.quick ? 20 : 100 };
      await brain.host.call("prepare", prepare);
      await brain.resetStatements();
      const r = await brain.host.call<MeasureResult>("measure");
      const seg = segment(await readJournal(ctx.sql, r.sessionId), r);
      const note = problemsNote(seg.problems, r.anomalies);
      return [
        latency(
          "turn_one_tool",
          r.turns.map((t) => t.end - t.start),
          { note: note ?? "session.send() → answer; one tool call per turn", cpu: brain.cpu.last },
        ),
        latency("turn_one_tool.wake_window", seg.wakeMs, {
          note: "model_call_started.payload.wake firedAt - openedAt (server Date.now(), whole ms)",
        }),
        latency("turn_one_tool.rest", seg.restMs, { note: "turn latency minus its wake window" }),
        latency("turn_one_tool.call_roundtrip", seg.callMs, {
          note: "tool_call_started → tool_call_ended created_at: intent commit, dispatch, handler, finish (its commit excluded)",
        }),
        ...segmentFigures("turn_one_tool", seg),
      ];
    }),
};
