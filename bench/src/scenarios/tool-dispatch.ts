import { readJournal, segment } from "../measure/journal.js";
import { problemsNote } from "../measure/segments.js";
import { latency } from "../measure/stats.js";
import { type Scenario, withBrain } from "../runner/context.js";
import type { MeasureResult, PrepareArgs } from "./host-protocol.js";

/**
 * tool_call_started committed → host handler entered. One clock: the record's created_at is
 * Postgres clock_timestamp() (gettimeofday, µs) taken when the row is inserted, inside the
 * transaction that then NOTIFYs and commits; the handler's entry is the host's realtime clock with
 * µs resolution (clock.ts: performance.now() anchored on Date.now() before the run), same machine,
 * same CLOCK_REALTIME. Because created_at precedes the commit, the figure includes the commit
 * itself (its WAL flush): it is an upper bound of commit → handler by one commit.
 */
export const toolDispatch: Scenario = {
  name: "tool_dispatch",
  run: (ctx) =>
    withBrain(ctx, "tool_dispatch", { hops: true }, async (brain) => {
      const prepare: PrepareArgs = { kind: "tool", turns: ctx.quick ? 100 : 1000, warmup: ctx.quick ? 20 : 100 };
      await brain.host.call("prepare", prepare);
      await brain.resetStatements();
      const r = await brain.host.call<MeasureResult>("measure");
      const rows = await readJournal(ctx.sql, r.sessionId);
      const seg = segment(rows, r);
      const note =
        problemsNote(seg.problems, r.anomalies) ??
        "tool_call_started.created_at (clock_timestamp at insert, before COMMIT) → first line of the handler, one machine clock";
      const started = new Map(rows.filter((x) => x.kind === "tool_call_started").map((x) => [x.seq, x.ms]));
      const entered = new Map(r.handlers.map((h) => [h.seq, h.enteredAt]));
      const toSocket: number[] = [];
      const inSdk: number[] = [];
      for (const { seq, at } of r.invokes) {
        const s = started.get(seq);
        const e = entered.get(seq);
        if (s !== undefined) toSocket.push(at - s);
        if (e !== undefined) inSdk.push(e - at);
      }
      return [
        latency("tool_dispatch", seg.dispatchMs, { note, cpu: brain.cpu.last }),
        latency("tool_dispatch.to_host_socket", toSocket, {
          note: "tool_call_started.created_at → invoke frame's 'message' event on the host's socket: commit, server, network",
        }),
        latency("tool_dispatch.in_sdk", inSdk, {
          note: "invoke frame on the host's socket → handler entered: the SDK's parse, routing and input validation",
        }),
      ];
    }),
};
