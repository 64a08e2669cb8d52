// The Application tool extension end to end: a Brain server, a worker that POSTs invocations, an
// application serving tool() declarations with toolHandler (node:http), and the callbacks.
import type { ServerResponse } from "node:http";
import { type BrainError, hostEnv, type ToolContext, tool, toolHandler } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { startBrainWithWorker } from "../../../testkit/brain-with-worker.js";
import { startedBeforeAll } from "../../../testkit/fixtures.js";
import { deferred, until } from "../../../testkit/wait.js";
import { lookupDeclaration, records, runOnce, serveApp, theCall } from "./http-tools-harness.js";

/** What handlers saw, by test. */
const seen = new Map<string, unknown>();
/** Work a handler leaves for after its request was answered. */
let afterAnswer: (() => void) | undefined;

const codeOf = (p: Promise<unknown>) =>
  p.then(
    () => "resolved",
    (e: BrainError) => e.code,
  );

const lookup = tool({
  ...lookupDeclaration,
  run: async ({ id }, ctx) => {
    seen.set("lookup", { sessionId: ctx.sessionId, sequence: ctx.sequence, deadline: ctx.deadline });
    return ctx.finish(records.get(`${ctx.options.prefix}${id}`) ?? null);
  },
});

const progress = tool({
  name: "progress",
  description: "Reports each step, then finishes.",
  input: z.object({ steps: z.number().int() }),
  output: z.object({ step: z.number().int() }),
  options: z.object({ label: z.string() }),
  run: async ({ steps }, ctx) => {
    const acks: number[] = [];
    for (let i = 1; i <= steps; i++)
      acks.push(await ctx.emitResult({ step: i }, { content: `${ctx.options.label} ${i}` }));
    await ctx.finish({ step: steps + 1 });
    seen.set("progress", acks);
  },
});

const strict = tool({
  name: "strict",
  description: "Publishes what fails its output schema.",
  input: z.object({}),
  output: z.object({ step: z.number() }),
  run: async (_input, ctx) => {
    const ack = await ctx.emitResult({ step: "not a number" } as never);
    seen.set("strict", { ack, finish: await codeOf(ctx.finish({ step: 1 })) });
  },
});

const returns = tool({
  name: "returns",
  description: "Returns its value.",
  input: z.object({ n: z.number() }),
  run: async ({ n }) => ({ doubled: n * 2 }),
});

const unfinished = tool({
  name: "unfinished",
  description: "Publishes a result and returns without finishing.",
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.emitResult("partial");
  },
});

const throws = tool({
  name: "throws",
  description: "Throws.",
  input: z.object({}),
  run: async () => {
    throw new Error("the database is down");
  },
});

const refused = tool({
  name: "refused",
  description: "Tries what HTTP tools may not do.",
  input: z.object({}),
  run: async (_input, ctx: ToolContext) => {
    const attempts = {
      emit: await codeOf(ctx.emit("progress", { n: 1 })),
      model: await codeOf(ctx.model({ messages: [{ role: "user", content: "hi" }] })),
      list: await codeOf(ctx.environments.list()),
      create: await codeOf(ctx.environments.create({ name: "x", baseUrl: "http://127.0.0.1:1" })),
    };
    const message = await ctx.emit("progress", {}).catch((e: Error) => e.message);
    return ctx.finish({ attempts, message });
  },
});

const lingers = tool({
  name: "lingers",
  description: "Leaves work for after its request.",
  input: z.object({}),
  run: async (_input, ctx) => {
    await ctx.emitResult("before the answer");
    afterAnswer = () => {
      void (async () => {
        seen.set("lingers", {
          aborted: ctx.signal.aborted,
          reason: (ctx.signal.reason as BrainError).code,
          emitResult: await codeOf(ctx.emitResult("late")),
          finish: await codeOf(ctx.finish("late")),
          emit: await codeOf(ctx.emit("late", {})),
        });
      })();
    };
  },
});

