import { randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import WebSocket from "ws";
import { calibrateWallClock, wallNow } from "../../measure/clock.js";
import { mark, serve } from "../../runner/rpc.js";
import type { Frame, StackHostArgs, StackThroughputArgs, StackThroughputResult, TurnBody } from "./stack-protocol.js";

/**
 * The bare stack's host (floor_stack): one WebSocket to the bare server, answering every invoke
 * at once, and HTTP turns over node:http keep-alive connections, as the SDK sends them.
 */

let port = 0;
let socket: WebSocket | undefined;
const agent = new Agent({ keepAlive: true });
/** Acks awaited, by session:sequence. */
const acks = new Map<string, () => void>();
/** performance.now() of each call's acknowledged result. */
let finishedAt: number[] = [];
/** Intent sent to its commit → invoke frame here (ms, one wall clock), while `dispatch` runs. */
let dispatchMs: number[] | undefined;

function send(frame: Frame): void {
  socket?.send(JSON.stringify(frame));
}

function turn(session: string, rounds: number[]): Promise<void> {
  const body = JSON.stringify({ text: "go", rounds } satisfies TurnBody);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: "127.0.0.1",
        port,
        path: `/turn/${session}`,
        method: "POST",
        agent,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const answer = JSON.parse(Buffer.concat(chunks).toString("utf8")) as { text?: string };
          if (answer.text === "done") resolve();
          else reject(new Error(`turn answered ${JSON.stringify(answer)}`));
        });
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function emit(session: string, q: number): Promise<void> {
  return new Promise((resolve) => {
    acks.set(`${session}:${q}`, resolve);
    send({ t: "emit", s: session, q, data: { k: q } });
  });
}

serve({
  async connect(args: StackHostArgs): Promise<null> {
    port = args.port;
    calibrateWallClock();
    const ws = new WebSocket(`ws://127.0.0.1:${port}/ws`);
    ws.on("message", (data: Buffer) => {
      const frame = JSON.parse(data.toString("utf8")) as Frame;
      if (frame.t === "invoke") {
        dispatchMs?.push(wallNow() - frame.at);
        send({ t: "result", s: frame.s, q: frame.q, output: frame.input });
      } else if (frame.t === "ack") {
        const key = `${frame.s}:${frame.q}`;
        const waiter = acks.get(key);
        if (waiter) {
          acks.delete(key);
          waiter();
        } else finishedAt.push(performance.now());
      }
    });
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    socket = ws;
    return null;
  },

  /** Sequential text turns (no tool calls): milliseconds each. */
  async turns(args: { n: number; warmup: number }): Promise<number[]> {
    const session = randomUUID();
    for (let i = 0; i < args.warmup; i++) await turn(session, []);
    const samples: number[] = [];
    mark("start");
    for (let i = 0; i < args.n; i++) {
      const t0 = performance.now();
      await turn(session, []);
      samples.push(performance.now() - t0);
    }
    mark("end");
    return samples;
  },

  /** Sequential one-call turns: each call's intent sent to its commit → its invoke frame here. */
  async dispatch(args: { n: number; warmup: number }): Promise<number[]> {
    const session = randomUUID();
    for (let i = 0; i < args.warmup; i++) await turn(session, [1]);
    calibrateWallClock();
    dispatchMs = [];
    mark("start");
    for (let i = 0; i < args.n; i++) await turn(session, [1]);
    mark("end");
    const samples = dispatchMs;
    dispatchMs = undefined;
    return samples;
  },

  /** Sequential emits from one session: frame sent → ack, milliseconds each. */
  async emits(args: { n: number; warmup: number }): Promise<number[]> {
    const session = randomUUID();
    for (let i = 0; i < args.warmup; i++) await emit(session, i);
    const samples: number[] = [];
    mark("start");
    for (let i = 0; i < args.n; i++) {
      const t0 = performance.now();
      await emit(session, args.warmup + i);
      samples.push(performance.now() - t0);
    }
    mark("end");
    return samples;
  },

  /** tool_throughput's load on the bare stack: concurrent sessions, 4 calls a turn in 2 rounds. */
  async throughput(args: StackThroughputArgs): Promise<StackThroughputResult> {
    finishedAt = [];
    const windowStart = performance.now() + args.warmupMs;
    const windowEnd = windowStart + args.durationMs;
    const startTimer = setTimeout(() => mark("start"), args.warmupMs);
    const endTimer = setTimeout(() => mark("end"), args.warmupMs + args.durationMs);
    let turns = 0;
    await Promise.all(
      Array.from({ length: args.sessions }, async () => {
        const session = randomUUID();
        while (performance.now() < windowEnd) {
          await turn(session, [2, 2]);
          const end = performance.now();
          if (end >= windowStart && end <= windowEnd) turns++;
        }
      }),
    );
    clearTimeout(startTimer);
    clearTimeout(endTimer);
    const calls = finishedAt.filter((t) => t >= windowStart && t <= windowEnd).length;
    return { calls, turns, windowSeconds: args.durationMs / 1000 };
  },

  async close(): Promise<null> {
    socket?.close();
    agent.destroy();
    return null;
  },
});

process.on("SIGTERM", () => process.exit(0));
