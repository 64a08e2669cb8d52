import { Brain, BrainError, type ToolContext, tool } from "@aexhq/brain";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { type SpawnedBrain, spawnBrain } from "../../../testkit/brain.js";
import { scripted } from "../../../testkit/turns.js";
import { until } from "../../../testkit/wait.js";

const BUDGET = 1000;
let brain: SpawnedBrain;
let client: Brain;
beforeAll(async () => {
  brain = await spawnBrain({ env: { BRAIN_MAX_EMITTED_BYTES: String(BUDGET) } });
  client = new Brain({ url: brain.url, token: brain.token });
});
afterAll(async () => {
  await client?.close();
  await brain?.close();
});

/** A tool that returns at once and hands its context to the test. */
function backgroundTool(holder: { ctx?: ToolContext }) {
  return tool({
    name: "bg",
    description: "Keeps working after it returns.",
    input: z.object({}),
    run: async (_input, ctx) => {
      holder.ctx = ctx as ToolContext;
    },
  });
}

describe("BRAIN_MAX_EMITTED_BYTES", () => {
  it("events and results share one budget per activation; the emission that would exceed it is rejected and journaled", async () => {
    const holder: { ctx?: ToolContext } = {};
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "bg", input: {} }] }, { text: "returned" }),
      tools: [backgroundTool(holder)()],
    });
    expect(await session.send("go")).toBe("returned");
    const ctx = holder.ctx!;
    const data = { pad: "x".repeat(82) }; // kind "progress" (8 bytes) + payload {"pad":"…"} (92) = 100
    let accepted = 0;
    let rejection: unknown;
    for (let i = 0; i < 20 && !rejection; i++) {
      try {
        await ctx.emit("progress", data);
        accepted++;
      } catch (error) {
        rejection = error;
      }
    }
    expect(rejection).toBeInstanceOf(BrainError);
    expect((rejection as BrainError).code).toBe("budget_exceeded");
    expect(accepted * 100).toBeLessThanOrEqual(BUDGET);
    expect(accepted).toBe(BUDGET / 100);
    // A result counts against the same budget; refused, it ends the call budget_exceeded.
    await expect(ctx.emitResult({ more: "y".repeat(10) })).rejects.toMatchObject({ code: "budget_exceeded" });
    expect(ctx.signal.aborted).toBe(true);
    // The call's first refusal is journaled; the call's row counts them all.
    const rejected = await brain.db.sql`
      SELECT payload FROM journal WHERE session_id = ${session.id} AND kind = 'emission_rejected' ORDER BY seq`;
    expect(rejected.map((r) => r.payload)).toEqual([
      expect.objectContaining({ kind: "progress", bytes: 100, code: "budget_exceeded" }),
    ]);
    const [call] = await brain.db.sql`SELECT emissions_refused FROM tool_calls WHERE session_id = ${session.id}`;
    expect(call?.emissions_refused).toBe(2);
    // Nothing of the rejected emissions is in the journal.
    const [events] = await brain.db.sql`
      SELECT count(*)::int AS n FROM journal WHERE session_id = ${session.id} AND kind = 'progress'`;
    expect(events!.n).toBe(accepted);
    const [ended] = await brain.db.sql`SELECT outcome FROM tool_calls WHERE session_id = ${session.id}`;
    expect(ended?.outcome).toMatchObject({ status: "error", error: { code: "budget_exceeded" } });
    await expect(ctx.finish()).rejects.toMatchObject({ code: "execution_finished" });
  });

  it("thousands of refused emissions cost one journal record; each is still refused with budget_exceeded", async () => {
    const holder: { ctx?: ToolContext } = {};
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "bg", input: {} }] }, { text: "returned" }),
      tools: [backgroundTool(holder)()],
    });
    expect(await session.send("go")).toBe("returned");
    const ctx = holder.ctx!;
    await ctx.emit("progress", { pad: "x".repeat(BUDGET - 100) });
    const refusals = 3000;
    // Sent without waiting for each other: the refusals race through the writer together.
    const codes = await Promise.all(
      Array.from({ length: refusals }, () =>
        ctx.emit("progress", { pad: "y".repeat(200) }).then(
          () => "accepted",
          (e: BrainError) => e.code,
        ),
      ),
    );
    expect(new Set(codes)).toEqual(new Set(["budget_exceeded"]));
    const [counts] = await brain.db.sql<{ rejected: number; refused: number }[]>`
      SELECT (SELECT count(*)::int FROM journal WHERE session_id = ${session.id} AND kind = 'emission_rejected') AS rejected,
             (SELECT emissions_refused FROM tool_calls WHERE session_id = ${session.id}) AS refused`;
    expect(counts).toEqual({ rejected: 1, refused: refusals });
    await ctx.finish();
  });

  it("a later activation does not renew the budget of a background tool started earlier", async () => {
    const holder: { ctx?: ToolContext } = {};
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "bg", input: {} }] }, { text: "first" }, { text: "second" }),
      tools: [backgroundTool(holder)()],
    });
    expect(await session.send("one")).toBe("first");
    const ctx = holder.ctx!;
    const big = { pad: "x".repeat(BUDGET - 100) };
    await ctx.emit("progress", big);
    expect(await session.send("two")).toBe("second"); // a new activation
    await expect(ctx.emit("progress", big)).rejects.toMatchObject({ code: "budget_exceeded" });
    await ctx.finish();
  });
});

