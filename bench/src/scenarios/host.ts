// The host application: a separate process that uses only the public SDK (@aexhq/brain), like a
// customer's app. It declares the benchmark tools, keeps one host connection, drives turns and
// timestamps them. The runner forks it and talks to it over the IPC channel (rpc.ts).
import { Agent as HttpAgent, get as httpGet } from "node:http";
import { Brain, type ScriptStep, type Session, tool } from "@aexhq/brain";
import WebSocket from "ws";
import { z } from "zod";
import { calibrateWallClock, wallNow } from "../measure/clock.js";
import { mark, serve } from "../runner/rpc.js";
import type {
  AlternateArgs,
  AlternateResult,
  IdleArgs,
  IdleResult,
  InitArgs,
  MeasureResult,
  PrepareArgs,
  PrepareResult,
  ThroughputArgs,
  ThroughputResult,
  Turn,
} from "./host-protocol.js";
import { FILL_PER_TURN } from "./host-protocol.js";

let brain: Brain | undefined;

/**
 * When each frame reached the host connection's socket, recorded while measuring: the SDK's
 * WebSocket is the `ws` package, and its "message" events are timestamped here before the SDK sees
 * them. This splits tool_dispatch into server → socket and socket → handler (the SDK).
 */
const frames: { at: number; data: unknown }[] = [];
let recordFrames = false;
const emitEvent = WebSocket.prototype.emit;
WebSocket.prototype.emit = function (this: WebSocket, event: string | symbol, ...args: unknown[]): boolean {
  if (recordFrames && event === "message") frames.push({ at: wallNow(), data: args[0] });
  return emitEvent.call(this, event, ...args);
};

function invokesOf(sessionId: string): { seq: number; at: number }[] {
  const out: { seq: number; at: number }[] = [];
  for (const f of frames) {
    const frame = JSON.parse(String(f.data)) as { type?: string; sessionId?: string; sequence?: number };
    if (frame.type === "invoke" && frame.sessionId === sessionId && frame.sequence !== undefined) {
      out.push({ seq: frame.sequence, at: f.at });
    }
  }
  return out;
}

/** Handler entries by `${sessionId}:${sequence}`, wall clock. */
const entered = new Map<string, number>();
/** `await ctx.emit` round trips of the current measurement, ms. */
let emitMs: number[] = [];
/** performance.now() when each throughput call's finish was acknowledged. */
let finishedAt: number[] = [];

const echo = tool({
  name: "bench_echo",
  description: "Returns its input.",
  input: z.object({ i: z.number().int() }),
  run: async ({ i }, ctx) => {
    entered.set(`${ctx.sessionId}:${ctx.sequence}`, wallNow());
    return ctx.finish({ i });
  },
});

const emitter = tool({
  name: "bench_emit",
  description: "Emits n extension events, then finishes.",
  input: z.object({ n: z.number().int().min(1) }),
  run: async ({ n }, ctx) => {
    for (let k = 0; k < n; k++) {
      const t0 = performance.now();
      await ctx.emit("bench.tick", { k });
      emitMs.push(performance.now() - t0);
    }
    return ctx.finish({ n });
  },
});

const filler = tool({
  name: "bench_fill",
  description: "Emits n small extension events, 200 in flight at a time, then finishes: journal records, fast.",
  input: z.object({ n: z.number().int().min(1) }),
  run: async ({ n }, ctx) => {
    for (let k = 0; k < n; k += 200) {
      await Promise.all(Array.from({ length: Math.min(200, n - k) }, (_, j) => ctx.emit("bench.fill", { k: k + j })));
    }
    return ctx.finish({ n });
  },
});

const work = tool({
  name: "bench_work",
  description: "A unit of work for the throughput scenario.",
  input: z.object({ i: z.number().int() }),
  run: async ({ i }, ctx) => {
    await ctx.finish({ i });
    finishedAt.push(performance.now());
  },
});

function client(): Brain {
  if (!brain) throw new Error("init first");
  return brain;
}

