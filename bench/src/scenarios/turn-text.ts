import { readJournal, segment } from "../measure/journal.js";
import { problemsNote, segmentFigures } from "../measure/segments.js";
import { latency } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { MeasureResult, PrepareArgs } from "./host-protocol.js";

/** One session, sequential text-only turns with the scripted model: send → answer. */
export const turnText: Scenario = {
  name: "turn_text",
  run: (ctx) =>
    withBrain(ctx, "turn_text", {}, async (brain) => {
      const prepare: PrepareArgs = { kind: "text", turns: ctx.quick ? 200 : 1000, warmup: ctx.quick ? 30 : 100 };
      const http = await brain.host.call<number[]>("http", { n: ctx.quick ? 300 : 1000 });
      await brain.host.call("prepare", prepare);
      await brain.resetStatements();
      const r = await brain.host.call<MeasureResult>("measure");
      const seg = segment(await readJournal(ctx.sql, r.sessionId), r);
      const note = problemsNote(seg.problems, r.anomalies) ?? "session.send() → answer, sequential, one session";
      return [
        latency(
          "turn_text",
          r.turns.map((t) => t.end - t.start),
          { note, cpu: brain.cpu.last },
        ),
        ...segmentFigures("turn_text", seg),
        latency("floor_http", http, {
          note: "GET /healthz from the host process to the server, node:http keep-alive (as the SDK) → Fastify: an HTTP round trip's floor",
        }),
      ];
    }),
};