describe("background tools", () => {
  it("a tool that finishes seconds after its turn wakes the Agentloop, which calls the model again", async () => {
    const done: { at?: number } = {};
    const late = tool({
      name: "late",
      description: "Answers two seconds after returning.",
      input: z.object({}),
      run: async (_input, ctx) => {
        setTimeout(async () => {
          await ctx.emit("still_working", {});
          await ctx.finish({ answer: 42 }, { content: "The answer is 42." });
          done.at = Date.now();
        }, 2000);
      },
    });
    const session = await client.sessions.create({
      model: scripted(
        { toolCalls: [{ name: "late", input: {} }] },
        { text: "I'll get back to you" },
        { text: "it is 42" },
      ),
      tools: [late()],
    });
    expect(await session.send("what is it?")).toBe("I'll get back to you");
    // The turn is over while the tool still runs.
    const [open] = await brain.db.sql`SELECT status FROM tool_calls WHERE session_id = ${session.id}`;
    expect(open!.status).toBe("returned");
    const ended = await until("the expected state", async () => {
      const rows = await brain.db.sql`
        SELECT seq, kind, payload FROM journal WHERE session_id = ${session.id} ORDER BY seq`;
      return rows.some((r) => r.kind === "activation_ended" && r.payload.text === "it is 42") ? rows : undefined;
    });
    expect(done.at).toBeDefined();
    const kinds = ended.map((r) => r.kind);
    const result = kinds.lastIndexOf("tool_result");
    const wake = kinds.lastIndexOf("activation_started");
    expect(result).toBeGreaterThan(-1);
    // The result was committed before the activation it woke.
    expect(wake).toBeGreaterThan(result);
    expect(ended[wake]!.payload).toMatchObject({ cause: "observations", observations: [ended[result]!.seq] });
    const [call] = await brain.db.sql`SELECT status, outcome FROM tool_calls WHERE session_id = ${session.id}`;
    expect(call).toMatchObject({ status: "ended", outcome: { status: "ok", value: { answer: 42 } } });
  });

  it("extension events alone do not call the model; the loop waits for a result or the user", async () => {
    const holder: { ctx?: ToolContext } = {};
    const session = await client.sessions.create({
      model: scripted({ toolCalls: [{ name: "bg", input: {} }] }, { text: "ok" }, { text: "unexpected" }),
      tools: [backgroundTool(holder)()],
    });
    expect(await session.send("go")).toBe("ok");
    await holder.ctx!.emit("heartbeat", { n: 1 });
    await new Promise((r) => setTimeout(r, 100));
    const [n] = await brain.db.sql`
      SELECT count(*)::int AS n FROM journal WHERE session_id = ${session.id} AND kind = 'model_call_started'`;
    expect(n!.n).toBe(2);
    await holder.ctx!.finish();
  });
});