function script(kind: PrepareArgs["kind"], turns: number, emits: number, fills: number[] = []): ScriptStep[] {
  const steps: ScriptStep[] = [];
  for (const n of fills) steps.push({ toolCalls: [{ name: "bench_fill", input: { n } }] }, { text: "ok" });
  for (let i = 0; i < turns; i++) {
    if (kind === "tool") steps.push({ toolCalls: [{ name: "bench_echo", input: { i } }] });
    if (kind === "emit") steps.push({ toolCalls: [{ name: "bench_emit", input: { n: emits } }] });
    steps.push({ text: "ok" });
  }
  return steps;
}

let prepared: { session: Session; turns: number } | undefined;
/** Every session prepared so far, by id (for `alternate`). */
const preparedById = new Map<string, Session>();

async function runTurns(session: Session, n: number, expected: string, anomalies: string[]): Promise<Turn[]> {
  const turns: Turn[] = [];
  for (let i = 0; i < n; i++) {
    const start = wallNow();
    const answer = await session.send("go");
    const end = wallNow();
    turns.push({ start, end });
    if (answer !== expected && anomalies.length < 20) anomalies.push(`turn ${i}: answered ${JSON.stringify(answer)}`);
  }
  return turns;
}

let baseUrl = "";

serve({
  async init(args: InitArgs): Promise<null> {
    brain = new Brain({ url: args.url, token: args.token });
    baseUrl = args.url;
    return null;
  },

  /**
   * The HTTP floor between these two processes: GET /healthz the way the SDK sends requests
   * (node:http on a keep-alive connection, sdk/src/http-transport.ts).
   */
  async http(args: { n: number }): Promise<number[]> {
    const agent = new HttpAgent({ keepAlive: true });
    const once = () =>
      new Promise<number>((resolve, reject) => {
        const t0 = performance.now();
        httpGet(`${baseUrl}/healthz`, { agent }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            JSON.parse(Buffer.concat(chunks).toString("utf8"));
            resolve(performance.now() - t0);
          });
          res.on("error", reject);
        }).on("error", reject);
      });
    for (let i = 0; i < 100; i++) await once();
    const samples: number[] = [];
    for (let i = 0; i < args.n; i++) samples.push(await once());
    return samples;
  },

  async prepare(args: PrepareArgs): Promise<PrepareResult> {
    const emits = args.emits ?? 1;
    const fills: number[] = [];
    // Each fill turn also writes its own ~10 records (message, model calls, the call, the answer).
    for (let left = args.prefill ?? 0; left > 10; left -= Math.min(FILL_PER_TURN, left - 10) + 10) {
      fills.push(Math.min(FILL_PER_TURN, left - 10));
    }
    const tools = args.kind === "emit" ? [emitter()] : fills.length > 0 ? [echo(), filler()] : [echo()];
    const session = await client().sessions.create({
      model: { provider: "scripted", script: script(args.kind, args.warmup + args.turns, emits, fills) },
      tools,
    });
    const anomalies: string[] = [];
    await runTurns(session, fills.length, "ok", anomalies);
    if (anomalies.length > 0) throw new Error(`prefill turns: ${anomalies.join("; ")}`);
    await runTurns(session, args.warmup, "ok", []);
    prepared = { session, turns: args.turns };
    preparedById.set(session.id, session);
    return { sessionId: session.id };
  },

  async measure(): Promise<MeasureResult> {
    if (!prepared) throw new Error("prepare first");
    const { session, turns: n } = prepared;
    entered.clear();
    emitMs = [];
    const anomalies: string[] = [];
    frames.length = 0;
    calibrateWallClock();
    mark("start");
    recordFrames = true;
    const turns = await runTurns(session, n, "ok", anomalies);
    recordFrames = false;
    mark("end");
    const handlers: MeasureResult["handlers"] = [];
    for (const [key, at] of entered) {
      const [sessionId, seq] = key.split(":");
      if (sessionId === session.id) handlers.push({ seq: Number(seq), enteredAt: at });
    }
    return { sessionId: session.id, turns, handlers, invokes: invokesOf(session.id), emitMs, anomalies };
  },

  /**
   * Text turns on several prepared sessions in turn (one turn each, round after round), so that
   * whatever else the machine does falls on all of them alike; latencies by session id.
   */
  async alternate(args: AlternateArgs): Promise<AlternateResult> {
    const sessions = args.sessionIds.map((id) => {
      const s = preparedById.get(id);
      if (!s) throw new Error(`session ${id} was not prepared`);
      return s;
    });
    const turnMs: Record<string, number[]> = Object.fromEntries(args.sessionIds.map((id) => [id, []]));
    const anomalies: string[] = [];
    mark("start");
    for (let round = 0; round < args.turns; round++) {
      for (const session of sessions) {
        const t0 = performance.now();
        const answer = await session.send("go");
        turnMs[session.id]!.push(performance.now() - t0);
        if (answer !== "ok" && anomalies.length < 20) anomalies.push(`${session.id} round ${round}: ${answer}`);
      }
    }
    mark("end");
    return { turnMs, anomalies };
  },

  async throughput(args: ThroughputArgs): Promise<ThroughputResult> {
    const steps: ScriptStep[] = [];
    for (let i = 0; i < args.maxTurns; i++) {
      steps.push({
        toolCalls: [
          { name: "bench_work", input: { i: 4 * i } },
          { name: "bench_work", input: { i: 4 * i + 1 } },
        ],
      });
      steps.push({
        toolCalls: [
          { name: "bench_work", input: { i: 4 * i + 2 } },
          { name: "bench_work", input: { i: 4 * i + 3 } },
        ],
      });
      steps.push({ text: "done" });
    }
    const sessions = await Promise.all(
      Array.from({ length: args.sessions }, () =>
        client().sessions.create({ model: { provider: "scripted", script: steps }, tools: [work()] }),
      ),
    );
    finishedAt = [];
    const t0 = performance.now();
    const windowStart = t0 + args.warmupMs;
    const windowEnd = windowStart + args.durationMs;
    const startTimer = setTimeout(() => mark("start"), args.warmupMs);
    const endTimer = setTimeout(() => mark("end"), args.warmupMs + args.durationMs);
    const turnMs: number[] = [];
    const anomalies: string[] = [];
    let turnsInWindow = 0;
    let exhausted = 0;
    await Promise.all(
      sessions.map(async (session) => {
        for (let i = 0; performance.now() < windowEnd; i++) {
          if (i >= args.maxTurns) {
            exhausted++;
            return;
          }
          const start = performance.now();
          const answer = await session.send("go");
          const end = performance.now();
          if (end >= windowStart && end <= windowEnd) turnsInWindow++;
          if (start >= windowStart && end <= windowEnd) turnMs.push(end - start);
          if (answer !== "done" && anomalies.length < 20) anomalies.push(`${session.id} turn ${i}: ${answer}`);
        }
      }),
    );
    clearTimeout(startTimer);
    clearTimeout(endTimer);
    const calls = finishedAt.filter((t) => t >= windowStart && t <= windowEnd).length;
    await Promise.all(sessions.map((s) => s.end()));
    return {
      calls,
      turns: turnsInWindow,
      windowSeconds: args.durationMs / 1000,
      turnMs,
      exhausted,
      anomalies,
    };
  },

  async idle(args: IdleArgs): Promise<IdleResult> {
    const t0 = performance.now();
    let next = 0;
    let created = 0;
    const turns = args.turns ?? 1;
    const anomalies: string[] = [];
    const lane = async () => {
      while (next < args.count) {
        next++;
        // One text turn by default: a script of one `{ text: "ok" }` step, as session_memory has always run.
        const session = await client().sessions.create({
          model: { provider: "scripted", script: script(args.kind ?? "text", turns, 1) },
          tools: [echo()],
        });
        for (let i = 0; i < turns; i++) {
          const answer = await session.send("hello");
          if (answer !== "ok" && anomalies.length < 20) anomalies.push(`${session.id} turn ${i}: ${answer}`);
        }
        created++;
      }
    };
    await Promise.all(Array.from({ length: args.concurrency }, lane));
    return { created, seconds: (performance.now() - t0) / 1000, anomalies };
  },

  async close(): Promise<null> {
    await brain?.close();
    return null;
  },
});

// Exit (rather than die) on the runner's SIGTERM, so that `--cpu-prof` writes the host's profile.
process.on("SIGTERM", () => process.exit(0));
