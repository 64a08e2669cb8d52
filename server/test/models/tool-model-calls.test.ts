// ctx.model from host tools: the session's provider, the activation's shared model-call budget,
// the tool's identity as origin, journaling before the answer returns, and requests that are not
// well-formed. A real Brain (own database, real socket), the public SDK, the scripted provider.
import { type ModelResult, tool } from "@aexhq/brain";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { deferred, journalOf, serverAndClient, until } from "../../../testkit/tool-harness.js";

const MAX_MODEL_CALLS = 6;
const { server, client: brain } = serverAndClient({ BRAIN_MAX_MODEL_CALLS: String(MAX_MODEL_CALLS) });

const originOf = (r: { payload: Record<string, unknown> }) => (r.payload.origin as { type?: string } | undefined)?.type;
const ask = (content: string) => ({ messages: [{ role: "user" as const, content }] });

/** A scripted session: the loop calls `tool` once, then answers "done"; tools' calls get `answers`. */
function session(toolName: string, answers: string[]) {
  return {
    provider: "scripted" as const,
    script: [{ toolCalls: [{ name: toolName, input: {} }] }, { text: "done" }],
    toolScript: answers.map((text) => ({ text })),
  };
}

describe("ctx.model", () => {
  it("answers with the session's model and journals the call, with the tool as origin, before it returns", async () => {
    const seen: { result: ModelResult; journalAtReturn: number[] }[] = [];
    const summarize = tool({
      name: "summarize",
      description: "Summarises with an independent model call.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const result = await ctx.model({ system: "Be brief.", ...ask("Summarise: a long text") });
        const rows = await journalOf(server.db.sql, ctx.sessionId);
        seen.push({ result, journalAtReturn: rows.map((r) => r.seq) });
        return ctx.finish({ summary: result.text }, { content: result.text });
      },
    });
    const s = await brain.sessions.create({ model: session("summarize", ["a short text"]), tools: [summarize()] });
    await expect(s.send("go")).resolves.toBe("done");

    const [{ result, journalAtReturn }] = seen as [(typeof seen)[number]];
    expect(result).toMatchObject({ text: "a short text", toolCalls: [], stopReason: "end", model: "scripted" });
    const journal = await journalOf(server.db.sql, s.id);
    const call = journal.find((r) => r.kind === "tool_call_started")!;
    const activation = journal.find((r) => r.kind === "activation_started")!;
    const started = journal.filter((r) => r.kind === "model_call_started" && originOf(r) === "tool");
    const ended = journal.filter((r) => r.kind === "model_call_ended" && originOf(r) === "tool");
    expect(started).toHaveLength(1);
    expect(started[0]!.payload).toEqual({
      origin: { type: "tool", sessionId: s.id, sequence: call.seq },
      activation: activation.seq,
      request: { system: "Be brief.", ...ask("Summarise: a long text") },
    });
    expect(ended).toHaveLength(1);
    expect(ended[0]!.payload).toMatchObject({
      call: started[0]!.seq,
      origin: { type: "tool", sessionId: s.id, sequence: call.seq },
      outcome: { status: "ok" },
      response: { text: "a short text", toolCalls: [] },
      usage: { inputTokens: 0, outputTokens: 0 },
    });
    // The model_calls view pairs starts and ends, for SQL readers of the journal.
    const view = await server.db.sql`
      SELECT origin, tool_call_seq, activation_seq, status, ended_seq FROM model_calls
      WHERE session_id = ${s.id} ORDER BY seq`;
    expect(view.map((r) => ({ ...r }))).toEqual([
      {
        origin: "agentloop",
        tool_call_seq: null,
        activation_seq: activation.seq,
        status: "ok",
        ended_seq: expect.any(Number),
      },
      {
        origin: "tool",
        tool_call_seq: call.seq,
        activation_seq: activation.seq,
        status: "ok",
        ended_seq: ended[0]!.seq,
      },
      {
        origin: "agentloop",
        tool_call_seq: null,
        activation_seq: activation.seq,
        status: "ok",
        ended_seq: expect.any(Number),
      },
    ]);
    // Journaled before the answer reached the tool, and the answer names its record.
    expect(result.sequence).toBe(ended[0]!.seq);
    expect(journalAtReturn).toContain(ended[0]!.seq);
    // The tool's model call is not a conversational turn: no assistant message of its own, and
    // the loop's script went on from its own position (its second step said "done").
    expect(journal.filter((r) => r.kind === "assistant_message").map((r) => r.payload.text)).toEqual(["done"]);
    const loopCalls = journal.filter((r) => r.kind === "model_call_started" && originOf(r) === "agentloop");
    expect(loopCalls.map((r) => r.payload.activation)).toEqual([activation.seq, activation.seq]);
  });

  it("runs concurrent calls of one tool, each journaled with the tool's identity", async () => {
    const texts: string[] = [];
    const fan = tool({
      name: "fan",
      description: "Three model calls at once.",
      input: z.object({}),
      run: async (_input, ctx) => {
        const results = await Promise.all([1, 2, 3].map((i) => ctx.model(ask(`part ${i}`))));
        texts.push(...results.map((r) => r.text).sort());
        return ctx.finish({ n: results.length });
      },
    });
    const s = await brain.sessions.create({ model: session("fan", ["a", "b", "c"]), tools: [fan()] });
    await expect(s.send("go")).resolves.toBe("done");
    expect(texts).toEqual(["a", "b", "c"]);
    const journal = await journalOf(server.db.sql, s.id);
    const call = journal.find((r) => r.kind === "tool_call_started")!;
    const origins = journal
      .filter((r) => r.kind.startsWith("model_call_") && originOf(r) === "tool")
      .map((r) => r.payload.origin);
    expect(origins).toHaveLength(6);
    for (const o of origins) expect(o).toEqual({ type: "tool", sessionId: s.id, sequence: call.seq });
  });

  it("shares the activation's budget with the Agentloop: over it, the call is refused and the turn fails", async () => {
    const outcomes: string[] = [];
    const greedy = tool({
      name: "greedy",
      description: "Calls the model until refused.",
      input: z.object({}),
      run: async (_input, ctx) => {
        for (let i = 0; i < MAX_MODEL_CALLS + 1; i++) {
          try {
            await ctx.model(ask(`call ${i}`));
            outcomes.push("ok");
          } catch (error) {
            outcomes.push((error as { code: string }).code);
          }
        }
        return ctx.finish({ done: true });
      },
    });
    const s = await brain.sessions.create({ model: session("greedy", []), tools: [greedy()] });
    // The turn fails once the loop finds the budget spent, and send says why.
    await expect(s.send("go")).rejects.toMatchObject({ name: "BrainError", code: "model_budget_exceeded" });
    // The loop's first call dispatched the tool: the tool gets the rest of the budget.
    expect(outcomes).toEqual([
      ...Array(MAX_MODEL_CALLS - 1).fill("ok"),
      "model_budget_exceeded",
      "model_budget_exceeded",
    ]);
    const journal = await until("the activation to end", async () => {
      const rows = await journalOf(server.db.sql, s.id);
      return rows.some((r) => r.kind === "activation_ended") ? rows : undefined;
    });
    // A refused call is not journaled: exactly the budget's worth of model calls started.
    expect(journal.filter((r) => r.kind === "model_call_started")).toHaveLength(MAX_MODEL_CALLS);
    const end = journal.find((r) => r.kind === "activation_ended")!;
    expect(end.payload).toMatchObject({ status: "failed", error: { code: "model_budget_exceeded" } });
    const [budget] = await server.db.sql<{ model_calls: number }[]>`
      SELECT model_calls FROM activation_budgets WHERE session_id = ${s.id}`;
    expect(budget?.model_calls).toBe(MAX_MODEL_CALLS);
  });

  it("keeps charging the originating activation after it returned (a background tool)", async () => {
    const go = deferred<void>();
    const later = deferred<string>();
    const finished = deferred<void>();
    const background = tool({
      name: "background",
      description: "Returns at once, calls the model later.",
      input: z.object({}),
      run: async (_input, ctx) => {
        void go.promise.then(async () => {
          try {
            const r = await ctx.model(ask("later"));
            later.resolve(r.text);
          } catch (error) {
            later.resolve((error as { code: string }).code);
          }
          // Finished before the test ends (and its client closes), so no ack is left waiting.
          await ctx.finish().then(() => finished.resolve(), finished.reject);
        });
        return;
      },
    });
    const s = await brain.sessions.create({ model: session("background", ["late answer"]), tools: [background()] });
    await expect(s.send("go")).resolves.toBe("done");
    go.resolve();
    expect(await later.promise).toBe("late answer");
    await finished.promise;
    const journal = await journalOf(server.db.sql, s.id);
    const activation = journal.find((r) => r.kind === "activation_started")!;
    const ended = journal.findIndex((r) => r.kind === "activation_ended");
    const toolCall = journal.findIndex((r) => r.kind === "model_call_started" && originOf(r) === "tool");
    expect(toolCall).toBeGreaterThan(ended);
    expect(journal[toolCall]!.payload.activation).toBe(activation.seq);
    const [budget] = await server.db.sql<{ model_calls: number }[]>`
      SELECT model_calls FROM activation_budgets WHERE session_id = ${s.id} AND activation_seq = ${activation.seq}`;
    expect(budget?.model_calls).toBe(3);
  });

  it("refuses a malformed request with invalid_model_request and journals nothing", async () => {
    const codes: string[] = [];
    const bad = tool({
      name: "bad",
      description: "Sends malformed requests.",
      input: z.object({}),
      run: async (_input, ctx) => {
        for (const request of [
          {},
          { messages: [] },
          { messages: [{ role: "system", content: "x" }] },
          { ...ask("x"), model: "other" },
        ]) {
          await ctx.model(request as never).catch((e: { code: string }) => codes.push(e.code));
        }
        return ctx.finish({});
      },
    });
    const s = await brain.sessions.create({ model: session("bad", ["never"]), tools: [bad()] });
    await expect(s.send("go")).resolves.toBe("done");
    expect(codes).toEqual(Array(4).fill("invalid_model_request"));
    const journal = await journalOf(server.db.sql, s.id);
    expect(journal.filter((r) => originOf(r) === "tool")).toEqual([]);
  });

  it("is refused once the tool has finished", async () => {
    const after = deferred<string>();
    const quick = tool({
      name: "quick",
      description: "Finishes, then asks the model.",
      input: z.object({}),
      run: async (_input, ctx) => {
        await ctx.finish({});
        after.resolve(
          await ctx.model(ask("too late")).then(
            () => "ok",
            (e: { code: string }) => e.code,
          ),
        );
      },
    });
    const s = await brain.sessions.create({ model: session("quick", ["never"]), tools: [quick()] });
    await expect(s.send("go")).resolves.toBe("done");
    expect(await after.promise).toBe("execution_finished");
  });
});
