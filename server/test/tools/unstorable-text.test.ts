// Text Postgres cannot store (a NUL character, an unpaired UTF-16 surrogate) in what a host sends
// about its call. An extension event carrying it is refused with `unstorable_text` and the call
// goes on; a result-bearing frame carrying it is refused too, and the call ends at once with an
// `invalid_output` error in its place: never `internal_error`, never open until its deadline.
import { type BrainError, tool } from "@aexhq/brain";
import { afterAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { z } from "zod";
import { createSession, hostTool, postMessage, request } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { startFakeOpenAI } from "../../../testkit/fake-providers.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { connectHost, type HostSocket, registerHostOn } from "../../../testkit/host-sockets.js";
import { toolCall, until } from "../../../testkit/tool-harness.js";

const brain = startedBeforeAll(() => startBrain());
const sockets: WebSocket[] = [];
afterAll(() => {
  for (const ws of sockets) ws.terminate();
});

const NUL = "a\u0000b";
const HIGH = "x\ud800y";
const LOW = "\udc00";
/** One minute: a call still open when a test looks has not been ended "at once". */
const DEADLINE_MS = 60_000;

/** A host socket with one open call of a fresh session (the invoke has arrived). */
async function openCall(): Promise<{ socket: HostSocket; call: { sessionId: string; sequence: number } }> {
  const host = await registerHostOn(brain);
  const socket = await connectHost(brain, host.id, host.token, sockets);
  expect((await socket.next()).type).toBe("welcome");
  const session = await createSession(brain, {
    hostId: host.id,
    model: { provider: "scripted", script: [{ toolCalls: [{ name: "t", input: {} }] }, { text: "done" }] },
    tools: [{ ...hostTool("t"), timeoutMs: DEADLINE_MS }],
  });
  await postMessage(brain, session.id, "go");
  const invoke = await socket.next();
  if (invoke.type !== "invoke") throw new Error(`expected an invoke, got ${invoke.type}`);
  return { socket, call: { sessionId: session.id, sequence: invoke.sequence } };
}

async function recordCount(sessionId: string): Promise<number> {
  const [row] = await brain.db.sql<{ n: number }[]>`
    SELECT count(*)::int AS n FROM records WHERE session_id = ${sessionId}`;
  return row!.n;
}

describe("emit frames with unstorable text", () => {
  it("are refused with unstorable_text, write nothing, and the call stays open", async () => {
    const { socket, call } = await openCall();
    const before = await recordCount(call.sessionId);
    const datas: unknown[] = [NUL, HIGH, LOW, { nested: [1, { deep: NUL }] }, { [NUL]: 1 }, { [HIGH]: "k" }, [LOW]];
    let id = 1;
    for (const data of datas) {
      socket.ws.send(JSON.stringify({ type: "emit", id, ...call, kind: "progress", data }));
      const answer = await socket.next();
      expect(answer, JSON.stringify(data)).toMatchObject({ type: "reject", id, error: { code: "unstorable_text" } });
      id++;
    }
    // An unstorable kind never matches the kind pattern.
    for (const kind of [`p${NUL}`, `p${HIGH}`]) {
      socket.ws.send(JSON.stringify({ type: "emit", id, ...call, kind, data: 1 }));
      expect(await socket.next()).toMatchObject({ type: "reject", id, error: { code: "invalid_kind" } });
      id++;
    }
    expect(await recordCount(call.sessionId)).toBe(before);
    expect((await toolCall(brain.db.sql, call.sessionId, call.sequence))?.status).toBe("running");
    // The call goes on: a storable emission and a finish are accepted.
    socket.ws.send(JSON.stringify({ type: "emit", id: 100, ...call, kind: "progress", data: "ok \ud83d\ude00" }));
    expect(await socket.next()).toMatchObject({ type: "ack", id: 100 });
    socket.ws.send(JSON.stringify({ type: "finish", id: 101, ...call, outcome: { status: "ok", value: 1 } }));
    expect(await socket.next()).toMatchObject({ type: "ack", id: 101 });
    expect((await toolCall(brain.db.sql, call.sessionId, call.sequence))?.outcome).toEqual({ status: "ok", value: 1 });
  });
});

describe("result-bearing frames with unstorable text", () => {
  const cases: [string, Record<string, unknown>][] = [
    ["result value (NUL)", { type: "result", outcome: { status: "ok", value: NUL } }],
    ["result value key (high surrogate)", { type: "result", outcome: { status: "ok", value: { [HIGH]: 1 } } }],
    ["result content (low surrogate)", { type: "result", outcome: { status: "ok", value: 1 }, content: LOW }],
    ["return value (high surrogate)", { type: "return", outcome: { status: "ok", value: [1, HIGH] } }],
    ["return content (NUL)", { type: "return", content: NUL }],
    ["finish value (low surrogate)", { type: "finish", outcome: { status: "ok", value: { a: LOW } } }],
    [
      "finish error message (NUL)",
      { type: "finish", outcome: { status: "error", error: { code: "boom", message: NUL } } },
    ],
    [
      "finish error details (high surrogate)",
      { type: "finish", outcome: { status: "error", error: { code: "boom", message: "m", details: { x: HIGH } } } },
    ],
    ["finish error code (NUL)", { type: "finish", outcome: { status: "error", error: { code: NUL, message: "m" } } }],
    ["finish content (NUL)", { type: "finish", content: NUL }],
  ];
  it.each(cases)("%s: refused, and the call ends invalid_output at once", async (_name, frame) => {
    const { socket, call } = await openCall();
    const started = Date.now();
    socket.ws.send(JSON.stringify({ ...frame, id: 7, ...call }));
    const answer = await socket.next();
    expect(answer).toMatchObject({ type: "reject", id: 7, error: { code: "unstorable_text" } });
    if (answer.type === "reject") expect(answer.error.message).toMatch(/cannot be stored/);
    const ended = await until("the call to end", async () => {
      const row = await toolCall(brain.db.sql, call.sessionId, call.sequence);
      return row?.status === "ended" ? row : undefined;
    });
    expect(Date.now() - started).toBeLessThan(DEADLINE_MS / 2);
    expect(ended.outcome).toMatchObject({ status: "error", error: { code: "invalid_output" } });
    const records = await brain.db.sql<{ kind: string; payload: { outcome?: unknown } }[]>`
      SELECT kind, payload FROM journal
      WHERE session_id = ${call.sessionId} AND (payload->>'call')::bigint = ${call.sequence} ORDER BY seq`;
    const kinds = records.map((r) => r.kind);
    expect(kinds.at(-1)).toBe("tool_call_ended");
    expect(kinds).toContain("tool_result");
    // Nothing more is accepted for the call.
    socket.ws.send(JSON.stringify({ type: "finish", id: 8, ...call }));
    expect(await socket.next()).toMatchObject({ type: "reject", id: 8, error: { code: "call_ended" } });
  });
});

describe("the SDK", () => {
  it("ctx.emit and ctx.emitResult reject with unstorable_text; the call ends invalid_output", async () => {
    const { Brain } = await import("@aexhq/brain");
    const client = new Brain({ url: brain.url, token: brain.token });
    const seen: string[] = [];
    const echo = tool({
      name: "echo",
      description: "Publishes text Postgres cannot store.",
      input: z.object({}),
      run: async (_input, ctx) => {
        seen.push(await ctx.emit("progress", { t: NUL }).then(String, (e: BrainError) => e.code));
        seen.push(await ctx.emitResult(HIGH).then(String, (e: BrainError) => e.code));
        seen.push(await ctx.finish("fine").then(String, (e: BrainError) => e.code));
      },
    });
    try {
      const session = await client.sessions.create({
        model: { provider: "scripted", script: [{ toolCalls: [{ name: "echo", input: {} }] }, { text: "done" }] },
        tools: [echo()],
      });
      expect(await session.send("go")).toBe("done");
      const calls = await brain.db.sql<{ outcome: unknown }[]>`
        SELECT outcome FROM tool_calls WHERE session_id = ${session.id}`;
      expect(calls[0]?.outcome).toMatchObject({ status: "error", error: { code: "invalid_output" } });
      // emit: refused, the call went on; emitResult: refused and the call ended, which the SDK now
      // knows, so finish is refused locally (execution_finished) without a round trip.
      expect(seen).toEqual(["unstorable_text", "unstorable_text", "execution_finished"]);
    } finally {
      await client.close();
    }
  });
});

describe("model calls", () => {
  it("a model's answer with NUL and unpaired surrogates is journaled with U+FFFD; the turn completes", async () => {
    const openai = await startFakeOpenAI();
    try {
      openai.reply({ text: `${NUL} ${HIGH}` });
      const session = await createSession(brain, {
        model: { provider: "openai", name: "gpt-test", apiKey: "sk-test", baseUrl: openai.url },
      });
      const sent = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, {
        body: { text: "go", wait: true },
      });
      expect(sent.status, sent.text).toBe(201);
      expect(sent.json, sent.text).toMatchObject({ activation: { status: "completed", text: "a\ufffdb x\ufffdy" } });
    } finally {
      await openai.close();
    }
  });

  it("a tool's model request with unstorable text is refused invalid_model_request, journaling nothing", async () => {
    const { socket, call } = await openCall();
    const before = await recordCount(call.sessionId);
    const requests = [
      { messages: [{ role: "user", content: NUL }] },
      { system: HIGH, messages: [{ role: "user", content: "hi" }] },
    ];
    let id = 30;
    for (const req of requests) {
      socket.ws.send(JSON.stringify({ type: "model", id, ...call, request: req }));
      expect(await socket.next()).toMatchObject({ type: "reject", id, error: { code: "invalid_model_request" } });
      id++;
    }
    expect(await recordCount(call.sessionId)).toBe(before);
    expect((await toolCall(brain.db.sql, call.sessionId, call.sequence))?.status).toBe("running");
  });
});
