// Property-based hostile input (fast-check): arbitrary JSON, unicode with NUL characters and
// unpaired surrogates, huge numbers, deep nesting and wrong types, in the HTTP API's bodies and
// parameters and in host WebSocket frames. Every answer is a success or a documented error code
// (never a 5xx, never internal_error), the server stays up, and a refused input persists nothing.
// A failing case prints fast-check's seed and path, to replay it.

import { ERROR_CODES, type ErrorCode, type ServerFrame } from "@aexhq/brain-contracts";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import type WebSocket from "ws";
import { activationEnded, createSession, hostTool, request } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { connectHost, type HostSocket, registerHostOn } from "../../../testkit/host-sockets.js";
import { toolCall } from "../../../testkit/tool-harness.js";
import { scripted } from "../../../testkit/turns.js";

const brain = startedBeforeAll(() => startBrain());
const sockets: WebSocket[] = [];
afterAll(() => {
  for (const ws of sockets) ws.terminate();
});

/** Rows of every table a request or a frame could write to. */
async function rowCounts(): Promise<Record<string, number>> {
  const tables = ["sessions", "records", "calls", "hosts", "idempotency_keys", "workspace_files"];
  const more = ["session_secrets", "environments", "activation_budgets", "tool_model_calls", "components"];
  const counts: Record<string, number> = {};
  for (const t of [...tables, ...more]) {
    const [row] = await brain.db.sql.unsafe<{ n: number }[]>(`SELECT count(*)::int AS n FROM "${t}"`);
    counts[t] = row!.n;
  }
  return counts;
}

function nested(depth: number): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { a: value };
  return value;
}

const hostileString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom("\u0000", "a\u0000b", "\ud800", "x\udc00y", "\udbff\ud800", "\u202e", "", "__proto__", "😀"),
  fc.string({ maxLength: 20 }),
);
const hugeNumber = fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, 2 ** 63, 1e21, 5e-324, -0, 1.2345678901234568e29);
const { value: hostileValue } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", maxDepth: 3 },
    hostileString,
    hugeNumber,
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    fc.boolean(),
    fc.constant(null),
    fc.array(tie("value"), { maxLength: 4 }),
    fc.dictionary(hostileString, tie("value"), { maxKeys: 4 }),
  ),
}));
const anyValue = fc.oneof(hostileValue, fc.integer({ min: 50, max: 300 }).map(nested), fc.jsonValue());

/** JSON text a serializer would never write: numbers past double range, escapes, deep nesting. */
const rawText = fc.oneof(
  anyValue.map((v) => JSON.stringify(v) ?? "null"),
  // Deeper than any value worth building: as text only.
  fc.integer({ min: 1000, max: 30_000 }).map((d) => `{"text":${"[".repeat(d)}${"]".repeat(d)}}`),
  fc.integer({ min: 1000, max: 30_000 }).map((d) => `${'{"a":'.repeat(d)}1${"}".repeat(d)}`),
  fc.string({ unit: "binary", maxLength: 60 }),
  fc.constantFrom(
    '{"text":"a\\u0000b"}',
    '{"text":"\\ud800"}',
    '{"text":"\\udc00\\ud800"}',
    '{"text":1e999999}',
    `{"text":"x","wait":${"9".repeat(400)}}`,
    `{"name":${"[".repeat(20_000)}${"]".repeat(20_000)}}`,
    `${"[".repeat(50_000)}`,
    '{"__proto__":{"polluted":true}}',
    '{"text":"ok","text":"twice"}',
  ),
);

type Answer = Awaited<ReturnType<typeof request>>;

/** A documented refusal: an api-scope code with its own HTTP status, never a 5xx. */
function expectDocumented(answer: Answer, label: string): ErrorCode {
  expect(answer.status, label).toBeLessThan(500);
  const code = (answer.json as { error?: { code?: string } } | undefined)?.error?.code;
  expect(code !== undefined && Object.hasOwn(ERROR_CODES, code), `${label} → ${answer.text.slice(0, 300)}`).toBe(true);
  const spec = ERROR_CODES[code as ErrorCode];
  expect([spec.scope, spec.http], label).toEqual(["api", answer.status]);
  return code as ErrorCode;
}

