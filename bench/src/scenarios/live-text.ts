import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { latency } from "../measure/stats.js";
import type { BrainUnderTest, Scenario } from "../runner/context.js";

/** Time between the pieces the fake provider streams: a model writing ~50 pieces a second. */
const PIECE_MS = 20;

/**
 * Live text: a fake provider (in this process, on loopback) streams numbered pieces of a model
 * call's text to server A's Agentloop; followers of the session's event stream with live=true,
 * one on A and one on server B (same database, reached only by NOTIFY), time each piece from its
 * write by the provider to its arrival. Both clocks are this process's.
 */
export const liveText: Scenario = {
  name: "live_text",
  async run(ctx) {
    const provider = await fakeProvider();
    const env = { BRAIN_EGRESS_ALLOW: "127.0.0.0/8" };
    const a = await ctx.startBrain("live_text_a", { env });
    let b: BrainUnderTest | undefined;
    try {
      b = await ctx.startBrain("live_text_b", { env });
      const same: number[] = [];
      const other: number[] = [];
      const turns = ctx.quick ? 4 : 12;
      const pieces = ctx.quick ? 40 : 100;
      for (let turn = 0; turn < turns; turn++) {
        const latencies = await oneTurn(a, b, provider, pieces);
        // The first turn warms both servers' code paths: not counted.
        if (turn === 0) continue;
        same.push(...latencies.same);
        other.push(...latencies.other);
      }
      const note = `${pieces} pieces every ${PIECE_MS} ms per model call, provider write → follower read`;
      return {
        figures: [
          latency("live_text.same_server", same, { note: `${note}, follower on the server running the call` }),
          latency("live_text.other_server", other, { note: `${note}, follower on another server (NOTIFY)` }),
        ],
      };
    } finally {
      await b?.close();
      await a.close();
      await new Promise((done) => provider.server.close(done));
    }
  },
};

interface FakeProvider {
  server: Server;
  url: string;
  /** performance.now() at which each piece of the current answer was written. */
  sentAt: number[];
  pieces: number;
}

/** A Chat Completions server streaming `#<i>;` pieces, PIECE_MS apart. */
async function fakeProvider(): Promise<FakeProvider> {
  const state: FakeProvider = { server: createServer(), url: "", sentAt: [], pieces: 0 };
  state.server.on("request", (req, res) => {
    req.resume();
    req.on("end", () => void stream(res, state));
  });
  await new Promise<void>((done) => state.server.listen(0, "127.0.0.1", done));
  state.url = `http://127.0.0.1:${(state.server.address() as AddressInfo).port}/v1`;
  return state;
}

async function stream(res: ServerResponse, state: FakeProvider): Promise<void> {
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ model: "bench", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  res.writeHead(200, { "content-type": "text/event-stream" });
  state.sentAt = [];
  for (let i = 0; i < state.pieces; i++) {
    await sleep(PIECE_MS);
    state.sentAt[i] = performance.now();
    res.write(chunk({ content: `#${i};` }, null));
  }
  res.end(`${chunk({}, "stop")}data: [DONE]\n\n`);
}

/** One turn of `pieces` pieces; each piece's latency to the follower on A and on B. */
async function oneTurn(a: BrainUnderTest, b: BrainUnderTest, provider: FakeProvider, pieces: number) {
  provider.pieces = pieces;
  const model = { provider: "openai", name: "bench", apiKey: "bench", baseUrl: provider.url };
  const session = (await api(a, "POST", "/v1/sessions", { model })) as { id: string };
  const same = follow(a, session.id, provider, pieces);
  const other = follow(b, session.id, provider, pieces);
  await Promise.all([same.ready, other.ready]);
  await api(a, "POST", `/v1/sessions/${session.id}/messages`, { text: "go" });
  return { same: await same.done, other: await other.done };
}

async function api(brain: BrainUnderTest, method: string, path: string, body: unknown): Promise<unknown> {
  const res = await fetch(`${brain.server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${brain.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${await res.text()}`);
  return res.json();
}

/** A live follower: resolves `done` with every piece's latency once the model call has ended. */
function follow(brain: BrainUnderTest, sessionId: string, provider: FakeProvider, pieces: number) {
  const abort = new AbortController();
  const path = `/v1/sessions/${sessionId}/events?follow=true&live=true`;
  const response = fetch(`${brain.server.url}${path}`, {
    headers: { authorization: `Bearer ${brain.token}` },
    signal: abort.signal,
  });
  const ready = response.then(() => undefined);
  const done = response.then(async (res) => {
    const seen: number[] = [];
    let buffered = "";
    for await (const chunk of res.body!.pipeThrough(new TextDecoderStream())) {
      const now = performance.now();
      buffered += chunk;
      const lines = buffered.split("\n");
      buffered = lines.pop()!;
      for (const line of lines) {
        const event = JSON.parse(line) as { live?: boolean; kind: string; text?: string };
        if (event.live)
          for (const m of (event.text ?? "").matchAll(/#(\d+);/g)) seen.push(now - provider.sentAt[Number(m[1])]!);
        if (event.kind === "model_call_ended") {
          abort.abort();
          if (seen.length < pieces / 2) throw new Error(`only ${seen.length} of ${pieces} pieces arrived live`);
          return seen;
        }
      }
    }
    throw new Error("the event stream ended before the model call did");
  });
  done.catch(() => {});
  return { ready, done };
}
