// The tools a chaos host serves. Each handler first records its invocation (synchronously, in the
// host's record file, before any effect), and records every acknowledgement it gets: the emitted
// event's seq, the result's seq, a finish that resolved. The checks compare these with the journal.
import { appendFileSync } from "node:fs";
import { httpEnv, tool } from "@aexhq/brain";
import { z } from "zod";

export type HostRecord =
  | { t: "invoke"; session: string; call: number; tool: string; n: number; pid: number }
  | { t: "ack"; session: string; call: number; seq: number; kind: string }
  | { t: "finished"; session: string; call: number };

export const TICK = "chaos_tick";

const Input = z.object({ n: z.number().int() });
type Ctx = {
  sessionId: string;
  sequence: number;
  signal: AbortSignal;
  emit(kind: string, data: unknown): Promise<number>;
  emitResult(value: unknown): Promise<number>;
  finish(value?: unknown): Promise<void>;
};

/** A small deterministic spread of delays per call input, in [min, max] ms. */
function delay(n: number, salt: number, min: number, max: number): number {
  return min + ((Math.imul(n + salt, 2654435761) >>> 0) % (max - min + 1));
}
const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

export function hostTools(recordFile: string, targetUrl: string) {
  // Each line carries its time, to line it up with the server and Postgres logs when a check fails.
  const record = (r: HostRecord) =>
    appendFileSync(recordFile, `${JSON.stringify({ ...r, at: new Date().toISOString() })}\n`);
  const invoked = (name: string, n: number, ctx: Ctx) =>
    record({ t: "invoke", session: ctx.sessionId, call: ctx.sequence, tool: name, n, pid: process.pid });
  // A rejected emission (the database or the connection is down) is simply not acknowledged.
  const tick = async (ctx: Ctx, data: unknown) => {
    try {
      const seq = await ctx.emit(TICK, data);
      record({ t: "ack", session: ctx.sessionId, call: ctx.sequence, seq, kind: TICK });
    } catch {}
  };
  const result = async (ctx: Ctx, value: unknown) => {
    try {
      const seq = await ctx.emitResult(value);
      record({ t: "ack", session: ctx.sessionId, call: ctx.sequence, seq, kind: "tool_result" });
    } catch {}
  };
  const finish = async (ctx: Ctx, value: unknown) => {
    try {
      await ctx.finish(value);
      record({ t: "finished", session: ctx.sessionId, call: ctx.sequence });
    } catch {}
  };

  const quick = tool({
    name: "quick",
    description: "Emits one event and finishes at once.",
    input: Input,
    timeoutMs: 5_000,
    run: async ({ n }, ctx) => {
      invoked("quick", n, ctx);
      await tick(ctx, { n });
      await finish(ctx, { n });
    },
  });
  const slow = tool({
    name: "slow",
    description: "Emits a few events over a second or two, a partial result, then finishes.",
    input: Input,
    timeoutMs: 6_000,
    run: async ({ n }, ctx) => {
      invoked("slow", n, ctx);
      for (let i = 0; i < 3 && !ctx.signal.aborted; i++) {
        await sleep(delay(n, i, 100, 600), ctx.signal);
        await tick(ctx, { n, i });
        if (i === 1) await result(ctx, { n, partial: true });
      }
      if (!ctx.signal.aborted) await finish(ctx, { n });
    },
  });
  const background = tool({
    name: "background",
    description: "Returns at once and finishes later, after the turn.",
    input: Input,
    timeoutMs: 8_000,
    run: async ({ n }, ctx) => {
      invoked("background", n, ctx);
      void (async () => {
        for (let i = 0; i < 3 && !ctx.signal.aborted; i++) {
          await sleep(delay(n, i, 300, 1_500), ctx.signal);
          await tick(ctx, { n, i });
        }
        if (!ctx.signal.aborted) await finish(ctx, { n, background: true });
      })();
    },
  });
  const stall = tool({
    name: "stall",
    description: "Never finishes: it reaches its deadline.",
    input: Input,
    timeoutMs: 2_500,
    run: async ({ n }, ctx) => {
      invoked("stall", n, ctx);
      await new Promise<void>((resolve) => ctx.signal.addEventListener("abort", () => resolve(), { once: true }));
    },
  });
  // Run by a Brain worker, not by this host: an HTTP Environment whose requests the run's target
  // server records, one per invocation.
  const fetchTool = tool({
    name: "fetch",
    description: "GET /chaos/{n} through an HTTP Environment.",
    input: Input,
    timeoutMs: 5_000,
    implementation: () => ({ type: "http_json", method: "GET", path: "/chaos/{n}" }),
  });
  const target = httpEnv({ name: "target", baseUrl: targetUrl });
  return () => [quick(), slow(), background(), stall(), fetchTool({ env: target })];
}

export const TOOL_NAMES = ["quick", "slow", "background", "stall", "fetch"] as const;