describe("HTTP bodies and parameters", () => {
  /** Posts `raw`; a refusal must be documented and must have written nothing. */
  async function postHostile(path: string, raw: string): Promise<void> {
    const label = `POST ${path} ${raw.slice(0, 200)}`;
    const before = await rowCounts();
    const answer = await request(brain, "POST", path, { raw, contentType: "application/json" });
    if (answer.status >= 200 && answer.status < 300) {
      const sent = answer.json as { sequence?: number; activation?: unknown };
      const sessionId = /^\/v1\/sessions\/([^/]+)\/messages$/.exec(path)?.[1];
      // Let an accepted message's activation finish, so its records do not land in the next case.
      if (sessionId && typeof sent.sequence === "number" && sent.activation === null) {
        await activationEnded(brain.db.sql, sessionId, sent.sequence);
      }
      return;
    }
    expectDocumented(answer, label);
    expect(await rowCounts(), label).toEqual(before);
  }

  it("session creation, messages, cancellation and host registration", { timeout: 120_000 }, async () => {
    const host = await registerHostOn(brain);
    const steps = Array.from({ length: 500 }, () => "ok");
    const session = await createSession(brain, { model: scripted(...steps) });
    const model = fc.oneof(
      fc.constant(scripted("ok")),
      anyValue,
      fc.record(
        {
          provider: fc.oneof(fc.constantFrom("scripted", "openai", "anthropic"), hostileString),
          name: hostileString,
          apiKey: hostileString,
          baseUrl: hostileString,
          script: fc.array(fc.record({ text: hostileString }), { maxLength: 3 }),
        },
        { requiredKeys: ["provider"] },
      ),
    );
    const placement = fc.oneof(
      fc.constant(hostTool("t")),
      anyValue,
      fc.record({ name: hostileString, description: hostileString }).map((named) => ({ ...hostTool("t"), ...named })),
    );
    const sessionBody = fc.record(
      {
        model,
        tools: fc.oneof(fc.array(placement, { maxLength: 3 }), anyValue),
        hostId: fc.oneof(fc.constant(host.id), fc.uuid(), hostileString),
        metadata: fc.oneof(fc.dictionary(hostileString, hostileString, { maxKeys: 3 }), anyValue),
        workspace: fc.oneof(fc.dictionary(hostileString, hostileString, { maxKeys: 3 }), anyValue),
        environments: anyValue,
        extra: anyValue,
      },
      { requiredKeys: ["model"] },
    );
    const messageBody = fc.record(
      { text: fc.oneof(hostileString, anyValue), wait: fc.oneof(fc.constant(false), anyValue), extra: anyValue },
      { requiredKeys: [] },
    );
    const hostBody = fc.oneof(
      fc.record({ name: fc.oneof(hostileString, anyValue), extra: anyValue }, { requiredKeys: [] }),
    );
    const segment = fc.oneof(
      fc.string({ unit: "binary", maxLength: 30 }),
      fc.constantFrom("1", "0", "-1", "1e400", "99999999999999999999", "9223372036854775808", "%00", "%ED%A0%80"),
    );
    const cases = fc.oneof(
      sessionBody.map((b) => ["/v1/sessions", JSON.stringify(b)] as const),
      messageBody.map((b) => [`/v1/sessions/${session.id}/messages`, JSON.stringify(b)] as const),
      rawText.map((t) => [`/v1/sessions/${session.id}/messages`, t] as const),
      rawText.map((t) => ["/v1/sessions", t] as const),
      hostBody.map((b) => ["/v1/hosts", JSON.stringify(b)] as const),
      fc
        .tuple(segment, anyValue)
        .map(
          ([seq, b]) =>
            [`/v1/sessions/${session.id}/calls/${encodeURIComponent(seq)}/cancel`, JSON.stringify(b)] as const,
        ),
      fc.tuple(segment, rawText).map(([id, t]) => [`/v1/sessions/${encodeURIComponent(id)}/cancel`, t] as const),
    );
    await fc.assert(
      fc.asyncProperty(cases, async ([path, raw]) => postHostile(path, raw)),
      { numRuns: 800 },
    );
    // The server shares this process: nothing polluted a prototype, and it still answers.
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect((await request(brain, "GET", "/healthz", { token: null })).status).toBe(200);
  });
});

