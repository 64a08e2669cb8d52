// The callback route of HTTP application tools: only the call's own token is accepted, hostile
// bodies are refused, nothing is persisted for either, and the token is useless once the call
// ended. Emissions share the activation's byte budget, as a host's frames do.
import { randomBytes, randomUUID } from "node:crypto";
import { type BrainError, hostEnv, tool, toolHandler } from "@aexhq/brain";
import { callbackToken, SecretBox } from "@aexhq/brain-db/secrets";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { expectError, request } from "../../../testkit/api.js";
import { startBrain } from "../../../testkit/brain.js";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { TEST_SECRET_KEY } from "../../../testkit/secrets.js";
import { deferred, until } from "../../../testkit/wait.js";
import { recordCount, runOnce, serveApp, theCall } from "./http-tools-harness.js";

const BUDGET = 600;

const started = deferred<{ sessionId: string; sequence: number }>();
const release = deferred<void>();
const held = tool({
  name: "held",
  description: "Waits until the test lets it finish.",
  input: z.object({}),
  run: async (_input, ctx) => {
    started.resolve({ sessionId: ctx.sessionId, sequence: ctx.sequence });
    await release.promise;
    return ctx.finish({ released: true });
  },
});

const big = tool({
  name: "big",
  description: "Emits more than the activation's budget.",
  input: z.object({}),
  run: async (_input, ctx) => {
    const code = await ctx.emitResult("x".repeat(BUDGET)).then(
      () => "resolved",
      (e: BrainError) => e.code,
    );
    const after = await ctx.finish({ code }).then(
      () => "resolved",
      (e: BrainError) => e.code,
    );
    bigSeen.resolve([code, after]);
  },
});
const bigSeen = deferred<string[]>();

const unstorable = tool({
  name: "unstorable",
  description: "Publishes a result Postgres cannot store.",
  input: z.object({}),
  run: async (_input, ctx) => {
    const code = await ctx.emitResult({ text: "a\u0000b" }).then(
      () => "resolved",
      (e: BrainError) => e.code,
    );
    const after = await ctx.finish({ code }).then(
      () => "resolved",
      (e: BrainError) => e.code,
    );
    unstorableSeen.resolve([code, after]);
  },
});
const unstorableSeen = deferred<string[]>();

const stack = startedBeforeAll(() => startBrainWithWorker({ BRAIN_MAX_EMITTED_BYTES: String(BUDGET) }));
const app = startedBeforeAll(
  () => serveApp(toolHandler([held(), big(), unstorable()], { brainUrl: stack.brain.url })),
  {
    stop: (a) => {
      // Lets go of a call a failed test left held, before its application closes.
      release.resolve();
      return a.close();
    },
  },
);

describe("where callbacks go", () => {
  it("each server announces its URL once it listens: BRAIN_PUBLIC_URL, else its listen address", async () => {
    const sql = stack.brain.db.sql;
    const urls = async () =>
      (await sql<{ url: string }[]>`SELECT url FROM brain.servers WHERE kind = 'server' AND stopped_at IS NULL`).map(
        (r) => r.url,
      );
    // Written by an onListen hook, just after listen() resolved.
    await until("the first server's URL", async () => (await urls()).includes(stack.brain.url));
    expect(await urls()).toEqual([stack.brain.url]);
    const second = await startBrain({
      db: stack.brain.db,
      env: { BRAIN_PUBLIC_URL: "https://brain.example.test/base/" },
    });
    try {
      // Its row exists before it listens; its URL is written just after.
      await until("the second server's URL", async () => (await urls()).filter(Boolean).length === 2);
      expect((await urls()).sort()).toEqual(["https://brain.example.test/base", stack.brain.url].sort());
    } finally {
      await second.close();
    }
    expect(await urls()).toEqual([stack.brain.url]);
  });
});