const deadlineSeen = deferred<{ reason: string; after: string }>();
const slow = tool({
  name: "slow",
  description: "Waits for its deadline.",
  input: z.object({}),
  timeoutMs: 300,
  run: async (_input, ctx) => {
    await new Promise((resolve) => ctx.signal.addEventListener("abort", resolve));
    const reason = (ctx.signal.reason as BrainError).code;
    deadlineSeen.resolve({ reason, after: await codeOf(ctx.emitResult("too late")) });
  },
});

const stack = startedBeforeAll(() => startBrainWithWorker());
const app = startedBeforeAll(() => {
  // Verifies each invocation against the keys of the Brain that sends them.
  const handle = toolHandler(
    [
      lookup({ prefix: "customer:" }),
      progress({ label: "step" }),
      strict(),
      returns(),
      unfinished(),
      throws(),
      refused(),
      lingers(),
      slow(),
    ],
    { brainUrl: stack.brain.url },
  );
  return serveApp((req, res: ServerResponse) => {
    res.on("finish", () => {
      afterAnswer?.();
      afterAnswer = undefined;
    });
    handle(req, res);
  });
});

const web = () => hostEnv({ name: "web", url: app.url });

describe("the Application tool extension", () => {
  it("runs the declaration with the application's options; finish is the call's result", async () => {
    const { sessionId } = await runOnce(stack, lookup({ env: web(), prefix: "customer:" }), { id: "42" });
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.records.map((r) => [r.kind, r.payload.outcome])).toEqual([
      ["tool_result", { status: "ok", value: { value: "Ada Lovelace" } }],
      ["tool_call_ended", { status: "ok", value: { value: "Ada Lovelace" } }],
    ]);
    // Nothing bounds this call (no tool, caller or operator deadline): unlimited, so undefined.
    expect(call.started.payload.deadline).toBeNull();
    expect(seen.get("lookup")).toEqual({ sessionId, sequence: call.seq, deadline: undefined });
    // No host connection was needed: the session has no host.
    const [row] = await stack.brain.db.sql`SELECT host_id FROM brain.sessions WHERE id = ${sessionId}`;
    expect(row?.host_id).toBeNull();
  });

  it("emitResult then finish: each acknowledgment is the sequence of the committed record", async () => {
    const { sessionId } = await runOnce(stack, progress({ env: web(), label: "step" }), { steps: 3 });
    const call = await theCall(stack.brain.db.sql, sessionId);
    const acks = seen.get("progress") as number[];
    expect(acks).toHaveLength(3);
    const bySeq = new Map(call.records.map((r) => [r.seq, r]));
    acks.forEach((seq, i) => {
      expect(bySeq.get(seq)).toMatchObject({
        kind: "tool_result",
        payload: { outcome: { status: "ok", value: { step: i + 1 } }, content: `step ${i + 1}` },
      });
    });
    expect(call.records.map((r) => r.kind)).toEqual([
      "tool_result",
      "tool_result",
      "tool_result",
      "tool_result",
      "tool_call_ended",
    ]);
    expect(call.outcome).toEqual({ status: "ok", value: { step: 4 } });
  });

  it("output validation: a result failing the output schema is published as invalid_output and ends the call", async () => {
    const { sessionId } = await runOnce(stack, strict({ env: web() }), {});
    const call = await theCall(stack.brain.db.sql, sessionId);
    const { ack, finish } = seen.get("strict") as { ack: number; finish: string };
    expect(call.records.find((r) => r.seq === ack)?.payload.outcome?.error?.code).toBe("invalid_output");
    expect(call.outcome.error?.code).toBe("invalid_output");
    expect(finish).toBe("execution_finished");
  });

  it("returning a value finishes the call with it", async () => {
    const { sessionId } = await runOnce(stack, returns({ env: web() }), { n: 21 });
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
    expect(call.outcome).toEqual({ status: "ok", value: { doubled: 42 } });
  });

  it("answering the request without finishing ends the call tool_unfinished", async () => {
    const { sessionId } = await runOnce(stack, unfinished({ env: web() }), {});
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.records[0]?.payload.outcome).toEqual({ status: "ok", value: "partial" });
    expect(call.outcome.status).toBe("error");
    expect(call.outcome.error?.code).toBe("tool_unfinished");
  });

  it("input failing the input schema is invalid_input, a thrown exception tool_error", async () => {
    const bad = await runOnce(stack, lookup({ env: web(), prefix: "customer:" }), { id: 42 });
    const invalid = (await theCall(stack.brain.db.sql, bad.sessionId)).outcome;
    expect(invalid.error?.code).toBe("invalid_input");
    expect(invalid.error?.details).toEqual([expect.objectContaining({ path: ["id"] })]);
    const thrown = await runOnce(stack, throws({ env: web() }), {});
    expect((await theCall(stack.brain.db.sql, thrown.sessionId)).outcome).toEqual({
      status: "error",
      error: { code: "tool_error", message: "the database is down" },
    });
  });

  it("refuses model calls, arbitrary events and Environment control with not_available_in_http_tool", async () => {
    const { sessionId } = await runOnce(stack, refused({ env: web() }), {});
    const call = await theCall(stack.brain.db.sql, sessionId);
    const value = call.outcome.value as { attempts: Record<string, string>; message: string };
    expect(value.attempts).toEqual({
      emit: "not_available_in_http_tool",
      model: "not_available_in_http_tool",
      list: "not_available_in_http_tool",
      create: "not_available_in_http_tool",
    });
    expect(value.message).toContain("ctx.emit is not available to an HTTP application tool");
    expect(call.records.map((r) => r.kind)).toEqual(["tool_result", "tool_call_ended"]);
  });

  it("no work beyond the request: after the answer every ctx operation is request_ended and nothing is journaled", async () => {
    const { sessionId } = await runOnce(stack, lingers({ env: web() }), {});
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.records.map((r) => [r.kind, r.payload.outcome?.status])).toEqual([
      ["tool_result", "ok"],
      ["tool_result", "error"],
      ["tool_call_ended", "error"],
    ]);
    expect(call.outcome.error?.code).toBe("tool_unfinished");
    const late = await until("the work after the answer", () => seen.get("lingers"));
    expect(late).toEqual({
      aborted: true,
      reason: "request_ended",
      emitResult: "request_ended",
      finish: "request_ended",
      emit: "request_ended",
    });
    expect((await theCall(stack.brain.db.sql, sessionId)).records).toHaveLength(3);
  });

  it("the deadline stops the request: the call times out and the handler's signal fires", async () => {
    const { sessionId } = await runOnce(stack, slow({ env: web() }), {});
    const call = await theCall(stack.brain.db.sql, sessionId);
    expect(call.outcome).toEqual({ status: "timeout", cause: "deadline" });
    const { reason, after } = await deadlineSeen.promise;
    // The application's own deadline timer or Brain closing the request, whichever came first.
    expect(["call_ended", "request_ended"]).toContain(reason);
    expect(after).toBe("request_ended");
    expect(call.records.map((r) => r.kind)).toEqual(["tool_call_ended"]);
  });

  it("an application answering an error status, or not at all, ends the call http_error", async () => {
    const failing = await serveApp((_req, res) => {
      res.writeHead(500, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { code: "boom", message: "the app broke" } }));
    });
    try {
      const { sessionId } = await runOnce(stack, returns({ env: hostEnv({ name: "web", url: failing.url }) }), {
        n: 1,
      });
      const { outcome } = await theCall(stack.brain.db.sql, sessionId);
      expect(outcome.error?.code).toBe("http_error");
      expect(outcome.error?.message).toBe("The tool's URL answered HTTP 500: boom: the app broke");
    } finally {
      await failing.close();
    }
    const gone = await serveApp(() => {});
    await gone.close();
    const { sessionId } = await runOnce(stack, returns({ env: hostEnv({ name: "web", url: gone.url }) }), { n: 1 });
    expect((await theCall(stack.brain.db.sql, sessionId)).outcome.error?.code).toBe("http_error");
  });

  it("an unknown tool name is answered 404, recorded http_error", async () => {
    const other = tool({ name: "other", description: "d", input: z.object({}), run: async () => 1 });
    const { sessionId } = await runOnce(stack, other({ env: web() }), {});
    const { outcome } = await theCall(stack.brain.db.sql, sessionId);
    expect(outcome.error?.code).toBe("http_error");
    expect(outcome.error?.message).toContain("404: not_found");
  });
});