describe("host WebSocket frames", () => {
  /** Refusals that must write nothing (the others journal by design, see docs/errors.md). */
  const WRITES_NOTHING = new Set(["invalid_frame", "invalid_kind", "reserved_kind", "call_not_found", "call_ended"]);
  const THIS_SESSION = "<this session>";
  const THIS_CALL = -4242;

  it("any frame gets one documented answer; refusals write nothing but what docs/errors.md says", {
    timeout: 120_000,
  }, async () => {
    const host = await registerHostOn(brain);
    const socket: HostSocket = await connectHost(brain, host.id, host.token, sockets);
    expect((await socket.next()).type).toBe("welcome");
    let nextId = 1;
    const outcome = fc.oneof(
      fc.record({ status: fc.constant("ok"), value: anyValue }),
      fc.record({
        status: fc.constant("error"),
        error: fc.record({ code: hostileString, message: hostileString, details: anyValue }, { requiredKeys: [] }),
      }),
      anyValue,
    );
    // The call a run opens is only known at run time: generated frames name it with markers.
    const sessionId = fc.oneof(fc.constant(THIS_SESSION), fc.uuid(), hostileString);
    const sequence = fc.oneof(fc.constant(THIS_CALL), hugeNumber, anyValue);
    const content = fc.oneof(hostileString, anyValue);
    const typed = (type: string, fields: Record<string, fc.Arbitrary<unknown>>, optional: string[] = []) => {
      const all: Record<string, fc.Arbitrary<unknown>> = { type: fc.constant(type), sessionId, sequence, ...fields };
      return fc.record(all, { requiredKeys: Object.keys(all).filter((k) => !optional.includes(k)) });
    };
    const frame = fc.oneof(
      typed("emit", {
        kind: fc.oneof(fc.constantFrom("progress", "tool_result", "brain.x"), hostileString),
        data: anyValue,
      }),
      typed("result", { outcome, content }, ["content"]),
      typed("return", { outcome, content }, ["outcome", "content"]),
      typed("finish", { outcome, content }, ["outcome", "content"]),
      typed("model", { request: anyValue }),
      typed("environment", { operation: fc.oneof(fc.constantFrom("list", "get"), hostileString), name: content }, [
        "name",
      ]),
      fc.record({ type: fc.oneof(fc.constant("ping"), hostileString) }),
      fc.dictionary(hostileString, anyValue, { maxKeys: 5 }),
    );

    await fc.assert(
      fc.asyncProperty(fc.array(frame, { minLength: 1, maxLength: 4 }), fc.context(), async (frames, ctx) => {
        const session = await createSession(brain, {
          hostId: host.id,
          model: { provider: "scripted", script: [{ toolCalls: [{ name: "t", input: {} }] }, { text: "done" }] },
          tools: [{ ...hostTool("t"), timeoutMs: 60_000 }],
        });
        const message = await request(brain, "POST", `/v1/sessions/${session.id}/messages`, { body: { text: "go" } });
        const invoke = await nextOf(socket, "invoke");
        const call = { sessionId: session.id, sequence: invoke.type === "invoke" ? invoke.sequence : 0 };
        const messageSeq = (message.json as { sequence: number }).sequence;
        /** Once the call returned or ended, the turn goes on and writes: let it end first. */
        const settled = async () => {
          const status = (await toolCall(brain.db.sql, call.sessionId, call.sequence))?.status;
          if (status !== "running") await activationEnded(brain.db.sql, session.id, messageSeq);
        };
        for (const generated of frames) {
          const f: Record<string, unknown> = { ...generated };
          if (f.sessionId === THIS_SESSION) f.sessionId = call.sessionId;
          if (f.sequence === THIS_CALL) f.sequence = call.sequence;
          const id = nextId++;
          const text = JSON.stringify({ ...f, id });
          ctx.log(text.slice(0, 300));
          await settled();
          const before = await rowCounts();
          socket.ws.send(text);
          const answer = await nextOf(socket, "ack", "reject", "pong");
          const label = text.slice(0, 300);
          // A frame without a readable id is answered with id null.
          if (answer.type !== "reject" || answer.id !== null) expect(answer, label).toMatchObject({ id });
          if (answer.type !== "reject") continue;
          const code = answer.error.code;
          expect(Object.hasOwn(ERROR_CODES, code) && code !== "internal_error", `${code}: ${label}`).toBe(true);
          const resultBearing = ["result", "return", "finish"].includes(String(f.type));
          if (WRITES_NOTHING.has(code) || (code === "unstorable_text" && !resultBearing)) {
            expect(await rowCounts(), `${code}: ${label}`).toEqual(before);
          }
          if (code === "unstorable_text" && resultBearing && f.sessionId === call.sessionId) {
            // Another sequence of this session names no open call of this reporter: nothing ends.
            if (f.sequence !== call.sequence) {
              expect(await rowCounts(), `${code}: ${label}`).toEqual(before);
              continue;
            }
            // The call's answer could not be recorded: it has ended, at once.
            expect((await toolCall(brain.db.sql, call.sessionId, call.sequence))?.status, label).toBe("ended");
          }
        }
        // Ends the call if the frames left it open, and lets the turn end, so nothing of this run
        // is written during the next one.
        socket.ws.send(JSON.stringify({ type: "finish", id: nextId++, ...call }));
        await nextOf(socket, "ack", "reject");
        await activationEnded(brain.db.sql, session.id, messageSeq);
      }),
      { numRuns: 150 },
    );
    expect(socket.ws.readyState).toBe(1);
    socket.ws.send(JSON.stringify({ type: "ping", id: nextId }));
    expect(await nextOf(socket, "pong")).toEqual({ type: "pong", id: nextId });
  });
});

/** The next frame of one of these types; cancel and release frames of ended calls are skipped. */
async function nextOf(socket: HostSocket, ...types: ServerFrame["type"][]): Promise<ServerFrame> {
  for (;;) {
    const frame = await socket.next();
    if (types.includes(frame.type)) return frame;
    if (frame.type !== "cancel" && frame.type !== "release") throw new Error(`unexpected ${JSON.stringify(frame)}`);
  }
}