describe("POST /v1/calls/:sessionId/:sequence/frames", () => {
  it("accepts only the call's own token, refuses hostile bodies, and persists nothing of either", async () => {
    const sql = stack.brain.db.sql;
    const turn = runOnce(stack, held({ env: hostEnv({ name: "web", url: app.url }) }), {});
    const { sessionId, sequence } = await started.promise;
    const [call] = await sql<{ connection_id: string; state: string }[]>`
      SELECT connection_id, state FROM brain.calls WHERE session_id = ${sessionId} AND seq = ${sequence}`;
    const box = new SecretBox(Buffer.from(TEST_SECRET_KEY, "hex"));
    const thisCall = { sessionId, seq: sequence, deadline: null };
    const real = callbackToken(box, "frames", thisCall, call!.connection_id);
    const target = { url: stack.brain.url, token: real };
    const path = (sid: string, seq: number | string) => `/v1/calls/${sid}/${seq}/frames`;
    const forged = { type: "finish", outcome: { status: "ok", value: "forged" } };
    const before = await recordCount(sql, sessionId);

    const otherKey = callbackToken(new SecretBox(randomBytes(32)), "frames", thisCall, call!.connection_id);
    // Scoped to one route, and expiring: the model route's token, or one past its time, opens nothing here.
    const otherRoute = callbackToken(box, "model", thisCall, call!.connection_id);
    const expired = callbackToken(box, "frames", { ...thisCall, deadline: Date.now() - 120_000 }, call!.connection_id);
    for (const [token, where] of [
      [otherRoute, path(sessionId, sequence)],
      [expired, path(sessionId, sequence)],
      [null, path(sessionId, sequence)],
      [stack.brain.token, path(sessionId, sequence)],
      ["garbage", path(sessionId, sequence)],
      [`${call!.connection_id}.${"A".repeat(43)}`, path(sessionId, sequence)],
      [otherKey, path(sessionId, sequence)],
      [real, path(sessionId, sequence + 1)],
      [real, path(randomUUID(), sequence)],
      [real, path(sessionId, "abc")],
    ] as const) {
      expectError(await request(target, "POST", where, { token, body: forged }), "unauthorized");
    }

    const hostile: [Parameters<typeof request>[3], Parameters<typeof expectError>[1]][] = [
      [{ body: { type: "emit", kind: "progress", data: {} } }, "invalid_request"],
      [{ body: { type: "result" } }, "invalid_request"],
      [{ body: { type: "finish", outcome: { status: "weird" } } }, "invalid_request"],
      [{ body: { type: "finish", extra: true } }, "invalid_request"],
      [{ raw: "{not json", contentType: "application/json" }, "invalid_request"],
      [{ raw: "finish", contentType: "text/plain" }, "unsupported_media_type"],
    ];
    for (const [options, code] of hostile) {
      expectError(await request(target, "POST", path(sessionId, sequence), options), code);
    }
    expect(await recordCount(sql, sessionId)).toBe(before);
    const [still] = await sql`SELECT state FROM brain.calls WHERE session_id = ${sessionId} AND seq = ${sequence}`;
    expect(still?.state).toBe("running");

    release.resolve();
    await turn;
    expect((await theCall(sql, sessionId)).outcome).toEqual({ status: "ok", value: { released: true } });
    // The real token, once the call has ended, moves nothing.
    const after = await recordCount(sql, sessionId);
    expectError(await request(target, "POST", path(sessionId, sequence), { body: forged }), "call_ended");
    expect(await recordCount(sql, sessionId)).toBe(after);
  });

  it("a result with unstorable text is refused with unstorable_text and ends the call invalid_output", async () => {
    const { sessionId } = await runOnce(stack, unstorable({ env: hostEnv({ name: "web", url: app.url }) }), {});
    // The callback is refused (the call ended there), so the finish after it is refused at once.
    expect(await unstorableSeen.promise).toEqual(["unstorable_text", "execution_finished"]);
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.outcome).toMatchObject({ status: "error", error: { code: "invalid_output" } });
    expect(call.outcome.error?.message).toMatch(/cannot be stored/);
  });

  it("a result over the activation's budget is refused with budget_exceeded, journaled emission_rejected, and ends the call", async () => {
    const { sessionId } = await runOnce(stack, big({ env: hostEnv({ name: "web", url: app.url }) }), {});
    // The refusal ended the call (it cannot go on without its answer): the finish after it is refused.
    expect(await bigSeen.promise).toEqual(["budget_exceeded", "execution_finished"]);
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    const [rejected] = await stack.brain.db.sql<{ payload: Record<string, unknown> }[]>`
      SELECT payload FROM brain.journal WHERE session_id = ${sessionId} AND kind = 'emission_rejected'`;
    expect(rejected?.payload).toMatchObject({ call: call.seq, kind: "tool_result", code: "budget_exceeded" });
  });
});
